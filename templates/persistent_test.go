package templates

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to test the Python templates")
	}
	return p
}

func TestPersistentBufferCompiles(t *testing.T) {
	cfile := filepath.Join(t.TempDir(), "persistent_buffer.pyc")
	script := "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)"
	out, err := exec.Command(python(t), "-c", script, "persistent_buffer.py", cfile).CombinedOutput()
	if err != nil {
		t.Fatalf("py_compile persistent_buffer.py: %v\n%s", err, out)
	}
}

func TestPersistentBufferIsASCII(t *testing.T) {
	// The fixer inserts it into files of any declared encoding.
	for i, r := range PersistentBuffer {
		if r > 0x7e || (r < 0x20 && r != '\n') {
			t.Fatalf("byte %d: %q is not printable ASCII", i, r)
		}
	}
}

func TestPersistentBufferInline(t *testing.T) {
	in := PersistentBufferInline()
	if !strings.HasPrefix(in, "# ") {
		t.Errorf("inline helper should open with its comment, got %q", in[:min(40, len(in))])
	}
	if !strings.Contains(in, "\ndef "+PersistentBufferName+"(site, src, dtype=None, copy=False):\n") {
		t.Error("inline helper lacks the function definition")
	}
	if strings.Contains(in, "import torch") || strings.Contains(in, "Limits:") {
		t.Error("inline helper carries the module's import or docstring")
	}
	if !strings.HasSuffix(in, "return out\n") || strings.HasSuffix(in, "\n\n") {
		t.Errorf("inline helper should end with one newline after the return, got %q", in[max(0, len(in)-20):])
	}
}

// TestPersistentBufferBehaviour runs testdata/test_persistent_buffer.py (a
// fake torch, no GPU) on the module and on the inline form the fixer inserts.
func TestPersistentBufferBehaviour(t *testing.T) {
	inline := filepath.Join(t.TempDir(), "inline_helper.py")
	if err := os.WriteFile(inline, []byte("import torch\n\n\n"+PersistentBufferInline()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, helper := range []string{"persistent_buffer.py", inline} {
		abs, err := filepath.Abs(helper)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(python(t), "test_persistent_buffer.py", abs)
		cmd.Dir = "testdata"
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", helper, err, out)
		}
	}
}
