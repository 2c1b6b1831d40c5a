package syntax

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Syntax errors are reported at CPython's line, with its message for the
// tokenizer-level ones; each case is checked against python3 where it is
// installed.
func TestSyntaxLines(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unclosed bracket", "import torch.cuda\nx = [1,\n     2\ny = 3\ndef h():\n    pass\n", 2, "'[' was never closed"},
		{"unclosed paren before def", "x = (1 +\n\ndef h():\n    return 1\n", 1, "'(' was never closed"},
		{"unclosed at EOF", "def f():\n    return g(1,\n", 2, "'(' was never closed"},
		{"unterminated string", "def h():\n    s = \"abc\n    return 1\n", 2, "unterminated string literal (detected at line 2)"},
		{"unterminated triple", "x = 1\ns = '''abc\n\ndef f():\n    pass\n", 2, "unterminated triple-quoted string literal"},
		{"unexpected indent", "def h():\n  return 1\n    y = 2\n", 3, "unexpected indent"},
		{"unindent mismatch", "if x:\n    y = 1\n  z = 2\n", 3, "unindent does not match any outer indentation level"},
		{"expected block", "for i in x:\ny = 1\n", 2, "expected an indented block"},
		{"expected block at EOF", "class A:\n", 1, "expected an indented block"},
		{"unmatched close", "x = 1)\n", 1, "unmatched ')'"},
		{"mismatched close", "x = (1,\n  2]\n", 2, "closing parenthesis ']' does not match opening parenthesis '(' on line 1"},
		{"parser error", "def g(:\n    pass\n", 1, "column 7: missing token"},
	} {
		tree, err := Parse([]byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tree.Syntax, "syntax error at line "+strconv.Itoa(c.line)+",") || !strings.Contains(tree.Syntax, c.msg) {
			t.Errorf("%s: %q, want line %d %q", c.name, tree.Syntax, c.line, c.msg)
		}
		if LexOK([]byte(c.src)) && c.msg != "" {
			t.Errorf("%s: LexOK", c.name)
		}
		if line, ok := pythonLine(t, c.src); ok && line != c.line {
			t.Errorf("%s: python3 says line %d, the case %d", c.name, line, c.line)
		}
	}
}

// pythonLine is the line python3's compile() reports, if python3 runs.
func pythonLine(t *testing.T, src string) (int, bool) {
	cmd := exec.Command("python3", "-c", `import sys
try:
    compile(sys.stdin.read(), "x.py", "exec")
    print(0)
except SyntaxError as e:
    print(e.lineno)`)
	cmd.Stdin = strings.NewReader(src)
	out, err := cmd.Output()
	if err != nil {
		return 0, false
	}
	_ = t
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	return n, err == nil
}

// Valid code the tokenizer pass must accept: continuations, strings of
// every kind (raw, bytes, f-strings with nested fields and format specs),
// comments at any indentation, form feeds, tabs, one-line blocks.
func TestSyntaxValid(t *testing.T) {
	for _, src := range []string{
		"x = {1:\n  2,\n}\nif x: y = 1\nz = 2\n",
		"def f(a,\n      b):\n    return a + \\\n        b\n",
		"s = r'\\'' + rb\"\\\"\" + b'x' + u'y'\n",
		"s = f\"{x!r:>{width}} {{literal}} {d['k']}\"\nt = f'''\n{a\n + b}\n'''\n",
		"class A:\n    # a comment\n# at column 0\n    def f(self):\n\n        pass\n\f\nx = 1\n",
		"if x:\n\ty = 1\nelse:\n\ty = 2\n",
		"d = {\n    'a': lambda: 1,\n}[k][1:2]\n",
		"x = '''a\n'''  # comment\nmatch x:\n    case _:\n        pass\n",
		"def f():\n    '''doc'''\n    return \"\"\"\n  text ( [ {\n\"\"\"\n",
		"x = 1 if y else \\\n    2\n",
	} {
		tree, err := Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if !LexOK([]byte(src)) {
			l := lexCheck([]byte(src))
			t.Errorf("LexOK false on valid code (%+v):\n%s", l.err, src)
		}
		if tree.Syntax != "" {
			t.Errorf("%s:\n%s", tree.Syntax, src)
		}
		if line, ok := pythonLine(t, src); ok && line != 0 {
			t.Errorf("python3 rejects the valid case (line %d):\n%s", line, src)
		}
	}
}

// A string continued by a backslash before a CRLF line ending is one
// string (Python reads "\r\n" as one newline): the tokenizer pass and the
// kernel blanking's string scan took the backslash to escape the "\r" only
// and the "\n" to end the line, and refused a file CPython parses
// (a CRLF-ended source of an optimizer library).
func TestSyntaxCRLFContinuedString(t *testing.T) {
	for _, src := range []string{
		"x = \"a \\\r\nb\"\r\ny = 1\r\n",
		"z = b'q \\\r\nw' + '''a\r\nb'''\r\n",
	} {
		if !LexOK([]byte(src)) {
			t.Errorf("LexOK false on valid code (%+v): %q", lexCheck([]byte(src)).err, src)
		}
		if end := skipString([]byte(src), strings.IndexAny(src, "\"'")); end < 0 {
			t.Errorf("skipString: no end for the first string of %q", src)
		}
		if line, ok := pythonLine(t, src); ok && line != 0 {
			t.Errorf("python3 rejects the valid case (line %d): %q", line, src)
		}
	}
}
