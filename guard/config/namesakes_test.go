package config

import (
	"reflect"
	"testing"
)

// TestNamesakes: a preset pattern is restricted to the framework's classes
// only where every preset that names it was turned on by an import alone
// and the config does not name it, whatever the presets' order.
func TestNamesakes(t *testing.T) {
	const shared = "*:*Impl.forward" // vllm's and rtp-llm's
	for _, c := range []struct {
		name     string
		cfg      Config
		want     []string
		restrict bool
	}{
		{"imported alone", Config{Presets: []string{"vllm"}, Imported: map[string]bool{"vllm": true}}, []string{"vllm"}, true},
		{"configured", Config{Presets: []string{"vllm"}}, nil, false},
		{"shared, imported first", Config{Presets: []string{"vllm", "rtp-llm"}, Imported: map[string]bool{"vllm": true}}, nil, false},
		{"shared, imported last", Config{Presets: []string{"rtp-llm", "vllm"}, Imported: map[string]bool{"vllm": true}}, nil, false},
		{"named by the config", Config{Presets: []string{"vllm"}, Imported: map[string]bool{"vllm": true}, EntryPoints: []string{shared}}, nil, false},
	} {
		got, ok := c.cfg.ContextsConfig("/").Namesakes[shared]
		if ok != c.restrict || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Namesakes[%s] = %v (%v), want %v (%v)", c.name, shared, got, ok, c.want, c.restrict)
		}
	}
}
