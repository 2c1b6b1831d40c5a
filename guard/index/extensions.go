package index

import (
	"bytes"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// CUDAExtensionNames are the dotted module names f's build code declares as
// CUDA extensions (torchapi.CUDAExtensionBuilders): the first argument or
// `name=` of each declaration, a string literal or a name f binds once at
// module level to one (Project.LiteralOf). A name the file computes (an
// f-string, a concatenation) is not read: the module stays unknown.
func (p *Project) CUDAExtensionNames(f *File) []string {
	if f.Tree == nil || f.Tree.Root == nil || !bytes.Contains(f.Src, []byte("Extension")) {
		return nil
	}
	src := f.Src
	var out []string
	seen := map[string]bool{}
	syntax.Walk(f.Tree.Root, func(n *Node) bool {
		if n.Kind() != "call" || !torchapi.CUDAExtensionBuilders[f.Qualify(n.Get("function"))] {
			return true
		}
		al := n.Get("arguments")
		if al == nil {
			return true
		}
		var arg *Node
		for _, a := range al.NamedChildren() {
			if a.Kind() == "keyword_argument" {
				if a.Get("name").Text(src) == "name" {
					arg = a.Get("value")
				}
				continue
			}
			if arg == nil && a.Kind() != "comment" && a.Kind() != "list_splat" && a.Kind() != "dictionary_splat" {
				arg = a
			}
		}
		lit, litSrc := syntax.Unparen(arg), src
		if lit != nil && lit.Kind() == "identifier" {
			lf, l := p.LiteralOf(f, lit.Text(src))
			if l == nil {
				return true
			}
			lit, litSrc = l, lf.Src
		}
		if name, ok := StringLit(lit, litSrc); ok && name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		return true
	})
	return out
}
