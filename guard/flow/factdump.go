package flow

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// The fact dump (Options.FactDump, CAPGUARD_FACTS): the solved state
// written under keys that name code, not memory, so that two runs can be
// compared line by line: the same project solved twice gives the same
// dump, and an edit's dump differs from the one before it by what the
// edit changed in the solve. It is the measure of what an incremental
// solve would have to delete and derive again, and the oracle it would be
// checked against (docs/design.md, "Why a host-code edit is a whole
// analysis").
//
// Keys:
//   - a function: its full name (`capguard graph` naming), with `#k` for
//     the k-th later function of the same name in its file (redefinitions,
//     lambdas);
//   - a syntax node: its function's key, `/`, its ordinal among the nodes
//     of that function's own code (nested functions' code is theirs) in
//     preorder, and its kind: an edit moves the keys of the edited
//     function's nodes only;
//   - a points-to node: what it belongs to (a local, a parameter, a
//     return, a field of a value, a container's elements, an evaluated
//     expression); nodes with none of those names are the solver's own
//     temporaries and are left out (their facts reach named nodes);
//   - a value: its kind and what it is made from.
//
// Lines, sorted: `F node value strength` (a fact), `C site caller callee
// strength` (a call edge), `D site reason` (a dropped call), `A site
// reason` (an assumption), `M node` (a mixed node), `W value` (a widened
// container).

