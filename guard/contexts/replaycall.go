package contexts

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// The code before a call that replays a graph prepares that replay, as the
// code before a `.replay()` of the same function does: an engine's step
// fills the batch's metadata, then calls the runner's forward, which
// replays (`wrapper.update_metadata(meta); out = self.forward(batch)`,
// where forward picks the graph and replays it). A replaying function is
// one that holds a graph's `.replay()` (graphReplays), or calls one through
// proved call edges; the statements before each proved call of one are a
// replay-prep region of the caller, trimmed as trimReplayPrep trims those
// before a `.replay()` (a statement that runs a capture first is set-up).
// Only proved edges count, here and in the chain down to the replay, so the
// call is proved to reach a replay: traced, resolved and annotated edges (a
// method's call of `self.forward` on its own class), as the severity model
// counts them; resolved only where the solve passed its fact budget, where
// a declared type may stand for a value the budget cut
// (analysis.seededEdges). That the call comes after the graph's capture is
// not proved (a call in set-up or warm-up replays nothing): the region says
// so (Region.Assumed), and its findings are warnings.

// replayingFns are the functions that replay a graph: those that hold a
// graph's `.replay()`, and their callers through proved edges.
func (a *analyser) replayingFns() map[*index.Function]bool {
	if a.replaying != nil {
		return a.replaying
	}
	out := map[*index.Function]bool{}
	a.replaying = out
	min := a.provedKind()
	var queue []*index.Function
	for fn := range a.replayers {
		out[fn] = true
		queue = append(queue, fn)
	}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		for _, e := range a.g.In[fn] {
			if e.Caller == nil || out[e.Caller] || e.Caller.Kind == index.TopLevel || e.Kind.Strength() < min.Strength() {
				continue
			}
			out[e.Caller] = true
			queue = append(queue, e.Caller)
		}
	}
	return out
}

// replayCallRegions adds, to each function that calls a replaying
// function through a proved edge, the replay-prep region before that call.
func (a *analyser) replayCallRegions() {
	if len(a.replayers) == 0 {
		return
	}
	replaying := a.replayingFns()
	min := a.provedKind()
	capturing := a.runsCapture(flow.Annotated)
	captures := a.captureRegionsByFn()
	// The regions' Replays, by callee: many calls reach one replaying
	// function (the slices are read only).
	replayed := map[*index.Function][]*Region{}
	fns := make([]*index.Function, 0, len(replaying))
	for fn := range replaying {
		fns = append(fns, fn)
	}
	sort.Slice(fns, func(i, j int) bool {
		if fns[i].File.Path != fns[j].File.Path {
			return fns[i].File.Path < fns[j].File.Path
		}
		return fns[i].Def.Start < fns[j].Def.Start
	})
	for _, fn := range fns {
		if fn.Body == nil {
			continue
		}
		for _, call := range callsIn(fn.BodyStmts()) {
			if a.replayers[fn][call] {
				continue // its own `.replay()`: findRegions' region
			}
			var callee *index.Function
			for _, e := range a.g.Callees(call) {
				if replaying[e.Callee] && e.Kind.Strength() >= min.Strength() && e.Callee != fn {
					callee = e.Callee
					break
				}
			}
			if callee == nil || capturing[callee] && a.capturesFirst(callee, replaying, capturing, captures, map[*index.Function]bool{}) {
				// A callee that captures before each replay it makes (a
				// warm-up that captures and replays each batch size, a
				// timing helper) is set-up: what comes before its call runs
				// before that capture. One that replays a graph it captured
				// on an earlier call (on a cache miss) is not.
				continue
			}
			// The call's own arguments run before it, and so before the
			// replay it makes: `self.loop(self.prefill(ids), n)` prepares it.
			pre := append(a.replayPrepStmts(fn, call, captures[fn]), argCalls(call)...)
			if a.runsOnce(fn) && !a.ownerGiven(fn, call) && !a.capturesAmong(pre, capturing) {
				// Its graph is captured in this run, through the call (a
				// runner that captures on its first call): what comes
				// before the loop around the call runs before that capture.
				pre = inLoopAround(fn, call, pre)
			}
			if len(pre) == 0 {
				continue
			}
			replays, ok := replayed[callee]
			if !ok {
				replays = a.replayedCaptures(callee, replaying, captures)
				replayed[callee] = replays
			}
			a.res.Regions = append(a.res.Regions, &Region{Fn: fn, Ctx: ReplayPrep, Node: call, Stmts: pre,
				What: fmt.Sprintf("before %s(), which replays a graph", callee.Name), ByCall: callee,
				Replays: replays,
				// No line in the text: a finding's message quotes no line, so
				// that an edit that moves lines keeps the stored result.
				Assumed: fmt.Sprintf("assumes %s runs after the graph is captured, as well as before: it calls %s, which replays a graph (a call before the capture, in set-up or warm-up, replays nothing)",
					fn.FullName(), callee.FullName())})
		}
	}
}

