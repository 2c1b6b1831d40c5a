package patcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/templates"
)

const claimedReader = `import torch
import triton
import triton.language as tl


@triton.jit
def _k(idx_ptr, out_ptr):
    tl.store(out_ptr, tl.load(idx_ptr))


def read(idx, out):
    """Capture-safe reader."""
    _k[(1,)](idx.to(torch.int32), out)
`

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Pattern (g) of issue 18: files of one package import persistent_buffer
// from one shared module at the package's top, written once, instead of
// each carrying a copy; a script outside any package gets the helper's
// source; fixing again changes nothing.
func TestSharedHelperModule(t *testing.T) {
	t.Chdir(t.TempDir())
	writeTree(t, ".", map[string]string{
		"eng/__init__.py": "", "eng/ops/__init__.py": "",
		"eng/ops/a.py": claimedReader, "eng/ops/b.py": claimedReader, "tool.py": claimedReader,
	})
	res, err := Fix(Options{Paths: []string{"eng", "tool.py"}})
	if err != nil {
		t.Fatal(err)
	}
	mod := res.File(filepath.Join("eng", HelperModuleFile))
	if mod == nil || !mod.Created || string(mod.Fixed) != templates.PersistentBuffer {
		t.Fatalf("no shared module created: %v", res.Files)
	}
	if !strings.HasPrefix(mod.Diff, "--- /dev/null\n+++ b/eng/"+HelperModuleFile+"\n@@ -0,0 +1,") {
		t.Errorf("the module's diff does not create it:\n%.200s", mod.Diff)
	}
	for _, p := range []string{"eng/ops/a.py", "eng/ops/b.py"} {
		f := res.File(filepath.FromSlash(p))
		if f == nil || !strings.Contains(string(f.Fixed), "from eng._capguard_buffers import persistent_buffer\n") || strings.Contains(string(f.Fixed), "def persistent_buffer") {
			t.Errorf("%s does not import the shared module", p)
		}
	}
	if f := res.File("tool.py"); f == nil || !strings.Contains(string(f.Fixed), "def persistent_buffer") {
		t.Error("a script outside any package does not get the helper's source")
	}
	if err := res.Write(); err != nil {
		t.Fatal(err)
	}
	again, err := Fix(Options{Paths: []string{"eng", "tool.py"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := again.Diff(); d != "" {
		t.Errorf("fixing again changes:\n%s", d)
	}
	// A file of that name holding something else is left alone: the
	// helper goes into each file.
	writeTree(t, ".", map[string]string{"pkg/__init__.py": "", "pkg/" + HelperModuleFile: "x = 1\n", "pkg/c.py": claimedReader})
	res, err = Fix(Options{Paths: []string{"pkg"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := res.File(filepath.Join("pkg", "c.py")); f == nil || !strings.Contains(string(f.Fixed), "def persistent_buffer") || res.File(filepath.Join("pkg", HelperModuleFile)) != nil {
		t.Error("with another file in the module's place, the helper is not inserted into the file")
	}
}
