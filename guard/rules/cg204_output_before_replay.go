package rules

import (
	"fmt"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
)

var ruleOutputBeforeReplay = &Rule{
	ID: "CG204", Name: "output-before-replay", Severity: SeverityError,
	Contexts: []Context{Captured},
	Summary:  "the function that captures a graph reads the graph's outputs before any replay: capture records the kernels without running them",
	Doc:      doc("cg204_output_before_replay.md"),
	Run:      runOutputBeforeReplay,
}

// runOutputBeforeReplay looks at what the capturing function does after a
// `with torch.cuda.graph(g):` region on the path that leaves it: a read of
// a tensor the region binds or writes (its outputs), before any replay and
// before the step runs again eagerly, reads memory no kernel has written
// for this step. A lazy runner that captures on its first call and replays
// on later ones (`if g is None: capture ... else: g.replay()`, then the
// outputs are read) returns it on every first call.
func runOutputBeforeReplay(p *Pass) {
	r := p.Region
	if r == nil || r.Ctx != Captured || !r.IsWith() || inLoop(r.Node) {
		return
	}
	cont, ok := continuation(r.Node)
	if !ok || len(cont) == 0 {
		return
	}
	outs := captureOutputs(p, r)
	if len(outs) == 0 {
		return
	}
	src := p.Src()
	m := newModel(p)
	graph := ""
	if _, g := graphCall(r.Node); g != nil {
		graph = g.Text(src)
	}
	for _, s := range cont {
		if replaysIn(p, s) {
			return
		}
		u := firstRead(p, m, s, outs, graph)
		if u.node == nil {
			if s.Is("return_statement", "raise_statement") {
				return
			}
			// An output the statement computes again (`out = step(x)`,
			// `step_into(out)`) holds this step's values from here on;
			// one it binds to an output (`tok = self.out`, `out =
			// out[:n]`) is that output.
			for name := range outs {
				if u.aliases[name] {
					continue
				}
				if rebindsName(s, name, src) || writtenIn(p.Proj, p.File, p.Fn, []*Node{s}, name, false) != "" {
					delete(outs, name)
				}
			}
			if len(outs) == 0 {
				return
			}
			continue
		}
		what := "`" + u.name + "`"
		if o := outs[u.name]; o != "" {
			what += " (it holds `" + o + "`, an output of the region)"
		}
		msg := fmt.Sprintf("%s is read after the capture region with no replay in between: capture records the graph's kernels without running them, so on the call that captures, it holds what its memory held before (uninitialised, or an earlier step's values), not this step's result; replay the graph right after capturing it (`%s.replay()`), or run the step eagerly before the capture",
			what, graphOr(graph))
		switch {
		case u.returned:
			if !resultUsed(p) {
				return
			}
			p.Report(u.node, msg, nil)
		case u.nested != "":
			p.ReportAssuming(u.node, msg, nil, "the read's condition `"+u.nested+"` holds on the call that captures")
		case u.member != "":
			p.ReportAssuming(u.node, msg, nil, "assumes `"+u.member+"` compares the output by value: `in` on a list or a tuple tries `==` on each element before an identical one, which reads a one-element tensor's data (a larger one's raises); where the identical element comes first, nothing is read")
		case u.store != "":
			p.ReportAssuming(u.node, msg, nil, "assumes `"+u.store+"` is a tensor: an item store into a tensor copies the output's data, one into a list or a dict keeps a reference and reads nothing")
		default:
			p.Report(u.node, msg, nil)
		}
		return
	}
}

func graphOr(g string) string {
	if g == "" {
		return "g"
	}
	return g
}

// graphCall is the first call in with statement w's header (the
// `torch.cuda.graph(g, ...)` of a capture region) and its first positional
// argument, the graph, or nils.
func graphCall(w *Node) (call, graph *Node) {
	Walk(w, func(x *Node) bool {
		if call != nil || x.Kind() == "block" {
			return false
		}
		if x.Kind() == "call" {
			call = x
			if args := x.Get("arguments"); args != nil {
				if pos := positional(args); len(pos) > 0 {
					graph = pos[0]
				}
			}
			return false
		}
		return true
	})
	return call, graph
}