// capturesFirst: every replay fn makes is preceded, in fn, by a capture
// that runs on each path to it: a statement before it (in its block or an
// enclosing one) that holds a capture region or a call of a function that
// runs one, outside any if statement of that statement (`if key not in
// self.graphs: self.capture(key)` captures on a miss only). A replay made
// through a callee that itself captures first counts as captured first.
func (a *analyser) capturesFirst(fn *index.Function, replaying, capturing map[*index.Function]bool, captures map[*index.Function][]*Region, busy map[*index.Function]bool) bool {
	if memo, ok := a.firstMemo[fn]; ok {
		return memo
	}
	if busy[fn] || fn.Body == nil {
		return false
	}
	busy[fn] = true
	defer delete(busy, fn)
	min := a.provedKind()
	ok := true
	for _, call := range callsIn(fn.BodyStmts()) {
		site := a.replayers[fn][call]
		if !site {
			for _, e := range a.g.Callees(call) {
				if replaying[e.Callee] && e.Kind.Strength() >= min.Strength() && e.Callee != fn &&
					!(capturing[e.Callee] && a.capturesFirst(e.Callee, replaying, capturing, captures, busy)) {
					site = true
				}
			}
		}
		if site && !a.capturedBefore(fn, call, capturing, captures[fn]) {
			ok = false
			break
		}
	}
	if a.firstMemo == nil {
		a.firstMemo = map[*index.Function]bool{}
	}
	a.firstMemo[fn] = ok
	return ok
}