// dumpFacts writes the dump of the solved state to path. The facts are
// most of it (4.6 million lines on a 250k-line package): they are written
// a node at a time, in the order of the nodes' names, not gathered and
// sorted whole. A tab sorts before every character of a key, so that is
// the order of the whole lines.
func (s *solver) dumpFacts(path string) error {
	k := newDumpKeys(s)
	var rest []string // every line but the facts
	type named struct {
		name string
		id   NID
	}
	nodes := make([]named, 0, len(k.nodeName))
	for nid, name := range k.nodeName {
		nodes = append(nodes, named{name, nid})
		if s.nodes.at(nid).mixed {
			rest = append(rest, "M\t"+name)
		}
	}
	slices.SortFunc(nodes, func(a, b named) int { return strings.Compare(a.name, b.name) })
	for ck, st := range s.calls {
		rest = append(rest, "C\t"+k.site(ck.site)+"\t"+k.fn(ck.caller)+"\t"+k.fn(ck.callee)+"\t"+strconv.Itoa(int(st)))
	}
	for n, why := range s.dropped {
		rest = append(rest, "D\t"+k.site(n)+"\t"+why)
	}
	for n, why := range s.assumed {
		rest = append(rest, "A\t"+k.site(n)+"\t"+why)
	}
	for v := range s.widened {
		rest = append(rest, "W\t"+k.value(v))
	}
	slices.Sort(rest)
	rest = slices.Compact(rest)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	line := func(l string) {
		io.WriteString(w, l)
		w.WriteByte('\n')
	}
	i := 0
	for ; i < len(rest) && rest[i] < "F"; i++ {
		line(rest[i])
	}
	var facts []string
	for j := 0; j < len(nodes); {
		// Nodes of one name (two containers of one key) dump as one.
		facts = facts[:0]
		name := nodes[j].name
		for ; j < len(nodes) && nodes[j].name == name; j++ {
			s.nodes.at(nodes[j].id).pts.each(func(v VID, st uint8) {
				facts = append(facts, k.value(v)+"\t"+strconv.Itoa(int(st)))
			})
		}
		slices.Sort(facts)
		for _, fact := range slices.Compact(facts) {
			line("F\t" + name + "\t" + fact)
		}
	}
	for ; i < len(rest); i++ {
		line(rest[i])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dumpKeys names functions, syntax nodes, points-to nodes and values.
type dumpKeys struct {
	s        *solver
	fnName   map[*index.Function]string
	siteName map[*syntax.Node]string
	nodeName map[NID]string
	valName  []string
}

func newDumpKeys(s *solver) *dumpKeys {
	k := &dumpKeys{s: s, fnName: map[*index.Function]string{}, siteName: map[*syntax.Node]string{}, nodeName: map[NID]string{},
		valName: make([]string, len(s.values))}
	// The syntax nodes a line names besides evaluated expressions: the
	// sites of values, calls, drops and assumptions. Only these and the
	// expressions get a key kept (every node of every tree would be most
	// of the dump's memory).
	sites := map[*syntax.Node]bool{}
	for i := range s.values {
		if n := s.values[i].Site; n != nil {
			sites[n] = true
		}
	}
	for ck := range s.calls {
		sites[ck.site] = true
	}
	for n := range s.dropped {
		sites[n] = true
	}
	for n := range s.assumed {
		sites[n] = true
	}
	for _, f := range s.proj.Files {
		seen := map[string]int{}
		byDef := map[*syntax.Node]*index.Function{}
		for _, fn := range append([]*index.Function{f.Top}, f.Funcs...) {
			name := fn.FullName()
			if c := seen[name]; c > 0 {
				k.fnName[fn] = name + "#" + strconv.Itoa(c)
			} else {
				k.fnName[fn] = name
			}
			seen[name]++
			if fn.Def != nil {
				byDef[fn.Def] = fn
			}
		}
		if f.Tree == nil || f.Tree.Root == nil {
			continue
		}
		// Every node of the file counted in its function's own code.
		ord := map[*index.Function]int{}
		var walk func(n *syntax.Node, fn *index.Function)
		walk = func(n *syntax.Node, fn *index.Function) {
			if g := byDef[n]; g != nil && g != fn {
				fn = g
			}
			i := ord[fn]
			ord[fn] = i + 1
			id, isExpr := s.expr(n)
			if isExpr || sites[n] {
				key := k.fnName[fn] + "/" + strconv.Itoa(i) + n.Kind()
				k.siteName[n] = key
				if isExpr {
					k.name(id, "x:"+key)
				}
			}
			for _, c := range n.Children() {
				walk(c, fn)
			}
		}
		walk(f.Tree.Root, f.Top)
	}
	for lk, id := range s.locals {
		k.name(id, "l:"+k.fn(lk.fn)+":"+lk.name)
	}
	for fn, id := range s.rets {
		k.name(id, "r:"+k.fn(fn))
	}
	for fn, id := range s.yields {
		k.name(id, "y:"+k.fn(fn))
	}
	for fn, ids := range s.params {
		for i, id := range ids {
			k.name(id, "p:"+k.fn(fn)+":"+strconv.Itoa(i))
		}
	}
	for fn, id := range s.selfIn {
		k.name(id, "s:"+k.fn(fn))
	}
	for name, id := range s.builtinNodes {
		k.name(id, "b:"+name)
	}
	names := make([]string, len(s.names))
	for name, id := range s.names {
		if int(id) < len(names) {
			names[id] = name
		}
	}
	for key, id := range s.fields {
		v, n := VID(int32(uint32(key>>32))), int32(uint32(key))
		if int(v) < len(s.values) && int(n) < len(names) {
			k.name(id, "f:"+k.value(v)+"."+names[n])
		}
	}
	for i := range s.values {
		v := &s.values[i]
		if v.Kind == VCont && v.Elems > 0 {
			k.name(v.Elems, "e:"+k.value(VID(i)))
		}
		for j, a := range v.Args {
			k.name(a, "a:"+k.value(VID(i))+":"+strconv.Itoa(j))
		}
	}
	return k
}

// name gives node id the least of its names.
func (k *dumpKeys) name(id NID, name string) {
	if id < 0 {
		return
	}
	if old, ok := k.nodeName[id]; !ok || name < old {
		k.nodeName[id] = name
	}
}

func (k *dumpKeys) fn(f *index.Function) string {
	if f == nil {
		return "-"
	}
	if name, ok := k.fnName[f]; ok {
		return name
	}
	return f.FullName() + "?"
}

func (k *dumpKeys) site(n *syntax.Node) string {
	if n == nil {
		return "-"
	}
	if name, ok := k.siteName[n]; ok {
		return name
	}
	return "?" + n.Kind()
}

// class is className, "-" for none.
func (k *dumpKeys) class(c *index.Class) string {
	if c == nil {
		return "-"
	}
	return className(c)
}

// value names value v (made once: a bound method names its receiver).
func (k *dumpKeys) value(v VID) string {
	if int(v) < 0 || int(v) >= len(k.valName) {
		return "?"
	}
	if k.valName[v] != "" {
		return k.valName[v]
	}
	k.valName[v] = "(cycle)"
	val := k.s.values[v]
	var name string
	switch val.Kind {
	case VModule:
		name = "mod:" + val.Mod.Qualified()
	case VFunc:
		name = "fn:" + k.fn(val.Fn)
	case VKernel:
		name = "kernel:" + k.fn(val.Fn)
	case VClass:
		name = "cls:" + k.class(val.Cls)
	case VInst:
		name = "inst:" + k.class(val.Cls)
	case VBound:
		name = "bound:" + k.fn(val.Fn) + "@" + k.value(val.Recv)
	case VSuper:
		name = "super:" + k.class(val.Cls) + "@" + k.value(val.Recv)
	case VCont:
		if v == k.s.anyCont {
			name = "cont:summary"
		} else {
			name = "cont:" + k.site(val.Site)
		}
	case VPartial:
		name = "partial:" + k.site(val.Site)
	case VExt:
		name = "ext:" + val.Ext
	case VExtInst:
		name = "extinst:" + val.Ext
	case VTensor:
		name = "tensor:" + val.Ext
	}
	if name == "" {
		name = fmt.Sprintf("kind%d", val.Kind)
	}
	if val.Tag != 0 {
		name += "#" + strconv.Itoa(int(val.Tag))
	}
	if val.Kind == VCont && val.Site == nil && v != k.s.anyCont {
		name += "@" + k.fn(val.Fn) + "/" + k.class(val.Cls) + "/" + val.Ext
	}
	k.valName[v] = name
	return name
}
