package index

import (
	"bytes"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// CUDAExtensionNames are the dotted module names f's build code declares as
// CUDA extensions (torchapi.CUDAExtensionBuilders): the first argument or
// `name=` of each declaration, a string literal or a name f binds once at
// module level to one. A name the file computes (an f-string, a
// concatenation) is not read: the module stays unknown.
func CUDAExtensionNames(f *File) []string {
	if f.Tree == nil || f.Tree.Root == nil || !bytes.Contains(f.Src, []byte("Extension")) {
		return nil
	}
	src := f.Src
	var out []string
	seen := map[string]bool{}
	syntax.Walk(f.Tree.Root, func(n *Node) bool {
		if n.Kind != "call" || !torchapi.CUDAExtensionBuilders[f.Qualify(n.Get("function"))] {
			return true
		}
		al := n.Get("arguments")
		if al == nil {
			return true
		}
		var arg *Node
		for _, a := range al.NamedChildren() {
			if a.Kind == "keyword_argument" {
				if a.Get("name").Text(src) == "name" {
					arg = a.Get("value")
				}
				continue
			}
			if arg == nil && a.Kind != "comment" && a.Kind != "list_splat" && a.Kind != "dictionary_splat" {
				arg = a
			}
		}
		if name, ok := moduleString(f, arg); ok && name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		return true
	})
	return out
}

// moduleString is n's string value: a literal, or a name that f's
// module-level code assigns exactly once, to a literal.
func moduleString(f *File, n *Node) (string, bool) {
	n = syntax.Unparen(n)
	if n == nil {
		return "", false
	}
	if s, ok := StringLit(n, f.Src); ok {
		return s, true
	}
	if n.Kind != "identifier" {
		return "", false
	}
	name := n.Text(f.Src)
	val, count := "", 0
	for _, st := range f.Tree.Root.NamedChildren() {
		if st.Kind == "expression_statement" && len(st.NamedChildren()) == 1 {
			st = st.NamedChildren()[0]
		}
		if st.Kind != "assignment" {
			continue
		}
		if l := st.Get("left"); l != nil && l.Kind == "identifier" && l.Text(f.Src) == name {
			count++
			s, ok := StringLit(st.Get("right"), f.Src)
			if !ok {
				return "", false
			}
			val = s
		}
	}
	return val, count == 1
}
