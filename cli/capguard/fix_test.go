package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// runFixCLI runs `capguard fix args...` and returns stdout, stderr and the
// exit code.
func runFixCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	stdout, stderr, code, _ := runApp(t, append([]string{"fix"}, args...)...)
	return stdout, stderr, code
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	if err := os.WriteFile(to, data, 0o640); err != nil {
		t.Fatal(err)
	}
}

func TestFixCommand(t *testing.T) {
	t.Chdir("../..")
	const reader = "testdata/readers/bf16_index_reader.py"
	golden, err := os.ReadFile("testdata/fix/readers.golden")
	if err != nil {
		t.Fatal(err)
	}

	// Diff mode: the golden diff on stdout, a summary on stderr, exit 1.
	stdout, stderr, code := runFixCLI(t, "testdata/readers")
	if code != 1 || stdout != string(golden) {
		t.Errorf("exit %d, stdout differs from testdata/fix/readers.golden:\n%s", code, stdout)
	}
	if strings.Contains(stderr, "CG301 x3") || !strings.Contains(stderr, "Would fix 3 findings in 1 file") {
		t.Errorf("summary:\n%s", stderr)
	}
	// --show-fixes lists them per file.
	if _, stderr, _ := runFixCLI(t, "--show-fixes", "testdata/readers"); !strings.Contains(stderr, "CG301 x3; persistent_buffer helper inserted") ||
		!strings.Contains(stderr, "34:20 CG301 (safe): ") {
		t.Errorf("--show-fixes summary:\n%s", stderr)
	}

	// --write on a copy gives what patch -p1 makes of the printed diff; then
	// there is nothing left to fix.
	dir := t.TempDir()
	for _, sub := range []string{"write", "patch"} {
		copyFile(t, reader, filepath.Join(dir, sub, reader))
	}
	func() {
		cwd, _ := os.Getwd()
		defer os.Chdir(cwd)
		if err := os.Chdir(filepath.Join(dir, "write")); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runFixCLI(t, "--write", "testdata/readers")
		if code != 0 || stdout != "" || !strings.Contains(stderr, "Fixed 3 findings in 1 file") {
			t.Errorf("--write: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		stdout, _, code = runFixCLI(t, "testdata/readers")
		if code != 0 || stdout != "" {
			t.Errorf("fix after --write: exit %d, stdout:\n%s", code, stdout)
		}
	}()
	if _, err := exec.LookPath("patch"); err == nil {
		cmd := exec.Command("patch", "-p1", "--quiet")
		cmd.Dir = filepath.Join(dir, "patch")
		cmd.Stdin = bytes.NewReader(golden)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch -p1: %v\n%s", err, out)
		}
		written, _ := os.ReadFile(filepath.Join(dir, "write", reader))
		patched, _ := os.ReadFile(filepath.Join(dir, "patch", reader))
		if !bytes.Equal(written, patched) {
			t.Error("--write and patch -p1 of the printed diff give different bytes")
		}
		if fi, _ := os.Stat(filepath.Join(dir, "write", reader)); fi.Mode().Perm() != 0o640 {
			t.Errorf("--write changed the mode to %v", fi.Mode().Perm())
		}
	}

	// Nothing to fix: exit 0, no output.
	stdout, _, code = runFixCLI(t, "testdata/negatives")
	if code != 0 || stdout != "" {
		t.Errorf("negatives: exit %d, stdout %q", code, stdout)
	}
	// --select a rule without findings there: nothing to fix.
	if stdout, _, code = runFixCLI(t, "--select", "CG1", "testdata/readers"); code != 0 || stdout != "" {
		t.Errorf("--select CG1: exit %d, stdout %q", code, stdout)
	}
	// --ignore CG301 leaves the reader alone too.
	if stdout, _, code = runFixCLI(t, "--ignore", "CG301,CG302", "testdata/readers"); code != 0 || stdout != "" {
		t.Errorf("--ignore CG301: exit %d, stdout %q", code, stdout)
	}
}

func TestFixCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.py")
	src := "import torch\ndef f(q:\n    return q.contiguous()\n"
	os.WriteFile(bad, []byte(src), 0o644)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"no/such/file.py"}, 2},
		{[]string{"--select", "XX9", bad}, 2},
		{[]string{"--preset", "tensorrt", bad}, 2},
		{[]string{"--write", "--diff", bad}, 2},
		// A syntax error is a finding about the file, as in check: 1.
		{[]string{"--write", bad}, 1},
		{[]string{bad}, 1},
	} {
		if _, stderr, code := runFixCLI(t, c.args...); code != c.code {
			t.Errorf("capguard fix %v: exit %d, want %d\n%s", c.args, code, c.code, stderr)
		}
	}
	if got, _ := os.ReadFile(bad); string(got) != src {
		t.Error("--write touched a file with a syntax error")
	}
}

