package syntax

import (
	"bytes"
	"testing"
)

// TestGrammarDivergences: valid Python that tree-sitter-python rejects
// (divergence.go), each shape as a real repository wrote it, parses without
// a syntax error, and the tree keeps the original text and offsets.
func TestGrammarDivergences(t *testing.T) {
	for _, src := range []string{
		// a boolean operator after a subscripted name in annotations
		"def f(self, shape: tuple[int, ...] or list[int], dtype: str = None) -> int:\n    pass\n",
		"def f(a: dict[str, any] or None = None, b: tuple[int] or None = None):\n    pass\n",
		"async def f(a: list[int] or None = None):\n    pass\n",
		"def f() -> dict[str, int] or None:\n    pass\n",
		"x: dict[str, int] or None = None\n",
		"class A:\n    y: list[int] or None\n",
		"def f(a: list[int] or None = None, g=lambda x: x[0] or 1):\n    return g(a)\n",
		// a format spec whose fill is '='
		"w = 3\nprint(f\"{'title':=^{w}}\")\n",
		"w = 3\nprint(f'{w!r:=^{w}}', f\"{w:=>{w}}\")\n",
		// a backslash before a brace in an f-string
		"import re\nre.search(rf\"^function {re.escape('x')} \\{{\", '')\n",
		"x = 1\ny = f\"\\{x}\"\n",
		// a comment indented less than the decorator and definition around it
		"class A:\n    @dec\n#    @other\n    def f(self):\n        pass\n",
		"class A:\n    @dec(\n        1)\n  # half\n    def f(self):\n        pass\n",
	} {
		parsesClean(t, src)
	}
	// Real syntax errors stay errors.
	for _, src := range []string{
		"def f(a: dict[str, int] or None = None:\n    pass\n",
		"x: dict[str, int] or = None\n",
		"print(f\"{w:=^{w}\")\n",
		"class A:\n    @dec\n#    @other\n    x = 1\n  y = 2\n",
	} {
		parsesWithError(t, src)
	}
}

// parsesClean checks that src parses with no syntax error, ParseOK agrees,
// and the tree's text is src's (every offset where it was).
func parsesClean(t *testing.T, src string) {
	t.Helper()
	tr, err := Parse([]byte(src))
	if err != nil || tr.Syntax != "" {
		t.Errorf("%q: %v %q, want a clean parse", src, err, tr.Syntax)
		return
	}
	if got := tr.Root.Text([]byte(src)); got != src {
		t.Errorf("%q: the tree's text is %q", src, got)
	}
	if !ParseOK([]byte(src)) {
		t.Errorf("%q: ParseOK says no", src)
	}
}

// parsesWithError checks that src's syntax error is reported.
func parsesWithError(t *testing.T, src string) {
	t.Helper()
	if tr, err := Parse([]byte(src)); err != nil || tr.Syntax == "" {
		t.Errorf("%q: no syntax error reported", src)
	}
}

// TestGrammarFixesLeaveCode: the rewrites touch annotations, format specs
// and dedented comments after decorators only: an `or` in code, a walrus,
// a dict display and a lambda's body are left as they are.
func TestGrammarFixesLeaveCode(t *testing.T) {
	for _, src := range []string{
		"y = a[0] or b\n",
		"if (n := a[0] or b):\n    pass\n",
		"d = {'k': a[0] or b}\n",
		"def f(g=lambda x: x[0] or 1):\n    pass\n",
		"else_ = x\nif x:\n    pass\nelse: y = a[0] or b\n",
		"print(f\"{(w := 3)}\")\n",
		"s = '{w:=^{w}}'\n",
		"def f():\n    # note\n    pass\n# top\n",
		"@dec\n# top-level comment\ndef f():\n    pass\n",
		"lst[1:2] = a[0] or b\n",
	} {
		out, changed := grammarFixes([]byte(src))
		if changed || !bytes.Equal(out, []byte(src)) {
			t.Errorf("%q: rewritten to %q", src, out)
		}
	}
}

// FuzzGrammarFixes: whatever the input, the rewrites keep every offset
// (the same length, newlines where they were) and write only the bytes
// they are documented to write.
func FuzzGrammarFixes(f *testing.F) {
	for _, s := range []string{
		"def f(a: dict[str, int] or None = None) -> list[int] or None:\n    pass\n",
		"x: t[int] or None = 1\nprint(f\"{x:=^{w}}\")\n",
		"class A:\n    @dec\n# c\n    def f(self):\n        pass\n",
		"return a, *((None,) * 2)\n",
		"s = rf\"\\{{\" 'unterminated\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		out, changed := grammarFixes(src)
		if len(out) != len(src) {
			t.Fatalf("length %d -> %d", len(src), len(out))
		}
		diff := false
		for i := range src {
			if out[i] == src[i] {
				continue
			}
			diff = true
			if src[i] == '\n' || (out[i] != ' ' && out[i] != '|' && out[i] != '<') {
				t.Fatalf("byte %d: %q -> %q", i, src[i], out[i])
			}
		}
		if diff != changed {
			t.Fatalf("changed %v, but the bytes differ: %v", changed, diff)
		}
		Parse(src) // never panics
	})
}
