package rules

import (
	"fmt"
	"strings"
)

var ruleStalePadding = &Rule{
	ID: "CG203", Name: "stale-padding", Severity: SeverityWarning, Fix: "unsafe",
	Contexts: []Context{ReplayPrep},
	Summary:  "replay-prep copies a batch into the prefix of a padded buffer and never resets the tail",
	Doc:      doc("cg203_stale_padding.md"),
	Run:      runStalePadding,
}

// prefixCopy matches `X[:n].copy_(src)` and `X[:n] = src`, and the
// same writes into a corner of a buffer of more dimensions
// (`X[:bs, :w] = src`, `X[:, :w].copy_(src)`): every index a full slice
// `:` or a prefix `:k`. It returns X (a buffer, or a plain name the caller
// must check: runStalePadding takes a helper's parameter), the prefix
// bounds by dimension (nil for a full slice), and the write.
func prefixCopy(n *Node, src []byte) (buf *Node, bounds []*Node, stmt *Node) {
	var sub *Node
	switch n.Kind() {
	case "call":
		recv, name, _ := methodCall(n, src)
		if name != "copy_" || recv == nil || Unparen(recv).Kind() != "subscript" {
			return nil, nil, nil
		}
		sub = Unparen(recv)
	case "assignment":
		l := n.Get("left")
		if l == nil || l.Kind() != "subscript" {
			return nil, nil, nil
		}
		sub = l
	default:
		return nil, nil, nil
	}
	idx := sub.All("subscript")
	if len(idx) == 0 {
		return nil, nil, nil
	}
	some := false
	for _, sl := range idx {
		if sl.Kind() != "slice" {
			return nil, nil, nil
		}
		// `[:n]` (no start, a stop, no step) or `[:]`.
		text := strings.TrimSpace(sl.Text(src))
		if !strings.HasPrefix(text, ":") || strings.Count(text, ":") != 1 {
			return nil, nil, nil
		}
		parts := sl.NamedChildren()
		switch len(parts) {
		case 0:
			bounds = append(bounds, nil)
		case 1:
			bounds = append(bounds, parts[0])
			some = true
		default:
			return nil, nil, nil
		}
	}
	v := Unparen(sub.Get("value"))
	if !some || bufName(v, src) == "" && v.Kind() != "identifier" {
		return nil, nil, nil
	}
	return v, bounds, n
}

// bufName is the name of a buffer a prefix write targets: the attribute
// (`self.slot_mapping`), or the string key of a dict of buffers
// (`self.graph_vars["slot_mapping"]`, or through a local alias of such a
// dict, which the caller checks with dictAliases). "" for anything else.
func bufName(v *Node, src []byte) string {
	if v == nil {
		return ""
	}
	switch v.Kind() {
	case "attribute":
		return v.Get("attribute").Text(src)
	case "subscript":
		base := Unparen(v.Get("value"))
		idx := v.All("subscript")
		if base == nil || len(idx) != 1 || idx[0].Kind() != "string" || !base.Is("attribute", "identifier") {
			return ""
		}
		return strings.Trim(idx[0].Text(src), "\"'")
	}
	return ""
}

// dictBase is the local that a buffer `d["key"]` is looked up in, or ""
// when the buffer is an attribute or a dict attribute.
func dictBase(v *Node, src []byte) string {
	if v.Kind() == "subscript" {
		if b := Unparen(v.Get("value")); b != nil && b.Kind() == "identifier" {
			return b.Text(src)
		}
	}
	return ""
}

// attrAliases are the locals bound to an attribute (`graph_vars =
// self.graph_vars`): state held by the object, not the function's own.
func attrAliases(p *Pass) map[string]bool {
	src := p.Src()
	out := map[string]bool{}
	for _, st := range bodyStmts(p.Fn) {
		Walk(st, func(n *Node) bool {
			if n.Is("function_definition", "class_definition", "lambda") {
				return false
			}
			if n.Kind() == "assignment" {
				l, r := Unparen(n.Get("left")), Unparen(n.Get("right"))
				if l != nil && r != nil && l.Kind() == "identifier" && r.Kind() == "attribute" {
					out[l.Text(src)] = true
				}
			}
			return true
		})
	}
	return out
}

