package index

import (
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

func sealProject(t *testing.T) (*Project, map[string]*File) {
	t.Helper()
	return testProject(t, "/proj", map[string]string{
		"pkg/__init__.py": "from .ops import run as go\nfrom .cyc import a\n",
		"pkg/ops.py":      "import torch\nfrom torch import cuda\nalias = torch.cuda\ndef run(x):\n    return x\nclass K:\n    pass\nN = 4\n",
		"pkg/cyc.py":      "from .cyc2 import b as a\n",
		"pkg/cyc2.py":     "from .cyc import a as b\n",
	})
}

// testProject parses srcs (relative path -> source) as files under root, in
// path order, and returns their project and the files by relative path.
func testProject(t *testing.T, root string, srcs map[string]string) (*Project, map[string]*File) {
	t.Helper()
	rels := make([]string, 0, len(srcs))
	for rel := range srcs {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	var files []*File
	byPath := map[string]*File{}
	for _, rel := range rels {
		tree, err := syntax.Parse([]byte(srcs[rel]))
		if err != nil {
			t.Fatal(err)
		}
		abs := filepath.Join(root, rel)
		f := NewFile(rel, abs, ModuleName(abs, root), []byte(srcs[rel]), tree)
		files = append(files, f)
		byPath[rel] = f
	}
	return NewProject(files), byPath
}

// After Seal, ResolveName writes nothing: the rules call it from every
// core at once (an unsealed memo crashed a run with "concurrent map
// writes"), and a builtin or a module-level name gives the answer an
// unsealed project gives.
func TestResolveNameSealed(t *testing.T) {
	p, files := sealProject(t)
	p.Seal()
	before := len(p.static)
	fresh, freshFiles := sealProject(t)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, f := range files {
				for _, name := range append([]string{"len", "torch_missing", "__name__"}, f.TopNames...) {
					p.ResolveName(f, name)
				}
			}
		}()
	}
	wg.Wait()
	if after := len(p.static); after != before {
		t.Fatalf("ResolveName wrote the sealed memo: %d entries before, %d after", before, after)
	}
	for rel, f := range files {
		for _, name := range append([]string{"len", "__name__"}, f.TopNames...) {
			got, want := p.ResolveName(f, name), fresh.ResolveName(freshFiles[rel], name)
			if got.Kind != want.Kind || got.External != want.External {
				t.Errorf("%s: %s resolves to kind %v %q sealed, %v %q unsealed", rel, name, got.Kind, got.External, want.Kind, want.External)
			}
		}
	}
}