// capturedBefore: a statement before call in fn captures on every path
// (capturesFirst).
func (a *analyser) capturedBefore(fn *index.Function, call *Node, capturing map[*index.Function]bool, regions []*Region) bool {
	min := flow.Annotated
	for _, s := range precedingStmts(fn, call) {
		found := false
		syntax.Walk(s, func(n *Node) bool {
			if found || n.Is("if_statement", "function_definition", "class_definition", "decorated_definition", "lambda", "try_statement") {
				return false
			}
			for _, r := range regions {
				if r.Node == n {
					found = true
				}
			}
			if n.Kind() == "call" {
				for _, e := range a.g.Callees(n) {
					if capturing[e.Callee] && e.Kind.Strength() >= min.Strength() {
						found = true
					}
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// capturesBesides: fn runs a capture after call, other than through it: a
// capture region of its own, or a later call of a function that captures
// without replaying a graph it keeps (a set-up routine, or a warm-up that
// captures before each replay: capturesFirst). Such a function is set-up,
// and call, before that capture, replays nothing yet. A later call that
// captures on a cache miss and replays otherwise (a sampler's graph made
// on first use) says nothing of the kind, except in a constructor: it
// runs once an object, so such a call captures then (the object's cache
// is empty), after the call (a model's `__init__` that runs a dummy
// forward, then captures its graphs).
func (a *analyser) capturesBesides(fn *index.Function, call *Node, capturing map[*index.Function]bool) bool {
	ctor := fn.Class != nil && fn.Name == "__init__"
	for _, r := range a.res.Regions {
		if r.Fn == fn && r.Ctx == Captured && r.What != guardRegion && r.Node.Start > call.End {
			return true
		}
	}
	replaying := a.replayingFns()
	captures := a.captureRegionsByFn()
	for _, c := range callsIn(fn.BodyStmts()) {
		if c.Start <= call.End {
			continue
		}
		for _, e := range a.g.CapturedCallees(c) {
			if !capturing[e.Callee] || e.Kind.Strength() < flow.Annotated.Strength() {
				continue
			}
			if !replaying[e.Callee] || ctor || a.capturesFirst(e.Callee, replaying, capturing, captures, map[*index.Function]bool{}) {
				return true
			}
		}
	}
	return false
}

// replayedCaptures are the capture regions of the graphs a call of callee
// replays: the functions holding the `.replay()` it reaches through proved
// calls of replaying functions, and for each the capture regions of its
// class (its methods', a runner that captures in one method and replays in
// another) or, for a function of no class, its own. Nil where one of them
// has none: its graph is captured elsewhere, and any capture may be it.
func (a *analyser) replayedCaptures(callee *index.Function, replaying map[*index.Function]bool, captures map[*index.Function][]*Region) []*Region {
	min := a.provedKind()
	seen := map[*index.Function]bool{callee: true}
	queue := []*index.Function{callee}
	var holders []*index.Function
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		if len(a.replayers[fn]) > 0 {
			holders = append(holders, fn)
		}
		for _, e := range a.g.Out[fn] {
			if replaying[e.Callee] && !seen[e.Callee] && e.Kind.Strength() >= min.Strength() {
				seen[e.Callee] = true
				queue = append(queue, e.Callee)
			}
		}
	}
	var out []*Region
	done := map[*Region]bool{}
	for _, h := range holders {
		n := 0
		for fn, rs := range captures {
			if fn != h && (h.Owner() == nil || fn.Owner() != h.Owner()) {
				continue
			}
			for _, r := range rs {
				if r.What == guardRegion {
					continue
				}
				n++
				if !done[r] {
					done[r] = true
					out = append(out, r)
				}
			}
		}
		if n == 0 {
			return nil
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Fn.File.Path != out[j].Fn.File.Path {
			return out[i].Fn.File.Path < out[j].Fn.File.Path
		}
		return out[i].Node.Start < out[j].Node.Start
	})
	return out
}

// runsOnce: fn runs once a process (or a test): a module-level `main`
// that nothing calls (a program's entry, a console script's target), a
// process's or a thread's entry that nothing calls (testedEntries), a
// test that nothing in the project calls (a `test*` function or method of
// a test file: the runner calls it once, and what it builds is its own), a
// function nested in one of those that nothing in the project calls (a
// test's Ray task or spawned worker, started once by the code around it),
// or a function every call of which is module-level code (which runs
// once, when the module is run or imported: a `__main__` block, a
// package's `__main__.py`), or one call site of a function that itself
// runs once, outside any loop. Its code before a call that replays runs
// before that call's first replay; only a loop around the call runs it
// again between replays. Before the first replay is before the capture
// only where the call makes the capture: replayCallRegions keeps the code
// of a function that captures before the call, or replays an object it is
// given (ownerGiven).
func (a *analyser) runsOnce(fn *index.Function) bool {
	return a.runsOnceIn(fn, map[*index.Function]bool{}, 0)
}

func (a *analyser) runsOnceIn(fn *index.Function, busy map[*index.Function]bool, depth int) bool {
	if memo, ok := a.onceMemo[fn]; ok {
		return memo
	}
	if busy[fn] || depth > 8 {
		return false // a cycle, or a chain too long to follow: it may run again
	}
	busy[fn] = true
	defer delete(busy, fn)
	once := a.runsOnceUncached(fn, busy, depth)
	// A no that a cycle or the depth bound gave is kept too: it only keeps
	// more code replay-prep, and every function is then decided once.
	if a.onceMemo == nil {
		a.onceMemo = map[*index.Function]bool{}
	}
	a.onceMemo[fn] = once
	return once
}

func (a *analyser) runsOnceUncached(fn *index.Function, busy map[*index.Function]bool, depth int) bool {
	in := a.g.In[fn]
	if len(in) == 0 {
		switch {
		case fn.Outer == nil:
			return false
		case a.testedEntries()[fn]:
			// A process's or a thread's entry (the target a launcher is
			// handed: Process(target=f), spawn(f)): the new process runs
			// it once, as a program runs its main.
			return true
		case fn.Outer.Kind == index.TopLevel:
			return fn.Name == "main" && fn.Class == nil || testEntry(fn)
		default:
			return fn.Class == nil && TestFile(fn.File) && a.runsOnceIn(fn.Outer, busy, depth+1)
		}
	}
	sites := map[*index.Function]*Node{}
	for _, e := range in {
		if e.Caller == nil || e.Site == nil || loopAround(e.Caller, e.Site) != nil {
			return false
		}
		if e.Caller.Kind == index.TopLevel {
			continue
		}
		// A caller that runs once and calls fn at one site: a second site
		// may run fn after the first one's capture.
		if prev, ok := sites[e.Caller]; ok && prev != e.Site || !a.runsOnceIn(e.Caller, busy, depth+1) {
			return false
		}
		sites[e.Caller] = e.Site
	}
	return true
}

// ownerGiven: the object through which call replays comes from outside fn:
// the receiver's root is a parameter, a global or a module's name, or, for
// a plain call, an argument's root is one that holds a project object (a
// fixture, a caller or a module may have captured its graph before fn
// runs, so fn's code before the call may run after that capture). An
// object a call makes here (`Runner(model).step()`) is this run's own,
// and a plain call's settings (`generate(model, max_tokens)`) hold none.
func (a *analyser) ownerGiven(fn *index.Function, call *Node) bool {
	src := fn.File.Src
	root := func(x *Node) *Node {
		for x != nil && x.Is("attribute", "subscript", "parenthesized_expression") {
			switch x.Kind() {
			case "attribute":
				x = x.Get("object")
			case "subscript":
				x = x.Get("value")
			default:
				if inner := syntax.Unparen(x); inner != x {
					x = inner
					continue
				}
				return nil
			}
		}
		if x == nil || x.Kind() != "identifier" {
			return nil
		}
		name := x.Text(src)
		if fn.HasParam(name) || fn.Globals[name] || !fn.Locals[name] {
			return x
		}
		return nil
	}
	f := syntax.Unparen(call.Get("function"))
	if f != nil && f.Kind() == "attribute" {
		return root(f.Get("object")) != nil
	}
	if args := call.Get("arguments"); args != nil {
		for _, x := range args.NamedChildren() {
			if x.Kind() == "keyword_argument" {
				x = x.Get("value")
			}
			r := root(x)
			if r == nil {
				continue
			}
			for _, v := range a.g.Values(r) {
				if v.Kind == flow.VInst {
					return true
				}
			}
		}
	}
	return false
}

// capturesAmong: a statement of stmts runs a capture (a call of a
// function that does, through edges of annotated strength or stronger):
// the code after it runs between that capture and the replay
// (trimReplayPrep keeps it).
func (a *analyser) capturesAmong(stmts []*Node, capturing map[*index.Function]bool) bool {
	for _, c := range callsIn(stmts) {
		for _, e := range a.g.CapturedCallees(c) {
			if capturing[e.Callee] && e.Kind.Strength() >= flow.Annotated.Strength() {
				return true
			}
		}
	}
	return false
}

// testEntry: fn is a test a test runner calls, once: a function or method
// whose name starts with `test`, in a test file (TestFile), module-level
// or of a module-level class.
func testEntry(fn *index.Function) bool {
	return strings.HasPrefix(strings.ToLower(fn.Name), "test") && TestFile(fn.File) && fn.Outer != nil && fn.Outer.Kind == index.TopLevel
}

// loopAround is the innermost for or while statement of fn around n, nil
// where there is none.
func loopAround(fn *index.Function, n *Node) *Node {
	for x := n.Parent(); x != nil && x != fn.Body; x = x.Parent() {
		if x.Is("function_definition", "class_definition", "lambda") {
			return nil
		}
		if x.Is("for_statement", "while_statement") {
			return x
		}
	}
	return nil
}

// inLoopAround keeps the statements of stmts inside the innermost loop of
// fn around call: in a function that runs once, only they run again before
// a later replay (none where no loop holds the call).
func inLoopAround(fn *index.Function, call *Node, stmts []*Node) []*Node {
	loop := loopAround(fn, call)
	if loop == nil {
		return nil
	}
	var out []*Node
	for _, s := range stmts {
		if s.Start >= loop.Start && s.End <= loop.End {
			out = append(out, s)
		}
	}
	return out
}

// captureRegionsByFn are the capture regions of each function, made once
// (findRegions has found them all before the by-call regions are made).
func (a *analyser) captureRegionsByFn() map[*index.Function][]*Region {
	if a.captureRegions == nil {
		a.captureRegions = map[*index.Function][]*Region{}
		for _, r := range a.res.Regions {
			if r.Ctx == Captured {
				a.captureRegions[r.Fn] = append(a.captureRegions[r.Fn], r)
			}
		}
	}
	return a.captureRegions
}

// provedKind is the weakest edge kind that proves a call: annotated, or
// resolved where the solve passed its fact budget.
func (a *analyser) provedKind() flow.EdgeKind {
	if a.g.Saturated > 0 {
		return flow.Resolved
	}
	return flow.Annotated
}

// argCalls are call's arguments (their values, for keyword ones) that hold
// a call: what runs before the call does, in the order written.
func argCalls(call *Node) []*Node {
	var out []*Node
	al := call.Get("arguments")
	if al == nil || al.Kind() != "argument_list" {
		return nil
	}
	for _, x := range al.NamedChildren() {
		if x.Kind() == "keyword_argument" {
			x = x.Get("value")
		}
		if x != nil && len(callsIn([]*Node{x})) > 0 {
			out = append(out, x)
		}
	}
	return out
}