// tailIndex is the subscript that selects the tail of dimension dim past
// bound: `n:` for the first, `:, w:` for the second.
func tailIndex(dim int, bound string) string {
	return strings.Repeat(":, ", dim) + bound + ":"
}

func neutralValue(name string) (string, string) {
	l := strings.ToLower(name)
	switch {
	case strings.Contains(l, "slot") || strings.Contains(l, "cache_loc") || strings.Contains(l, "mapping"):
		return "-1", "-1 marks a padded slot that the KV-cache write skips; 0 would overwrite a live slot"
	case strings.Contains(l, "seq_len") || strings.Contains(l, "seqlen") || strings.HasSuffix(l, "lens"):
		return "1", "a length of 1 gives padded rows a one-token attention instead of an empty softmax"
	case strings.Contains(l, "position"):
		return "0", "position 0 is valid for every rotary table; padded rows' outputs are discarded"
	}
	return "0", "padded rows read index 0 and their outputs are discarded"
}

func runStalePadding(p *Pass) {
	src := p.Src()
	resets, writes := bufferWrites(p.Fn)
	// Does the function refresh per-row lengths (seq_lens, context_lens)?
	lengthsWritten := false
	for name := range writes {
		if lengthLike(name) {
			lengthsWritten = true
		}
	}
	aliases := attrAliases(p)
	p.Walk(func(n *Node) bool {
		buf, bounds, _ := prefixCopy(n, src)
		if buf == nil || resets[blankless(buf.Text(src))] {
			return true
		}
		bname := bufName(buf, src)
		via := ""
		if buf.Kind() == "identifier" {
			// A helper's parameter (`def pad_and_fill(dest, src):
			// dest[:n].copy_(src)`): a buffer where a replay-prep call
			// passes one for it (a local is not graph state).
			bname = ""
			// The caller that resets what it passes (`slots.fill_(-1)`,
			// then the helper's prefix copy) leaves no stale tail.
			callerResets := func(arg prepWrite) bool {
				r, _ := bufferWrites(arg.Fn)
				return r[blankless(Unparen(arg.Attr).Text(arg.Fn.File.Src))]
			}
			for _, arg := range paramArgs(p.A, p.Fn, buf.Text(src)) {
				if b := bufName(Unparen(arg.Attr), arg.Fn.File.Src); indexLike(b) && !callerResets(arg) {
					bname, via = b, fmt.Sprintf(" (`%s`, which %s passes)", short(Unparen(arg.Attr).Text(arg.Fn.File.Src)), arg.Fn.FullName())
					break
				}
			}
		}
		if !indexLike(bname) {
			return true
		}
		if d := dictBase(buf, src); d != "" && !aliases[d] {
			return true // a dict the function built: not graph state
		}
		// The first dimension whose prefix is not the padded size: its
		// tail keeps a previous batch's values.
		dim, bound := -1, (*Node)(nil)
		for i, b := range bounds {
			if b != nil && !paddedBoundOf(p, b) {
				dim, bound = i, b
				break
			}
		}
		if bound == nil {
			return true
		}
		if dim > 0 && lengthsWritten {
			// A table's stale columns past this batch's width: paged
			// readers bound each row's columns by its length, which this
			// function refreshes.
			return true
		}
		name := buf.Text(src)
		val, why := neutralValue(bname)
		written := name + "[:" + bound.Text(src) + "]"
		if len(bounds) > 1 {
			written = strings.TrimSpace(Unparen(n.Get("left")).Text(src))
			if n.Kind() == "call" {
				recv, _, _ := methodCall(n, src)
				written = Unparen(recv).Text(src)
			}
		}
		tail := tailIndex(dim, bound.Text(src))
		msg := fmt.Sprintf("`%s`%s is refreshed but `%s[%s]` keeps a previous batch's values, and padded graphs replay them", written, via, name, tail)
		var fix *Fix
		stmt := n.Parent()
		if via != "" {
			// One tail value for every buffer the helper's callers pass
			// (-1 for slots, 1 for lengths) would be wrong for some.
			msg = noFix(msg, "the helper refreshes every buffer its callers pass, and the right tail value depends on the buffer; fill the tail at each call, or pass the helper the value")
			stmt = nil
		}
		if stmt != nil && stmt.Kind() == "expression_statement" && stmt.Parent() != nil && stmt.Parent().Kind() == "block" {
			at := lineEndOf(src, int(stmt.End))
			line := fmt.Sprintf("%s%s[%s].fill_(%s)", lineIndent(src, int(stmt.Start)), name, tail, val)
			text := line + "\n"
			if at == len(src) && (len(src) == 0 || src[len(src)-1] != '\n') {
				text = "\n" + line
			}
			fix = &Fix{Message: fmt.Sprintf("fill the tail with %s after the copy (unsafe: %s)", val, why),
				Applicability: Unsafe, Edits: []TextEdit{{Start: at, End: at, NewText: text}}}
		}
		p.Report(n, msg, fix)
		return false
	})
}