// capturesGraph: with statement w captures a graph (`with
// torch.cuda.graph(g):`).
func capturesGraph(p *Pass, w *Node) bool {
	call, graph := graphCall(w)
	if call == nil || graph == nil {
		return false
	}
	q := p.File.Qualify(call.Get("function"))
	return q == "torch.cuda.graph" || q == "torch.cuda.graphs.graph"
}

// continuation are the statements that run after statement n, in order, on
// the path that leaves it normally: the rest of its block, then the rest of
// each enclosing block up to the function's body (an if's other arms run
// instead, so they are left out). Not ok inside a loop, where what follows
// also runs before n again.
func continuation(n *Node) (out []*Node, ok bool) {
	for {
		block := n.Parent()
		if block == nil {
			return out, true
		}
		if block.Is("block", "module") {
			after := false
			for _, s := range block.NamedChildren() {
				if after && s.Kind() != "comment" {
					out = append(out, s)
				}
				if s == n {
					after = true
				}
			}
		}
		up := block.Parent()
		if block.Kind() == "module" || up == nil {
			return out, true
		}
		switch up.Kind() {
		case "function_definition", "class_definition", "lambda":
			return out, true
		case "for_statement", "while_statement":
			return nil, false
		case "elif_clause", "else_clause", "except_clause", "finally_clause":
			n = up.Parent()
		default:
			n = up
		}
		if n == nil || n.Is("for_statement", "while_statement") {
			return nil, false
		}
	}
}

// captureOutputs are the names (and attribute chains) the region binds
// (`out = model(x)`, `self.out = ...`) or writes in place (`buf.copy_(y)`,
// a buffer passed to a function or kernel that stores into it).
func captureOutputs(p *Pass, r *Region) map[string]string {
	src := p.Src()
	outs := map[string]string{}
	var cands []string
	walkCode(r.Stmts, func(x *Node) bool {
		switch x.Kind() {
		case "assignment", "augmented_assignment":
			l := x.Get("left")
			if l == nil {
				break
			}
			if l.Kind() == "attribute" {
				outs[l.Text(src)] = ""
				break
			}
			targets := map[*Node]bool{}
			markTargets(l, targets)
			for t := range targets {
				outs[t.Text(src)] = ""
			}
		case "argument_list":
			for _, a := range x.NamedChildren() {
				if a.Kind() == "keyword_argument" {
					a = a.Get("value")
				}
				a = Unparen(a)
				for a != nil && a.Kind() == "subscript" {
					a = Unparen(a.Get("value")) // an item of a list of buffers
				}
				if a != nil && a.Is("identifier", "attribute") {
					cands = append(cands, a.Text(src))
				}
			}
		case "call":
			if recv, _, _ := methodCall(x, src); recv != nil && Unparen(recv).Is("identifier", "attribute") {
				cands = append(cands, Unparen(recv).Text(src))
			}
		}
		return true
	})
	// A buffer the function also writes before the region (the step run
	// eagerly first, in the same call) holds this step's values; setting
	// an item of a list of buffers (`outs[i] = bufs[i][:n]`) computes none.
	pre := precedingStmts(p.Fn, r.Node)
	for _, c := range cands {
		if _, ok := outs[c]; !ok && !strings.HasPrefix(c, "torch.") && writtenIn(p.Proj, p.File, p.Fn, r.Stmts, c, true) != "" && (len(pre) == 0 || writtenIn(p.Proj, p.File, p.Fn, pre, c, false) == "") {
			outs[c] = ""
		}
	}
	return outs
}

