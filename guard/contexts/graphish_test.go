package contexts

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// TestGraphishCoversSettings: graphish, the byte test that lets the
// evidence skip most names before graphSettingRE, holds for every name the
// expression matches (in any case), on the settings' own shapes and on
// random names made of their pieces.
func TestGraphishCoversSettings(t *testing.T) {
	names := []string{"use_cuda_graph", "enable_cudagraphs", "DISABLE_CUDA_GRAPHS", "enforce_eager", "Enforce_Eager",
		"cuda_graph_max_bs", "CudaGraph", "cudagraph", "no_cuda_graph", "with_cudagraph", "graph", "eager", "x", "",
		"graphs_enabled", "use_cuda_gra", "agerly", "ph"}
	pieces := []string{"use_", "enable_", "no_", "enforce_", "eager", "cuda", "_", "graph", "graphs", "GRAPH", "Eager", "x", "gr", "aph", "ea", "ger"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := r.Intn(5); j >= 0; j-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		names = append(names, b.String())
	}
	matched := 0
	for _, name := range names {
		src := []byte(name)
		n := &syntax.Node{Start: 0, End: int32(len(src))}
		re := graphSettingRE.MatchString(strings.ToLower(name))
		if re {
			matched++
		}
		if re && !graphish(n, src) {
			t.Errorf("graphish(%q) = false, but graphSettingRE matches it", name)
		}
		if want := strings.Contains(strings.ToLower(name), "graph") || strings.Contains(strings.ToLower(name), "eager"); graphish(n, src) != want {
			t.Errorf("graphish(%q) = %v, want %v", name, !want, want)
		}
	}
	if matched < 100 {
		t.Fatalf("only %d names match graphSettingRE: the test says nothing", matched)
	}
}