// bufferWrites is what fn does to buffers: resets, by the buffer's text
// with blanks left out, of its whole (`buf.fill_(v)`, `buf.zero_()`,
// `buf.copy_(x)`, `bufs["slots"].fill_(-1)`) or of a tail (`buf[n:] = v`,
// `buf[:, w:].fill_(v)`: a slice with a start); and the buffers it writes
// into by subscript, by name.
func bufferWrites(fn *Function) (resets, writes map[string]bool) {
	src := fn.File.Src
	resets, writes = map[string]bool{}, map[string]bool{}
	for _, s := range bodyStmts(fn) {
		Walk(s, func(n *Node) bool {
			var target *Node
			if n.Kind() == "call" {
				recv, name, _ := methodCall(n, src)
				if name == "fill_" || name == "zero_" || name == "copy_" {
					target = Unparen(recv)
				}
			}
			if n.Kind() == "assignment" {
				target = n.Get("left")
			}
			if target == nil {
				return true
			}
			if t := Unparen(target); t.Kind() == "subscript" {
				if name := bufName(Unparen(t.Get("value")), src); name != "" {
					writes[name] = true
				}
			}
			if n.Kind() == "call" && target.Kind() == "subscript" && target.All("subscript")[0].Kind() == "string" {
				resets[blankless(target.Text(src))] = true // bufs["slot_mapping"].fill_(-1)
			} else if target.Kind() == "subscript" {
				for _, sl := range target.All("subscript") {
					if sl.Kind() == "slice" && !strings.HasPrefix(strings.TrimSpace(sl.Text(src)), ":") {
						resets[blankless(Unparen(target.Get("value")).Text(src))] = true
					}
				}
			} else if n.Kind() == "call" {
				resets[blankless(target.Text(src))] = true // buf.fill_(...) / buf.zero_()
			}
			return true
		})
	}
	return resets, writes
}

// lengthLike: a buffer of per-row lengths (seq_lens, cache_seqlens,
// context_lens), by which paged readers bound the columns of a table.
func lengthLike(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "seq_len") || strings.Contains(l, "seqlen") || strings.HasSuffix(l, "lens") || strings.HasSuffix(l, "lengths")
}

// indexLike: buffers whose padded rows' stale values do harm: slot
// mappings (writes into live KV-cache slots), lengths, page tables and
// indices (reads of freed pages). Stale token ids or positions in padded
// rows only change outputs that are discarded.
func indexLike(name string) bool {
	l := strings.ToLower(name)
	for _, k := range []string{"slot", "loc", "mapping", "seq_len", "seqlen", "lens", "page", "table", "indices", "index", "indptr", "block"} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}

