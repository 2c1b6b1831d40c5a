package syntax

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sameTree reports the first difference between two trees, "" for none.
func sameTree(a, b *Tree) string {
	if a.Syntax != b.Syntax {
		return "syntax " + a.Syntax + " / " + b.Syntax
	}
	if len(a.Comments) != len(b.Comments) {
		return "comment count"
	}
	for i := range a.Comments {
		if a.Comments[i].Start != b.Comments[i].Start {
			return "comment offsets"
		}
	}
	if (a.Root == nil) != (b.Root == nil) {
		return "root"
	}
	if a.Root == nil {
		return ""
	}
	var an, bn []*Node
	Walk(a.Root, func(n *Node) bool { an = append(an, n); return true })
	Walk(b.Root, func(n *Node) bool { bn = append(bn, n); return true })
	if len(an) != len(bn) {
		return "node count"
	}
	for i := range an {
		x, y := an[i], bn[i]
		if x.Kind() != y.Kind() || x.field != y.field || x.Named() != y.Named() || x.Start != y.Start || x.End != y.End ||
			len(x.Children()) != len(y.Children()) || (x.Parent() == nil) != (y.Parent() == nil) {
			return "node " + x.Kind() + " / " + y.Kind()
		}
	}
	return ""
}

// TestEncodeRoundTrip: every Python file of the testdata, and sources with
// a syntax error, a missing token and nothing at all, decode to the tree
// they were encoded from.
func TestEncodeRoundTrip(t *testing.T) {
	srcs := map[string][]byte{
		"empty":   nil,
		"error":   []byte("def f(:\n    pass\n"),
		"missing": []byte("x = (1,\n"),
		"comment": []byte("# only a comment\n"),
	}
	filepath.WalkDir("../../testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") {
			if b, err := os.ReadFile(p); err == nil {
				srcs[p] = b
			}
		}
		return nil
	})
	if len(srcs) < 50 {
		t.Fatalf("%d sources: the testdata was not found", len(srcs))
	}
	for name, src := range srcs {
		tr, err := Parse(src)
		if err != nil {
			continue
		}
		back, err := Decode(Encode(tr), len(src))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if d := sameTree(tr, back); d != "" {
			t.Errorf("%s: decoded tree differs: %s", name, d)
		}
		for which, x := range map[string]*Tree{"parsed": tr, "decoded": back} {
			if d := linked(x); d != "" {
				t.Errorf("%s: %s tree: %s", name, which, d)
			}
		}
	}
}

// linked says what is wrong with a tree's links ("" for nothing): each
// child's Parent is the node it is a child of, the root has none, and a
// child list's capacity is its length (appending to one copies it, never
// writes over the next node's children in the shared slab).
func linked(t *Tree) string {
	if t.Root == nil {
		return ""
	}
	if t.Root.Parent() != nil {
		return "the root has a parent"
	}
	bad := ""
	Walk(t.Root, func(n *Node) bool {
		kids := n.Children()
		if cap(kids) != len(kids) {
			bad = fmt.Sprintf("%s at %d: %d children, capacity %d", n.Kind(), n.Start, len(kids), cap(kids))
		}
		for _, c := range kids {
			if c.Parent() != n {
				bad = fmt.Sprintf("%s at %d: its child %s's parent is another node", n.Kind(), n.Start, c.Kind())
			}
		}
		return bad == ""
	})
	return bad
}

// TestDecodeRefuses: a truncated, corrupted or foreign file, or one whose
// offsets pass the source's length, is an error.
func TestDecodeRefuses(t *testing.T) {
	src := []byte("import torch\n\n\ndef f(x):\n    return x.sum().item()  # host sync\n")
	tr, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	good := Encode(tr)
	if _, err := Decode(good, len(src)); err != nil {
		t.Fatalf("the good encoding: %v", err)
	}
	flipped := append([]byte{}, good...)
	flipped[len(flipped)/2] ^= 0x40
	for name, data := range map[string][]byte{
		"truncated": good[:len(good)-7],
		"flipped":   flipped,
		"foreign":   []byte("PK\x03\x04 not a tree"),
		"empty":     nil,
	} {
		if _, err := Decode(data, len(src)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := Decode(good, len(src)-10); err == nil {
		t.Error("decoded against a shorter source")
	}
}

// FuzzDecode: Decode never panics, and what it accepts is a tree whose
// nodes lie in the source.
func FuzzDecode(f *testing.F) {
	src := []byte("def f(x):\n    y = [a for a in x]\n    return y\n")
	if tr, err := Parse(src); err == nil {
		f.Add(Encode(tr), len(src))
	}
	f.Add([]byte("capguard syntax tree 1\n"), 10)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		tr, err := Decode(data, n)
		if err != nil || tr.Root == nil {
			return
		}
		Walk(tr.Root, func(x *Node) bool {
			if x.Start < 0 || x.End < x.Start || int(x.End) > n {
				t.Fatalf("node %s [%d, %d) outside a source of %d bytes", x.Kind(), x.Start, x.End, n)
			}
			return true
		})
	})
}
