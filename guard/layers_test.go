package guard

import (
	"os/exec"
	"strings"
	"testing"
)

// layers are guard's packages bottom up (doc.go has the picture): each may
// import only those before it. The compiler refuses a cycle; this keeps the
// order the docs give, so that a change cannot quietly make the rule
// framework depend on a rule, or the value model on the fix model.
var layers = []string{
	"guard/internal/par",
	"guard/internal/fold",
	"guard/torchapi",
	"guard/truth",
	"guard/internal/pyparse",
	"guard/syntax",
	"guard/index",
	"guard/device",
	"guard/capmap",
	"guard/flow",
	"guard/contexts",
	"guard/config",
	"guard/source",
	"guard/analysis",
	"guard/tensors",
	"guard/fixmodel",
	"guard/rules",
	"guard/suppress",
	"guard",
}

// outside are the module's packages guard may import besides its own:
// data below every layer.
var outside = map[string]bool{"templates": true}

const module = "github.com/cudagraph-capguard/capguard/"

func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rank := map[string]int{}
	for i, l := range layers {
		rank[l] = i
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if pkg == "guard/testenv" {
			continue // the tests' helpers
		}
		r, ok := rank[pkg]
		if !ok {
			t.Errorf("%s is in no layer: add it to layers (and to guard/doc.go)", pkg)
			continue
		}
		seen[pkg] = true
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if outside[dep] {
				continue
			}
			if d, ok := rank[dep]; !ok || d >= r {
				t.Errorf("%s imports %s, a layer above it or outside guard", pkg, dep)
			}
		}
	}
	for _, l := range layers {
		if !seen[l] {
			t.Errorf("layer %s has no package", l)
		}
	}
}