// paddedBoundOf: the bound (`bs`, `bs + 1` for a cu_seqlens prefix) is
// the padded size, by its name or by the assignment of the local it names
// (`metadata, bs = batch.attn_metadata, batch.padded_size`).
func paddedBoundOf(p *Pass, bound *Node) bool {
	src := p.Src()
	b := Unparen(bound)
	if b != nil && b.Kind() == "binary_operator" {
		if r := Unparen(b.Get("right")); r != nil && r.Kind() == "integer" {
			b = Unparen(b.Get("left"))
		}
	}
	if b == nil {
		return false
	}
	if b.Kind() == "identifier" {
		if v := lastBinding(p, b); v != nil && realSizeExpr(v, src) {
			// `bs = input_ids.size(0)`: the batch's own size, whatever the
			// local's name; the graph replayed is the padded one above it.
			return false
		}
	}
	if paddedBound(b.Text(src)) {
		return true
	}
	if b.Kind() != "identifier" {
		return false
	}
	name := b.Text(src)
	found := false
	for _, st := range bodyStmts(p.Fn) {
		Walk(st, func(n *Node) bool {
			if found || n.Is("function_definition", "class_definition", "lambda") {
				return false
			}
			if n.Kind() != "assignment" || n.Start > bound.Start {
				return true
			}
			l, r := Unparen(n.Get("left")), Unparen(n.Get("right"))
			if l == nil || r == nil {
				return true
			}
			if l.Kind() == "identifier" && l.Text(src) == name {
				found = paddedExpr(r, src)
			} else if l.Is("pattern_list", "tuple_pattern", "tuple") && r.Is("expression_list", "tuple") {
				ls, rs := l.NamedChildren(), r.NamedChildren()
				for i := range ls {
					if i < len(rs) && ls[i].Text(src) == name {
						found = paddedExpr(rs[i], src)
					}
				}
			}
			return !found
		})
	}
	return found
}

// paddedExpr: `batch.padded_size`, `padded_bs`, `self.graph_bs[i]`.
func paddedExpr(n *Node, src []byte) bool {
	n = Unparen(n)
	for n != nil && n.Kind() == "subscript" {
		n = Unparen(n.Get("value"))
	}
	if n == nil {
		return false
	}
	last := n.Text(src)
	if n.Kind() == "attribute" {
		last = n.Get("attribute").Text(src)
	}
	return n.Kind() != "integer" && (strings.Contains(last, "padded") || strings.HasPrefix(last, "graph_bs"))
}

// paddedBound: a bound named for the padded (graph) batch size copies the
// whole region the graph reads; SGLang and vLLM name the real size raw_bs,
// num_reqs, num_tokens.
func paddedBound(b string) bool {
	b = strings.TrimSpace(b)
	return b == "bs" || strings.HasPrefix(b, "padded") || strings.HasPrefix(b, "graph_bs") || strings.HasSuffix(b, "padded_bs")
}

// lastBinding is the value last assigned to the local id names before id,
// in straight `name = value` form; nil when there is none.
func lastBinding(p *Pass, id *Node) *Node {
	src := p.Src()
	name := id.Text(src)
	var last *Node
	for _, st := range bodyStmts(p.Fn) {
		Walk(st, func(n *Node) bool {
			if n.Is("function_definition", "class_definition", "lambda") {
				return false
			}
			if n.Kind() != "assignment" || n.Start > id.Start {
				return true
			}
			if l := Unparen(n.Get("left")); l != nil && l.Kind() == "identifier" && l.Text(src) == name {
				last = Unparen(n.Get("right"))
			}
			return true
		})
	}
	return last
}

// realSizeExpr: the size of a batch tensor itself, `x.size(0)`,
// `x.shape[0]`, `len(x)` — the real batch size, not a padded graph size.
func realSizeExpr(n *Node, src []byte) bool {
	n = Unparen(n)
	if n == nil {
		return false
	}
	switch n.Kind() {
	case "call":
		f := Unparen(n.Get("function"))
		args := n.Get("arguments")
		if f == nil || args == nil {
			return false
		}
		if f.Kind() == "identifier" && f.Text(src) == "len" {
			return len(args.NamedChildren()) == 1
		}
		if f.Kind() == "attribute" && f.Get("attribute").Text(src) == "size" {
			a := args.NamedChildren()
			return len(a) == 1 && strings.TrimSpace(a[0].Text(src)) == "0"
		}
	case "subscript":
		v := Unparen(n.Get("value"))
		idx := n.All("subscript")
		if v != nil && v.Kind() == "attribute" && v.Get("attribute").Text(src) == "shape" && len(idx) == 1 && idx[0].Text(src) == "0" {
			return true
		}
	}
	return false
}
