package guard

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

func TestDeclaredEncoding(t *testing.T) {
	for src, want := range map[string]string{
		"x = 1\n":                     "",
		"# -*- coding: latin-1 -*-\n": "latin-1",
		"#!/usr/bin/env python\n# coding=cp1252\n": "cp1252",
		"# vim: set fileencoding=koi8-r :\n":       "koi8-r",
		"\xef\xbb\xbf# coding: utf-8\n":            "utf-8",
		"import os\n# coding: latin-1\n":           "", // the second line counts only after a comment
		"\n# coding: latin-1\n":                    "latin-1",
		"#\n#\n# coding: latin-1\n":                "", // third line
		"s = '# coding: latin-1'\n":                "",
	} {
		if got := DeclaredEncoding([]byte(src)); got != want {
			t.Errorf("DeclaredEncoding(%q) = %q, want %q", src, got, want)
		}
	}
}

func TestDecodeSource(t *testing.T) {
	for _, c := range []struct {
		src, want, err string
	}{
		{"x = 'caf\xc3\xa9'\n", "x = 'caf\xc3\xa9'\n", ""},
		{"\xef\xbb\xbfx = 1\n", "\xef\xbb\xbfx = 1\n", ""}, // UTF-8 is returned as it is, BOM kept
		{"# coding: latin-1\nx = 'caf\xe9'\n", "# coding: latin-1\nx = 'caf\xc3\xa9'\n", ""},
		{"# coding: ISO_8859_1\nx = '\xe9'\n", "# coding: ISO_8859_1\nx = '\xc3\xa9'\n", ""},
		{"# coding: cp1252\nx = '\x80'\n", "# coding: cp1252\nx = '\xe2\x82\xac'\n", ""}, // the euro sign
		{"# coding: koi8-r\nx = '\xc1'\n", "# coding: koi8-r\nx = '\xd0\xb0'\n", ""},
		{"# coding: shift_jis\nx = '\x82\xa0'\n", "# coding: shift_jis\nx = '\xe3\x81\x82'\n", ""},
		{"# coding: latin-1\nx = 1\n", "# coding: latin-1\nx = 1\n", ""},
		{"x = 'caf\xe9'\n", "", "not valid UTF-8 (line 1, column 9)"},
		{"# coding: utf-8\nx = '\xe9'\n", "", "not valid utf-8, as its coding declaration says (line 2, column 6)"},
		{"# coding: ascii\nx = '\xe9'\n", "", "byte 0xe9 is not valid ascii (line 2, column 6)"},
		{"# coding: cp1252\nok = 1\nx = '\x81'\n", "", "not valid cp1252, as its coding declaration says: byte 0x81 is undefined there (line 3, column 6)"},
		{"# coding: nope\n", "", `declares an unknown encoding "nope"`},
		{"\xef\xbb\xbf# coding: latin-1\n", "", "byte order mark"},
	} {
		got, _, err := DecodeSource([]byte(c.src))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("DecodeSource(%q): error %v, want %q", c.src, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("DecodeSource(%q): %v", c.src, err)
		case c.err == "" && string(got) != c.want:
			t.Errorf("DecodeSource(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

// Every encoding capguard decodes round-trips: decoded then encoded again,
// a file's bytes are what they were (the patcher writes fixes so).
func TestEncodeSourceRoundTrip(t *testing.T) {
	for enc, body := range map[string]string{
		"latin-1": "x = 'caf\xe9 \xff'\n", "cp1252": "x = '\x80\x9f'\n", "koi8-r": "x = '\xc1\xc2'\n",
		"iso-8859-5": "x = '\xb0'\n", "shift_jis": "x = '\x82\xa0\x82\xa2'\n", "euc-jp": "x = '\xa4\xa2'\n",
		"gbk": "x = '\xc4\xe3'\n", "big5": "x = '\xa4\xa4'\n", "euc-kr": "x = '\xb0\xa1'\n", "mac-roman": "x = '\x8e'\n",
	} {
		raw := []byte("# -*- coding: " + enc + " -*-\n" + body)
		text, name, err := DecodeSource(raw)
		if err != nil {
			t.Errorf("%s: %v", enc, err)
			continue
		}
		back, err := EncodeSource(text, name)
		if err != nil || !bytes.Equal(back, raw) {
			t.Errorf("%s: round trip gives %q (%v), want %q", enc, back, err, raw)
		}
	}
	if _, err := EncodeSource([]byte("# coding: latin-1\nx = '\xe2\x82\xac'\n"), "latin-1"); err == nil {
		t.Error("latin-1 encoded a euro sign")
	}
}

// capguard decodes every standard-library file that declares an encoding
// other than UTF-8 exactly as Python does (tokenize.detect_encoding, then
// the codec), and refuses those Python refuses.
func TestDecodeSourceAgreesWithPython(t *testing.T) {
	stdlib := testenv.StdlibDir()
	if stdlib == "" {
		t.Skip("no standard library found")
	}
	script := `
import json, sys, tokenize, os
out = {}
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        if not f.endswith(".py"):
            continue
        p = os.path.join(d, f)
        raw = open(p, "rb").read()
        try:
            raw.decode("utf-8")
            if b"coding" not in raw[:400]:
                continue
        except UnicodeDecodeError:
            pass
        try:
            enc, _ = tokenize.detect_encoding(iter(raw.splitlines(True)).__next__)
            if enc in ("utf-8", "utf-8-sig"):
                continue
            out[p] = raw.decode(enc)
        except (SyntaxError, UnicodeDecodeError, LookupError):
            out[p] = None
json.dump(out, sys.stdout)
`
	out, err := exec.Command("python3", "-c", script, stdlib).Output()
	if err != nil {
		t.Skipf("python3: %v", err)
	}
	var want map[string]*string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	decoded := 0
	for p, w := range want {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := DecodeSource(raw)
		switch {
		case w == nil && err == nil:
			t.Errorf("%s: Python refuses it, capguard decoded it", p)
		case w != nil && err != nil:
			t.Errorf("%s: Python decodes it, capguard: %v", p, err)
		case w != nil && string(got) != *w:
			t.Errorf("%s: decoded differently from Python", p)
		case w != nil:
			decoded++
		}
	}
	t.Logf("%d files in another encoding than UTF-8 under %s, %d decoded as Python does", len(want), stdlib, decoded)
	if decoded == 0 {
		t.Skip("no file in another encoding here")
	}
}

// Positions are in the decoded text: a two-byte UTF-8 character from one
// Latin-1 byte moves the column by one, and the finding's text is the
// decoded source's.
func TestDecodedPositions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "latin.py")
	src := "# -*- coding: latin-1 -*-\nimport torch\ndef f(g, x):\n    with torch.cuda.graph(g):\n        n\xe9 = 1; y = x.item()\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(Options{Paths: []string{p}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 0 || len(res.Diagnostics) != 1 {
		t.Fatalf("errors %v, findings %d", res.Errors, len(res.Diagnostics))
	}
	d := res.Diagnostics[0]
	if d.Rule.ID != "CG101" || d.Start.Line != 5 || d.Start.Column != 22 {
		t.Errorf("%s at %d:%d, want CG101 at 5:22 (the column of the decoded text)", d.Rule.ID, d.Start.Line, d.Start.Column)
	}
	text := res.Source(p)
	if got := string(text[d.Start.Offset:d.End.Offset]); !strings.HasPrefix(got, "x.item()") {
		t.Errorf("the finding's offsets point at %q in the decoded source", got)
	}
}

func TestPython2IsSyntaxError(t *testing.T) {
	for src, want := range map[string]string{
		"print \"x\"\n":              "print statement",
		"print x, y\n":               "print statement",
		"exec code in ns\n":          "exec statement",
		"if a <> b:\n    pass\n":     "`<>` operator",
		"x = 10L\n":                  "long integer literal 10L",
		"x = 0777\n":                 "old octal literal 0777",
		"x = `a`\n":                  "backquote repr",
		"x = ur'a'\n":                "string prefix ur'",
		"raise E, 'x'\n":             "`raise E, value`",
		"def f((a, b)):\n    pass\n": "tuple parameter",
		// Python 3, though they look like Python 2.
		"print >> sys.stderr, 'm'\n":            "",
		"print (a), b\n":                        "",
		"exec(code)\n":                          "",
		"x = 0\ny = 00\nz = 0o777\nw = 0777j\n": "",
		"raise E('x') from None\n":              "",
		"f = lambda a, b: a\n":                  "",
		"x = rb'a' + Rb'b' + f'c'\n":            "",
	} {
		tr, err := Parse([]byte(src))
		if err != nil || tr.Syntax != "" {
			t.Fatalf("%q: %v %q", src, err, tr.Syntax)
		}
		got := syntax.Python2Syntax(tr.Root, []byte(src))
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("syntax.Python2Syntax(%q) = %q, want %q", src, got, want)
		}
		// Python 3 agrees.
		err = exec.Command("python3", "-c", "import sys; compile(sys.argv[1], 'x', 'exec')", src).Run()
		if want != "" && err == nil {
			t.Errorf("%q: Python 3 compiles it", src)
		}
		if want == "" && err != nil {
			t.Errorf("%q: Python 3 refuses it: %v", src, err)
		}
	}
}