// replaysIn: statement s replays a graph: `g.replay()`, a bound `replay`
// kept to call, a callable made here that replays (`lambda: g.replay()`
// handed to a timer such as triton.testing.do_bench, a nested def), or a
// project function that does (one call deep).
func replaysIn(p *Pass, s *Node) bool {
	found := false
	src := p.Src()
	Walk(s, func(x *Node) bool {
		if found {
			return false
		}
		if x.Is("lambda", "function_definition") {
			// Its code runs when it is called, which may be now (a timer
			// calls what it is given): a replay in it is one here too.
			Walk(x, func(y *Node) bool {
				if y.Kind() == "attribute" && y.Get("attribute").Text(src) == "replay" {
					found = true
				}
				return !found
			})
			return false
		}
		return true
	})
	if found {
		return true
	}
	walkCode([]*Node{s}, func(x *Node) bool {
		if found {
			return false
		}
		if x.Kind() == "attribute" && x.Get("attribute").Text(src) == "replay" {
			// `g.replay()`, or `run = g.replay` kept to call.
			found = true
			return false
		}
		if x.Kind() != "call" {
			return true
		}
		for _, e := range p.Proj.G.Callees(x) {
			walkCode(e.Callee.BodyStmts(), func(y *Node) bool {
				if found {
					return false
				}
				if y.Kind() == "attribute" && y.Get("attribute").Text(e.Callee.File.Src) == "replay" {
					found = true
				}
				return true
			})
		}
		return !found
	})
	return found
}

// rebindsName: s binds name again (`out = ...`, `for out in ...`).
func rebindsName(s *Node, name string, src []byte) bool {
	found := false
	walkCode([]*Node{s}, func(x *Node) bool {
		if found {
			return false
		}
		if x.Kind() == "assignment" {
			if l := x.Get("left"); l != nil && l.Text(src) == name {
				found = true
			}
		}
		return true
	})
	return found
}

type outputRead struct {
	node     *Node
	name     string
	returned bool
	nested   string // the condition of an if around the read, or ""
	store    string // an item store's target the value model cannot type, or ""
	member   string // a membership test by value (memberByValue), or ""
	// aliases are the names statement s binds to an output, when it reads
	// none (node nil).
	aliases map[string]bool
}

