package contexts

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// A Compute whose Config.Canceled says true at any of its questions
// returns a Result with only Canceled set; one asked after its last
// question, or never told, returns the whole result.
func TestComputeCanceled(t *testing.T) {
	files := map[string]string{
		"runner.py":  "import torch\n\nfrom sampler import sample\n\n\ndef capture(g, logits):\n    with torch.cuda.graph(g):\n        return sample(logits)\n",
		"sampler.py": "def sample(logits):\n    return pick(logits)\n\n\ndef pick(logits):\n    return logits.argmax(-1).tolist()\n",
	}
	var ifiles []*index.File
	for _, p := range []string{"runner.py", "sampler.py"} {
		tree, err := syntax.Parse([]byte(files[p]))
		if err != nil {
			t.Fatal(err)
		}
		abs := filepath.Join("/proj", p)
		ifiles = append(ifiles, index.NewFile(p, abs, index.ModuleName(abs, "/proj"), []byte(files[p]), tree))
	}
	p := index.NewProject(ifiles)
	g := flow.Analyze(p, flow.Options{})
	reached := func(r *Result) []string {
		var out []string
		for fn, cs := range r.Reached {
			if cs[Captured] != nil {
				out = append(out, fn.FullName())
			}
		}
		slices.Sort(out)
		return out
	}
	want := reached(Compute(p, g, Config{}))
	if !slices.Equal(want, []string{"sampler.pick", "sampler.sample"}) {
		t.Fatalf("captured without Canceled: %v, want sampler.pick and sampler.sample", want)
	}
	asked := 0
	full := Compute(p, g, Config{Canceled: func() bool { asked++; return false }})
	if full.Canceled || !slices.Equal(reached(full), want) {
		t.Fatalf("never canceled: canceled %v, captured %v, want %v", full.Canceled, reached(full), want)
	}
	// Files, passes and every level of the three propagations.
	if asked < 6 {
		t.Fatalf("Canceled asked %d times; want one question a file and between the passes", asked)
	}
	for after := 0; after < asked; after++ {
		n := 0
		r := Compute(p, g, Config{Canceled: func() bool { n++; return n > after }})
		if !r.Canceled || len(r.Reached) != 0 || len(r.Regions) != 0 {
			t.Errorf("canceled at question %d: Canceled %v, %d reached, %d regions; want only Canceled", after+1, r.Canceled, len(r.Reached), len(r.Regions))
		}
	}
}
