package guard

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// badInputGood is a file with one finding (CG101 at line 5).
const badInputGood = "import torch\n\ndef f(g, x):\n    with torch.cuda.graph(g):\n        y = x.item()\n"

// badInputs is the bad input matrix: each case makes one file (or link,
// pipe, folder) in a shared folder and says what the run must report for
// it: an error naming it (err), or findings (findings), or neither.
var badInputs = []struct {
	name     string // the file's name in the folder
	make     func(t *testing.T, path string)
	err      string // a part of its error message; "" for none
	findings bool   // it must still be analysed
}{
	// PEP 263: a declared encoding is decoded, and analysed (findings at
	// positions of the decoded text).
	{"latin1.py", content("# -*- coding: latin-1 -*-\nimport torch\ndef f(g, x):\n    with torch.cuda.graph(g):\n        y = x.item()  # caf\xe9\n"), "", true},
	{"cp1252_undefined.py", content("# coding: cp1252\nimport torch\nname = '\x81'\n"), "not valid cp1252, as its coding declaration says: byte 0x81 is undefined there (line 3, column 9)", false},
	{"unknown_coding.py", content("# coding: klingon\nimport torch\n"), `declares an unknown encoding "klingon"`, false},
	{"bom_latin1.py", content("\xef\xbb\xbf# coding: latin-1\nimport torch\n"), "byte order mark and a coding declaration of latin-1", false},
	// Python 2 source is a syntax error, as Python 3 reads it.
	{"py2.py", content(badInputGood + "print \"x\"\n"), "syntax error at line 6, column 1: print statement (Python 2 syntax", true},
	// UTF-8 up to a Latin-1 line: named at the first bad byte.
	{"mixed.py", content("import torch\nname = 'café'\nother = 'caf\xe9'\n"), "not valid UTF-8 (line 3, column 13)", false},
	{"bom.py", content("\xef\xbb\xbf" + badInputGood), "", true},
	{"crlf.py", content(strings.ReplaceAll(badInputGood, "\n", "\r\n")), "", true},
	{"tabs.py", content(strings.ReplaceAll(badInputGood, "    ", "\t")), "", true},
	{"formfeed.py", content("\f" + badInputGood), "", true},
	{"noeol.py", content(strings.TrimSuffix(badInputGood, "\n")), "", true},
	{"cr.py", content(strings.ReplaceAll(badInputGood, "\n", "\r")), "CR-only line endings", false},
	{"binary.py", content("torch\x00\x01\x02"), "binary file", false},
	// A NUL inside otherwise good source.
	{"nul.py", content(badInputGood + "s = 'a\x00b'\n"), "binary file (NUL byte at offset", false},
	{"empty.py", content(""), "", false},
	// 4,000-deep nesting inside a capture region (so it is parsed and
	// analysed, not skipped by the prefilter): past what CPython compiles,
	// under syntax.MaxDepth.
	{"deep.py", content(badInputGood + "        z = " + strings.Repeat("(", 4000) + "x.item()" + strings.Repeat(")", 4000) + "\n"), "", true},
	// 20,000-deep: past syntax.MaxDepth, refused.
	{"deeper.py", content(badInputGood + "        z = " + strings.Repeat("(", 20000) + "x.item()" + strings.Repeat(")", 20000) + "\n"), "syntax nested 20009 levels deep, past capguard's limit of 5000", false},
	{"syntax.py", content(badInputGood + "\ndef broken(:\n    pass\n"), "syntax error at line 7", true},
	// Valid Python that tree-sitter's grammar reads as a walrus (a format
	// spec with '=' fill): parsed, no error (guard/syntax/divergence.go).
	{"fstring_fill.py", content(badInputGood + "\nw = 9\nt = f'{w:=^{w}}'\n"), "", true},
	{"sp ace/ünï code.py", content(badInputGood), "", true},
	// 50 MB: over the default limit, refused from its size without reading
	// it (the file is sparse; read, it would be 50 MB of NULs).
	{"huge.py", func(t *testing.T, p string) {
		content("")(t, p)
		if err := os.Truncate(p, 50<<20); err != nil {
			t.Fatal(err)
		}
	}, "50.0 MiB, over the 10 MiB file size limit; not checked", false},
	// A named pipe would block a read forever.
	{"pipe.py", func(t *testing.T, p string) {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}, "not a regular file (a named pipe)", false},
	{"dir.py", func(t *testing.T, p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}, "", false},
	// A folder symlink loop is not followed.
	{"loop", func(t *testing.T, p string) {
		if err := os.Symlink(".", p); err != nil {
			t.Fatal(err)
		}
	}, "", false},
	// A file symlink loop: a_loop.py -> b_loop.py -> a_loop.py.
	{"a_loop.py", func(t *testing.T, p string) {
		if err := os.Symlink("b_loop.py", p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("a_loop.py", filepath.Join(filepath.Dir(p), "b_loop.py")); err != nil {
			t.Fatal(err)
		}
	}, "too many levels of symbolic links", false},
	// Named on the command line, missing.
	{"missing.py", func(*testing.T, string) {}, "no such file", false},
}

func content(s string) func(t *testing.T, path string) {
	return func(t *testing.T, p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBadInput makes every bad input of the matrix in one folder and checks
// the folder (and the missing file) in one run: each case gets a clear error
// naming its file, or none, never a crash, and the other files are still
// checked. Each case is a subtest.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range badInputs {
		c.make(t, filepath.Join(dir, c.name))
	}
	res, err := Run(Options{Paths: []string{dir, filepath.Join(dir, "missing.py"), filepath.Join(dir, "dir.py", "..", "empty.py")}})
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]string{}
	for _, e := range res.Errors {
		errs[filepath.Base(e.Path)] = e.Message
	}
	found := map[string]int{}
	for _, d := range res.Diagnostics {
		found[filepath.Base(d.Path)]++
		// badInputGood's finding is on line 5; deep.py adds one on line 6.
		if d.Rule.ID != "CG101" || d.Start.Line != 5 && !(filepath.Base(d.Path) == "deep.py" && d.Start.Line == 6) {
			t.Errorf("%s: %s at line %d, want CG101 at line 5", d.Path, d.Rule.ID, d.Start.Line)
		}
	}
	for _, c := range badInputs {
		t.Run(strings.TrimSuffix(filepath.Base(c.name), ".py"), func(t *testing.T) {
			base := filepath.Base(c.name)
			switch got := errs[base]; {
			case c.err == "" && got != "":
				t.Errorf("unexpected error %q", got)
			case c.err != "" && !strings.Contains(got, c.err):
				t.Errorf("error %q, want it to contain %q", got, c.err)
			}
			if c.findings && found[base] == 0 {
				t.Error("no finding: the file should still be analysed")
			}
		})
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
