package main

import (
	"os"
	"strings"
	"testing"
)

// Every Python file's syntax errors are reported (exit 1) at CPython's
// line, whether or not it holds anything capture-related.
func TestSyntaxErrorsEveryFile(t *testing.T) {
	t.Chdir(t.TempDir())
	os.Mkdir(".git", 0o755)
	os.WriteFile("plain.py", []byte("import os\n\n\ndef f(x):\n    return os.path.join(x,\n\n\ny = 2\n"), 0o644)
	os.WriteFile("indent.py", []byte("def h():\n  return 1\n    y = 2\n"), 0o644)
	os.WriteFile("cap.py", []byte("import torch\nx = [1,\n     2\ny = 3\ng = torch.cuda.CUDAGraph()\n"), 0o644)
	_, stderr, code, _ := runApp(t, "check", "--no-cache", ".")
	for _, want := range []string{
		"plain.py: error: syntax error at line 5, column 24: '(' was never closed",
		"indent.py: error: syntax error at line 3, column 5: unexpected indent",
		"cap.py: error: syntax error at line 2, column 5: '[' was never closed",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("missing %q:\n%s", want, stderr)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}
