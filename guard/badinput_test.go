package guard

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Bad input gets a clear per-file error naming the file, never a crash, and
// the other files are still checked.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deep := "import torch\nx = " + strings.Repeat("(", 20000) + "1" + strings.Repeat(")", 20000) + "\n"
	good := "import torch\n\ndef f(g, x):\n    with torch.cuda.graph(g):\n        y = x.item()\n"
	write("latin1.py", []byte("# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9'\n"))
	write("binary.py", []byte("torch\x00\x01\x02"))
	write("empty.py", nil)
	write("deep.py", []byte(deep))
	write("syntax.py", []byte(good+"\ndef broken(:\n    pass\n"))
	write("bom.py", append([]byte("\xef\xbb\xbf"), good...))
	write("crlf.py", []byte(strings.ReplaceAll(good, "\n", "\r\n")))
	write("sp ace/ünï code.py", []byte(good))
	// UTF-8 up to a Latin-1 line: named at the first bad byte.
	write("mixed.py", []byte("import torch\nname = 'café'\nother = 'caf\xe9'\n"))
	// A NUL inside otherwise good source.
	write("nul.py", []byte(good+"s = 'a\x00b'\n"))
	// 50 MB: over the default limit, refused from its size without reading
	// it (the file is sparse; read, it would be 50 MB of NULs).
	huge := write("huge.py", nil)
	if err := os.Truncate(huge, 50<<20); err != nil {
		t.Fatal(err)
	}
	// A named pipe would block a read forever.
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "dir.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	// A file symlink loop: a.py -> b.py -> a.py.
	if err := os.Symlink("b_loop.py", filepath.Join(dir, "a_loop.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a_loop.py", filepath.Join(dir, "b_loop.py")); err != nil {
		t.Fatal(err)
	}
	res, err := Run(Options{Paths: []string{dir, filepath.Join(dir, "missing.py"), filepath.Join(dir, "dir.py", "..", "empty.py")}})
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]string{}
	for _, e := range res.Errors {
		errs[filepath.Base(e.Path)] = e.Message
	}
	for name, want := range map[string]string{
		"latin1.py":  "not valid UTF-8 (line 3",
		"binary.py":  "binary file",
		"syntax.py":  "syntax error at line 7",
		"missing.py": "no such file",
		"mixed.py":   "not valid UTF-8 (line 3, column 13)",
		"nul.py":     "binary file (NUL byte at offset",
		"huge.py":    "50.0 MiB, over the 10 MiB file size limit; not checked",
		"pipe.py":    "not a regular file (a named pipe)",
		"a_loop.py":  "too many levels of symbolic links",
	} {
		if !strings.Contains(errs[name], want) {
			t.Errorf("%s: error %q, want it to contain %q (all: %v)", name, errs[name], want, errs)
		}
	}
	found := map[string]int{}
	for _, d := range res.Diagnostics {
		found[filepath.Base(d.Path)]++
		if d.Rule.ID == "CG101" && d.Start.Line != 5 {
			t.Errorf("%s: CG101 at line %d, want 5", d.Path, d.Start.Line)
		}
	}
	for _, name := range []string{"bom.py", "crlf.py", "ünï code.py", "syntax.py"} {
		if found[name] == 0 {
			t.Errorf("%s: no finding; the file should still be analysed", name)
		}
	}
	if _, ok := errs["deep.py"]; ok && !strings.Contains(errs["deep.py"], "syntax") {
		t.Errorf("deep.py: %s", errs["deep.py"])
	}
}

func TestBOMColumns(t *testing.T) {
	src := append([]byte("\xef\xbb\xbf"), "import torch\nx = 1\n"...)
	tr, err := Parse(src)
	if err != nil || tr.Syntax != "" {
		t.Fatalf("BOM file: err %v syntax %q", err, tr.Syntax)
	}
	first := tr.Root.NamedChildren()[0]
	if got := first.Text(src); got != "import torch" {
		t.Fatalf("first statement %q, want %q", got, "import torch")
	}
}

func TestParseOKMissingToken(t *testing.T) {
	for _, src := range []string{"import a as import b\n", "def f(:\n", "x = (1,\n"} {
		if ParseOK([]byte(src)) {
			t.Errorf("ParseOK(%q) = true, want false", src)
		}
	}
	if !ParseOK([]byte("import torch\nx = 1\n")) {
		t.Error("valid source rejected")
	}
}