// firstRead finds the first read of an output's data in statement s. A
// binding to a local (`x = out[:n]`) or an append to a local list makes
// that local an output too; storing it (`self.o = out`, `d[k] = out` for a
// dict or a list), its metadata (`out.shape`), `is None` tests and `del`
// read no data. An item store into a tensor (`hist[:, i] = out`) copies
// the output's data: a read where m proves the target a tensor, a read
// that names the assumption where m cannot type it.
func firstRead(p *Pass, m *model, s *Node, outs map[string]string, graph string) outputRead {
	src := p.Src()
	res := outputRead{aliases: map[string]bool{}}
	walkCode([]*Node{s}, func(x *Node) bool {
		if res.node != nil {
			return false
		}
		if x.Kind() == "with_statement" && capturesGraph(p, x) {
			// Another capture: it records its kernels, running none, so
			// what it passes the outputs to reads nothing now (its replay,
			// after this graph's, reads them).
			return false
		}
		if !x.Is("identifier", "attribute") {
			return true
		}
		origin, isOut := outs[x.Text(src)]
		if !isOut {
			return true
		}
		if origin == "" {
			origin = x.Text(src)
		}
		u := x
		for {
			par := u.Parent()
			for par != nil && par.Kind() == "parenthesized_expression" {
				u, par = par, par.Parent()
			}
			if par == nil {
				break
			}
			if par.Kind() == "subscript" && par.Get("value") == u || par.Is("tuple", "list", "expression_list", "pair", "dictionary") {
				// An item of it, or a container literal holding it: what
				// happens to that happens to the output.
				u = par
				continue
			}
			if call := par.Parent(); par.Kind() == "argument_list" && call != nil && torchapi.PytreeWalkers[p.File.Qualify(call.Get("function"))] {
				// Its leaves or its structure taken apart (`tree_leaves(out)`):
				// they are the outputs, and walking them read nothing.
				u = call
				continue
			}
			if par.Kind() == "attribute" && par.Get("object") == u {
				name := par.Get("attribute").Text(src)
				if metaAttrs[name] || metaMethods[name] {
					return false
				}
				if call := par.Parent(); (viewMethods[name] || layoutViews[name]) && call != nil && call.Kind() == "call" && call.Get("function") == par {
					u = call
					continue
				}
			}
			break
		}
		par := u.Parent()
		read := false
		switch {
		case par == nil:
		case par.Kind() == "assignment" && par.Get("right") == u:
			// A local alias is an output too; a store into an attribute, a
			// list or a dict keeps it for later, reading nothing; one into
			// a tensor's items copies it.
			l := par.Get("left")
			switch {
			case l == nil:
			case l.Kind() == "identifier":
				outs[l.Text(src)] = origin
				res.aliases[l.Text(src)] = true
			case l.Kind() == "subscript" && !u.Is("tuple", "list", "expression_list", "dictionary"):
				// (A container literal holding the output goes into a
				// list or a dict: a tensor's items take numbers.)
				obj := l.Get("value")
				switch {
				case m.Kind(obj) == KTensor:
					read = true
				case m.Kind(obj) == KUnknown && !onlyContainers(p, obj):
					res = outputRead{node: u, name: x.Text(src), nested: conditionAround(u, s, src), store: obj.Text(src)}
					return false
				}
			}
		case par.Kind() == "argument_list":
			call := par.Parent()
			recv, meth, _ := methodCall(call, src)
			if recv != nil && (meth == "append" || meth == "extend" || meth == "insert") {
				if recv = Unparen(recv); recv.Kind() == "identifier" {
					outs[recv.Text(src)] = origin
				}
				break
			}
			// torch's operations read their tensor arguments (not those
			// that take only its shape: `torch.zeros_like(out)`, nor
			// metadata and predicates); what a project function or a
			// callback does with one is not known.
			q := p.File.Qualify(call.Get("function"))
			read = strings.HasPrefix(q, "torch.") && !strings.HasPrefix(q, "torch.cuda.") && !likeFactories[q] && !strings.HasSuffix(q, "_like") && !torchapi.ReadsNoData(q)
		case par.Kind() == "attribute" && par.Get("object") == u:
			// A method of the output: it reads its data, unless it writes
			// it (`out.copy_(y)`, `out.zero_()`).
			call := par.Parent()
			name := par.Get("attribute").Text(src)
			read = call != nil && call.Kind() == "call" && call.Get("function") == par && !strings.HasSuffix(name, "_") && !tensorStoreMethod(name)
		case par.Is("binary_operator", "unary_operator", "boolean_operator", "not_operator"):
			read = true
		case par.Kind() == "comparison_operator":
			// `out is None` reads no data. A membership test in a set or
			// a dict hashes by identity; in a list or a tuple (`t in
			// outs`) it compares each element before an identical one
			// with `==`, which reads both tensors' data: a one-element
			// tensor's truth is its value, a larger one's raises (the GPU
			// probe cg204_pytree_flatten_neg's first version faulted so).
			// Whether identity meets first is not known: the read names
			// that assumption.
			if member := memberByValue(p, par); member != "" {
				res = outputRead{node: u, name: x.Text(src), member: member}
				return false
			}
			read = !identityTest(par)
		case par.Is("if_statement", "elif_clause", "while_statement", "conditional_expression") && par.Get("condition") == u:
			read = true
		case par.Kind() == "return_statement":
			if graph != "" && u.Is("tuple", "expression_list") && strings.Contains(u.Text(src), graph) {
				break // handed on with its graph: the caller replays it
			}
			res = outputRead{node: u, name: x.Text(src), returned: true}
			return false
		}
		if !read {
			return false
		}
		res = outputRead{node: u, name: x.Text(src), nested: conditionAround(u, s, src)}
		return false
	})
	if res.node != nil {
		res.aliases = nil
	}
	return res
}

