package syntax

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/python"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// TestParseMatchesTreeSitter compares capguard's tree (made by pyparse in
// one cgo call, from declarations copied out of tree-sitter's api.h) with
// the tree go-tree-sitter's own API gives, node by node, on every fixture,
// standard-library seeds and bad input: a mismatch in the copied
// declarations or the walk shows up here.
func TestParseMatchesTreeSitter(t *testing.T) {
	srcs := map[string][]byte{
		"empty":   nil,
		"syntax":  []byte("def f(:\n  x = (1,\n"),
		"missing": []byte("import a as import b\n"),
		"bom":     []byte("\xef\xbb\xbfimport torch\r\nx = 1\r\n"),
		"deep":    []byte("x = " + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + "\n"),
	}
	filepath.WalkDir("../../testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") {
			srcs[p], _ = os.ReadFile(p)
		}
		return nil
	})
	if dir := testenv.StdlibDir(); dir != "" {
		for _, name := range testenv.StdlibSeeds {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				srcs[name] = b
			}
		}
	}
	p := sitter.NewParser()
	p.SetLanguage(python.GetLanguage())
	leftOut := 0
	defer func() {
		if leftOut == 0 {
			t.Error("no token left out of any tree")
		}
	}()
	for name, src := range srcs {
		tt, err := p.ParseCtx(context.Background(), nil, src)
		if err != nil {
			t.Fatal(err)
		}
		if tt.RootNode().HasError() {
			// Valid Python the grammar rejects: capguard's tree is the
			// rewritten source's (divergence.go), so compare with that.
			if alt, changed := grammarFixes(src); changed {
				if t2, err := p.ParseCtx(context.Background(), nil, alt); err == nil && !t2.RootNode().HasError() {
					tt.Close()
					tt = t2
				}
			}
		}
		ours, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		// go-tree-sitter's cursor, as capguard used it before pyparse (a
		// cursor, not FieldNameForChild, which names a field on comments).
		// capguard's tree leaves out the tokens Omitted names: so does
		// this list, and its child counts.
		var want []string
		left := 0
		c := sitter.NewTreeCursor(tt.RootNode())
		for {
			n := c.CurrentNode()
			kind := n.Type()
			if n.IsMissing() {
				kind = "MISSING"
			}
			kids := 0
			for i := 0; i < int(n.ChildCount()); i++ {
				if k := n.Child(i); k.IsMissing() || k.IsNamed() || !Omitted(k.Type(), kind) {
					kids++
				}
			}
			if n.IsMissing() || n.IsNamed() || n.Parent() == nil || !Omitted(kind, n.Parent().Type()) {
				want = append(want, describeNode(kind, c.CurrentFieldName(), n.IsNamed(), int(n.StartByte()), int(n.EndByte()),
					int(n.StartPoint().Row), int(n.StartPoint().Column), kids))
			} else {
				left++
			}
			if c.GoToFirstChild() {
				continue
			}
			for !c.GoToNextSibling() {
				if !c.GoToParent() {
					goto done
				}
			}
		}
	done:
		c.Close()
		var got []string
		Walk(ours.Root, func(n *Node) bool {
			row, col := RowCol(src, int(n.Start))
			got = append(got, describeNode(n.Kind(), n.Field(), n.Named(), int(n.Start), int(n.End), row, col, len(n.Children())))
			return true
		})
		if (ours.Syntax != "") != tt.RootNode().HasError() {
			t.Errorf("%s: syntax %q, tree-sitter HasError %v", name, ours.Syntax, tt.RootNode().HasError())
		}
		tt.Close()
		leftOut += left
		if len(got) != len(want) {
			t.Errorf("%s: %d nodes, go-tree-sitter %d", name, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: node %d is %s, go-tree-sitter %s", name, i, got[i], want[i])
				break
			}
		}
	}
}

func describeNode(kind, field string, named bool, s, e, r, c, kids int) string {
	return fmt.Sprintf("%s field=%q named=%v %d-%d %d:%d kids=%d", kind, field, named, s, e, r, c, kids)
}