// fix --write over a folder of bad input: files it cannot round-trip are
// left byte for byte, the others are fixed keeping their BOM and line
// endings, the errors name the files, and the exit status is 1 (syntax
// errors and files that cannot be decoded are findings that remain).
func TestFixWriteBadInput(t *testing.T) {
	dir := t.TempDir()
	reader := "import torch\n\n\ndef read(q, seq_lens):\n    \"\"\"Capture-safe.\"\"\"\n    sl = seq_lens.to(torch.int32)\n    _kernel[(1,)](q, sl)\n\n\nimport triton\n\n\n@triton.jit\ndef _kernel(q, sl):\n    pass\n"
	files := map[string]string{
		"latin1.py":  "# -*- coding: latin-1 -*-\n" + reader + "s = 'caf\xe9'\n",
		"notutf8.py": reader + "s = 'caf\xe9'\n",
		"syntax.py":  reader + "def broken(:\n    pass\n",
		"nul.py":     reader + "s = 'a\x00b'\n",
		"bom.py":     "\xef\xbb\xbf" + strings.ReplaceAll(reader, "\n", "\r\n"),
		"plain.py":   reader,
		"tabs.py":    strings.ReplaceAll(reader, "    ", "\t"),
		"noeol.py":   "\f" + strings.TrimSuffix(reader, "\n"),
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, code := runFixCLI(t, "--write", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, stderr)
	}
	for _, name := range []string{"notutf8.py", "syntax.py", "nul.py"} {
		got, _ := os.ReadFile(filepath.Join(dir, name))
		if string(got) != files[name] {
			t.Errorf("%s was altered", name)
		}
		if !strings.Contains(stderr, name) {
			t.Errorf("stderr does not name %s:\n%s", name, stderr)
		}
	}
	for _, name := range []string{"bom.py", "plain.py", "tabs.py", "noeol.py", "latin1.py"} {
		got, _ := os.ReadFile(filepath.Join(dir, name))
		if string(got) == files[name] || !strings.Contains(string(got), "persistent_buffer(") {
			t.Errorf("%s was not fixed:\n%s", name, got)
		}
		if name == "latin1.py" && !bytes.HasSuffix(got, []byte("s = 'caf\xe9'\n")) {
			t.Errorf("latin1.py was not written back in Latin-1:\n%q", got)
		}
		if name == "bom.py" {
			if !bytes.HasPrefix(got, []byte("\xef\xbb\xbf")) || bytes.Count(got, []byte("\n")) != bytes.Count(got, []byte("\r\n")) {
				t.Errorf("bom.py lost its BOM or CRLF line endings:\n%q", got)
			}
		}
		if err := testenv.PyCompile(t, filepath.Join(dir, name)); err != nil {
			t.Errorf("%s does not compile after the fix: %v", name, err)
		}
	}
}

// fix --write writes what it can: a read-only file keeps its bytes and is
// named with the reason, the other file is fixed, the summary counts only
// what reached the disk, and the exit status is 2.
func TestFixWriteReadOnlyFile(t *testing.T) {
	dir := t.TempDir()
	reader := "import torch\n\n\ndef read(q, seq_lens):\n    \"\"\"Capture-safe.\"\"\"\n    sl = seq_lens.to(torch.int32)\n    _kernel[(1,)](q, sl)\n\n\nimport triton\n\n\n@triton.jit\ndef _kernel(q, sl):\n    pass\n"
	ro, rw := filepath.Join(dir, "a_ro.py"), filepath.Join(dir, "b_rw.py")
	os.WriteFile(ro, []byte(reader), 0o444)
	os.WriteFile(rw, []byte(reader), 0o644)
	_, stderr, code := runFixCLI(t, "--write", dir)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if got, _ := os.ReadFile(ro); string(got) != reader {
		t.Error("the read-only file was changed")
	}
	if got, _ := os.ReadFile(rw); string(got) == reader {
		t.Error("the writable file was not fixed")
	}
	for _, want := range []string{"error: " + ro + ": read-only (mode -r--r--r--); not written (1 fix not applied)", "Fixed 1 finding in 1 file"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
