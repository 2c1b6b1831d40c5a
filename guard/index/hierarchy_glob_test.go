package index

import "testing"

func TestGlobName(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"transformers.*Model", "transformers.GPT2Model", true},
		{"transformers.*Model", "transformers.models.gpt2.modeling_gpt2.GPT2Model", true},
		{"transformers.*Model", "transformers.GPT2Config", false},
		{"transformers.*For*", "transformers.LlamaForCausalLM", true},
		{"transformers.*For*", "transformers.LlamaConfig", false},
		{"transformers.models.*.modeling_*.*", "transformers.models.llama.modeling_llama.LlamaAttention", true},
		{"transformers.models.*.modeling_*.*", "transformers.models.llama.configuration_llama.LlamaConfig", false},
		{"diffusers.Autoencoder*", "diffusers.AutoencoderKL", true},
		{"diffusers.Autoencoder*", "transformers.AutoencoderKL", false},
		{"a.B", "a.B", true},
		{"a.B", "a.BC", false},
	} {
		if got := globName(c.pattern, c.name); got != c.want {
			t.Errorf("globName(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}
