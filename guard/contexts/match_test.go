package contexts

import (
	"math/rand"
	"path"
	"testing"
)

// TestGlobMatch compares globMatch with path.Match on the pattern shapes
// it matches itself and on ones it hands to path.Match.
func TestGlobMatch(t *testing.T) {
	patterns := []string{"", "*", "**", "forward", "*Impl.forward", "*.update_params", "vllm._custom_ops.*",
		"torch_npu.npu_*", "*flashinfer.*", "*LayerInfer*.token_forward", "a?c", "[ab]*", `a\*`, "*/x", "x/*", "[", "*["}
	names := []string{"", "forward", "AttnImpl.forward", "Impl.forward", "a/b.forward", "x.update_params", "update_params",
		"vllm._custom_ops.rms_norm", "vllm._custom_ops.", "vllm._custom_ops.a/b", "torch_npu.npu_add", "torch_npu.npu",
		"abc", "a*", "x/y", "x/", "/x", "a.flashinfer.b", "LlamaLayerInfer.token_forward"}
	r := rand.New(rand.NewSource(1))
	const alpha = "ab*/.?x"
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.Intn(6))
		for j := range b {
			b[j] = alpha[r.Intn(len(alpha))]
		}
		if i%2 == 0 {
			patterns = append(patterns, string(b))
		} else {
			names = append(names, string(b))
		}
	}
	for _, p := range patterns[:40] {
		for _, n := range names {
			want, _ := path.Match(p, n)
			if got := globMatch(p, n); got != want {
				t.Errorf("globMatch(%q, %q) = %v, path.Match says %v", p, n, got, want)
			}
		}
	}
	for i, p := range patterns {
		n := names[i%len(names)]
		want, _ := path.Match(p, n)
		if got := globMatch(p, n); got != want {
			t.Errorf("globMatch(%q, %q) = %v, path.Match says %v", p, n, got, want)
		}
	}
}

// TestMayClaim: mayClaim holds wherever claimRE matches.
func TestMayClaim(t *testing.T) {
	for _, s := range []string{"CUDA graph safe", "graph-capture-compatible", "Capture friendly", "safe for cuda graph capture",
		"SAFE TO CAPTURE", "graph ſafe", "cudagraph_compatible", "nothing here", "unsafe", "safe", "capture_FRIENDLY"} {
		if claimRE.MatchString(s) && !mayClaim(s) {
			t.Errorf("claimRE matches %q, mayClaim says no", s)
		}
	}
	if !claimRE.MatchString("graph ſafe") {
		t.Fatal("claimRE no longer folds U+017F: mayClaim's note is stale")
	}
	if mayClaim("a docstring about tensors") {
		t.Error("mayClaim holds for text with no claim word")
	}
}

// BenchmarkGlobMatch matches preset-shaped patterns against method names.
func BenchmarkGlobMatch(b *testing.B) {
	patterns := []string{"*Impl.forward", "*.update_params", "*LayerInfer*.token_forward", "forward"}
	names := []string{"AttnImpl.forward", "Model.forward", "LlamaLayerInfer.token_forward", "Runner.capture", "x.update_params"}
	for i := 0; i < b.N; i++ {
		for _, p := range patterns {
			for _, n := range names {
				globMatch(p, n)
			}
		}
	}
}

// BenchmarkClaim runs the claim test on a docstring without a claim, the
// common case.
func BenchmarkClaim(b *testing.B) {
	doc := `"""Apply rotary embeddings to the query and key tensors in place.

    Args:
        q: the query, [tokens, heads, dim]
        k: the key, [tokens, kv_heads, dim]
    """`
	for i := 0; i < b.N; i++ {
		_ = mayClaim(doc) && claimRE.MatchString(doc)
	}
}

// TestClaimsSafety: a claim is read with its own clause; a negation there
// turns it around, one in another sentence does not.
func TestClaimsSafety(t *testing.T) {
	for s, want := range map[string]bool{
		"Capture-safe: no host syncs.":                                true,
		"CUDA graph capture safe (no syncs).":                         true,
		"Graph-safe reader. The fallback is not used.":                true,
		"Capture-safe. Not safe for multi-stream use.":                true,
		"This kernel is not CUDA-graph capture safe.":                 false,
		"Not safe for CUDA graph capture.":                            false,
		"Unsafe for CUDA graph capture.":                              false,
		"This op isn't CUDA graph compatible.":                        false,
		"It cannot be made CUDA graph safe.":                          false,
		"No longer capture-safe since the host gather was added.":     false,
		"Requires host code that is not\n    graph-safe (it syncs).":  false,
		"Reads torch.cuda state, which is never graph-safe to query.": false,
		"Make generator state safe for CUDA graph capture/replay.":    false,
		"Ensures the buffers stay capture-safe across steps.":         false,
		"Keeps CUDA-graph-safe pointers for later captures.":          false,
		"Capture-safe: makes no host copies.":                         true,
		"# TODO: CUDA graph compatible version":                       false,
		"FIXME: make the gather graph-safe.":                          false,
		"Is designed to be CUDA graph compatible (future work).":      false,
		"Capture-safe. TODO: drop the second copy.":                   true,
		"Prepare CUDA-graph-compatible grouped GEMM device work.":     false,
		"Build graph-safe grouped input storage and run the GEMM.":    false,
		"Returns whether cuda graph safe RNG state is supported.":     false,
		"\"\"\"Builds a capture-safe plan for the decode step.":       false,
		"Creates no temporaries, so it is capture safe.":              true,
		"Builds the plan. Capture-safe: no host syncs.":               true,
	} {
		if got := mayClaim(s) && claimsSafety(s); got != want {
			t.Errorf("claimsSafety(%q) = %v, want %v", s, got, want)
		}
	}
}