// onlyContainers: the points-to solve gives n values, all containers made
// at a site (a list, a dict): not a tensor.
func onlyContainers(p *Pass, n *Node) bool {
	vs := p.Values(n)
	for _, v := range vs {
		if v.Kind != flow.VCont {
			return false
		}
	}
	return len(vs) > 0
}

// conditionAround is the condition of the innermost if (or while) between
// u and statement s, or "".
func conditionAround(u, s *Node, src []byte) string {
	for x := u.Parent(); x != nil && x != s.Parent(); x = x.Parent() {
		if x.Is("if_statement", "elif_clause", "while_statement") {
			if c := x.Get("condition"); c != nil {
				t := c.Text(src)
				if len(t) > 40 {
					t = t[:40] + "..."
				}
				return t
			}
		}
		if x == s {
			break
		}
	}
	return ""
}

// resultUsed says whether a call of the pass's function reads what it
// returns: calls a method of it, does arithmetic or a comparison with it,
// passes it to a torch operation, indexes it. A result stored, bound to a
// name, passed to a project function or returned again is not known to be
// read; nor are the results of a function whose calls are not known.
func resultUsed(p *Pass) bool {
	for _, e := range p.Proj.G.In[p.Fn] {
		if e.Site == nil || e.Caller == nil {
			continue
		}
		csrc := e.Caller.File.Src
		par := e.Site.Parent()
		for par != nil && par.Kind() == "parenthesized_expression" {
			par = par.Parent()
		}
		switch {
		case par == nil:
		case par.Kind() == "attribute" && par.Get("object") != nil:
			name := par.Get("attribute").Text(csrc)
			if !metaAttrs[name] && !metaMethods[name] && !strings.HasSuffix(name, "_") {
				return true
			}
		case par.Kind() == "subscript", par.Is("binary_operator", "unary_operator"):
			return true
		case par.Kind() == "comparison_operator":
			if !strings.Contains(par.Text(csrc), " is ") {
				return true
			}
		case par.Kind() == "argument_list":
			if q := e.Caller.File.Qualify(par.Parent().Get("function")); strings.HasPrefix(q, "torch.") {
				return true
			}
		}
	}
	return false
}

// tensorStoreMethod: a list or dict method that stores its argument.
func tensorStoreMethod(name string) bool {
	switch name {
	case "append", "extend", "insert", "update", "setdefault", "add", "put":
		return true
	}
	return false
}

// memberByValue is comparison c's text where it is a membership test (`in`,
// `not in`) whose container may compare by value: anything but a set or a
// dict (a display, a comprehension, `set(...)`, `dict(...)` or
// `frozenset(...)` written there), "" otherwise.
func memberByValue(p *Pass, c *Node) string {
	member := false
	for _, k := range c.Children() {
		if !k.Named() && (k.Kind() == "in" || k.Kind() == "not in") {
			member = true
		}
	}
	if !member {
		return ""
	}
	src := p.Src()
	named := c.NamedChildren()
	right := Unparen(named[len(named)-1])
	if hashedContainer(right, src) {
		return ""
	}
	return c.Text(src)
}

// hashedContainer: n makes a set or a dict, whose membership test hashes
// (a tensor hashes by identity).
func hashedContainer(n *Node, src []byte) bool {
	switch n.Kind() {
	case "set", "dictionary", "set_comprehension", "dictionary_comprehension":
		return true
	case "call":
		if f := Unparen(n.Get("function")); f != nil && f.Kind() == "identifier" {
			switch f.Text(src) {
			case "set", "frozenset", "dict":
				return true
			}
		}
	}
	return false
}