// tree-sitter can wrap a whole file in one ERROR node; the message names
// the innermost error, near the construct that broke the parse (here a
// dedent inside parentheses, valid Python that tree-sitter's grammar
// rejects; CPython's test_compile.py has it).
func TestSyntaxErrorNarrowed(t *testing.T) {
	// Lines 1333-1350 of CPython 3.11's Lib/test/test_compile.py.
	src := "import dis\n" +
		"\n" +
		"\n" +
		"class T:\n" +
		"    def test_weird_attribute_position_regressions(self):\n" +
		"        def f():\n" +
		"            (bar.\n" +
		"        baz)\n" +
		"            (bar.\n" +
		"        baz(\n" +
		"        ))\n" +
		"            files().setdefault(\n" +
		"                0\n" +
		"            ).setdefault(\n" +
		"                0\n" +
		"            )\n" +
		"        for line, end_line, column, end_column in f.__code__.co_positions():\n" +
		"            self.assertIsNotNone(line)\n" +
		"            self.assertIsNotNone(end_line)\n" +
		"            self.assertIsNotNone(column)\n" +
		"            self.assertIsNotNone(end_column)\n" +
		"            self.assertLessEqual((line, column), (end_line, end_column))\n"
	tr, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if want := `syntax error at line 7, column 13: unexpected "(bar."`; tr.Syntax != want {
		t.Errorf("syntax %q, want %q", tr.Syntax, want)
	}
}

// A checked file costs its nodes' memory: Node's comment says 32 bytes.
func TestNodeSize(t *testing.T) {
	if n := unsafe.Sizeof(Node{}); n != 32 {
		t.Errorf("syntax.Node is %d bytes, not 32: update its comment (and mind the memory)", n)
	}
}

// TestSnippetRuneSafe: a cut never splits a UTF-8 character, and the text
// stays within max bytes.
func TestSnippetRuneSafe(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("é", 50),
		strings.Repeat("a", 56) + "漢字漢字",
		"x = " + strings.Repeat("😀", 30),
		"short   text\n\twith  spaces",
	} {
		for max := 10; max <= 64; max++ {
			got := Snippet(s, max)
			if !utf8.ValidString(got) || len(got) > max {
				t.Fatalf("Snippet(%q, %d) = %q: invalid UTF-8 or over %d bytes", s, max, got, max)
			}
		}
	}
	if got := Snippet("short   text\n\twith  spaces", 60); got != "short text with spaces" {
		t.Errorf("whitespace: %q", got)
	}
}

// TestOmittedTokens: the tree holds no token Omitted names, and keeps a
// slice's colons (they say which bounds are given), the operators and the
// keywords the layers read. (A token tree-sitter inserted as MISSING stays
// whatever its kind: TestParseMatchesTreeSitter.)
func TestOmittedTokens(t *testing.T) {
	src := []byte("def f(a, b=1) -> int:\n    if a[1:]:\n        x = {1: (a.b, [b])}\n    elif a is not b and not a:\n        return a[::2] + -b\n    for k in a:\n        pass\n    with g() as h:\n        raise E from h\n    x = lambda: (yield)\n")
	tr, err := Parse(src)
	if err != nil || tr.Syntax != "" {
		t.Fatalf("parse: %v %q", err, tr.Syntax)
	}
	kinds := map[string]int{}
	Walk(tr.Root, func(n *Node) bool {
		if !n.Named() {
			kinds[n.Kind()]++
			if Omitted(n.Kind(), n.Parent().Kind()) {
				t.Errorf("token %q under %s at %d is in the tree", n.Kind(), n.Parent().Kind(), n.Start)
			}
		}
		return true
	})
	for _, k := range []string{"(", ")", ",", ".", "[", "]", "{", "}", "=", "->", "def", "if", "elif", "for", "pass", "with", "raise"} {
		if kinds[k] > 0 {
			t.Errorf("%d %q tokens kept", kinds[k], k)
		}
	}
	if kinds[":"] != 3 {
		t.Errorf("%d \":\" tokens kept, want the slices' 3", kinds[":"])
	}
	for _, k := range []string{"is not", "and", "not", "+", "-", "in", "as", "from", "return", "lambda", "yield"} {
		if kinds[k] == 0 {
			t.Errorf("no %q token kept (kept: %v)", k, kinds)
		}
	}
}
