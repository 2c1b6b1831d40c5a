package flow

import (
	"fmt"
	"iter"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Edge is one call edge: at Site (a call node, a decorator, a with item,
// a for statement for __iter__, nil for a property read's getter) Caller
// runs Callee.
type Edge struct {
	Site   *syntax.Node
	Caller *index.Function
	Callee *index.Function
	Kind   EdgeKind
}

// Graph is the project's call graph with the points-to facts behind it.
type Graph struct {
	// Resumed is how long the resumed part of a solve took
	// (Options.ResumeLast; 0 without it).
	Resumed time.Duration
	// ResumeBroken, after a resumed solve (Options.ResumeLast), says why
	// it may not be the whole solve: a decision of its first part whose
	// premise the added file changed, or a cap reached after it
	// (premise.go), each reason with how often it came up; "" where
	// neither happened.
	ResumeBroken string
	// Canceled: Options.Canceled said so before the solve ended, and the
	// graph holds nothing else (no edge, no fact): use none of it.
	Canceled bool
	Proj     *index.Project
	H        *index.Hierarchy
	// Out and In are each function's edges, in site order.
	Out map[*index.Function][]Edge
	In  map[*index.Function][]Edge
	// Dropped says, for call sites left without a callee on purpose, why
	// (a common method name on an unknown receiver, a tensor method...).
	Dropped map[*syntax.Node]string
	// Assumed lists what the analysis took for granted (decorators that
	// return their function).
	Assumed map[*syntax.Node]string
	// Registered are the functions registered as an operator's
	// implementation through torch.library (torchapi.OpRegistration): they
	// run wherever the operator runs.
	Registered map[*index.Function]bool
	// Facts is how many points-to facts the solve made; Saturated how many
	// nodes turned values away once they passed the budget (factBudget):
	// where it is not 0, calls through those nodes may be missing.
	Facts, Saturated int
	// Mixed is how many nodes are mixed (mixed.go): they turned guesses
	// away past guessCap, or one such node's values reach them. Calls by
	// name through them make no edge, so calls among the weakest kind of
	// edge (ByName) may be missing there.
	Mixed int
	// Flooded are, when Saturated is not 0, the values in the most nodes,
	// most first (floodedValues): what passed the budget.
	Flooded []Flood
	// Merges are, when Saturated is not 0, the named places where the most
	// flows of many values met (mergePoints).
	Merges []Merge
	// Hubs, when Saturated is not 0, measures the two mixing places seen
	// in solves that passed the budget (hubs).
	Hubs Hubs
	// Constraints is how many constraints the analysis made.
	Constraints int
	bySite      map[*syntax.Node][]Edge
	// wrapped are the edges of a summarized wrapper's call of what it
	// wraps (wrapdeco.go), by site: every function the decorator wraps.
	wrapped map[*syntax.Node][]Edge
	s       *solver
	pts     []ptsSet // the solved points-to sets, by NID
	// instCall is what calling an instance of each class with instances
	// runs (instanceCall), worked out once: CallTargets meets the same
	// classes in set after set, thousands in a flooded one, and walked
	// each one's MRO by name every time (NeMo's package: 3.7 of 7.5 s of
	// contexts). Read only once made, so the rules share it.
	instCall map[*index.Class]*index.Function
	// instFields are the attribute nodes of the instance objects (one a
	// class) and of the class objects, by (value, interned name) as the
	// solver keyed them, with the names and each class's instance and class
	// values (InstanceField, ClassField).
	instFields map[uint64]NID
	names      map[string]int32
	instVal    map[*index.Class]VID
	classVal   map[*index.Class]VID
}

// InstanceField are the values attribute attr of c's instances holds
// (every store into it through any expression that holds one of them),
// and ok false where the analysis has no such field: no instance of c,
// no store or read of attr on one. One abstract object stands for all of
// c's instances, so this is what any instance of c may hold there.
func (g *Graph) InstanceField(c *index.Class, attr string) (vals []ValueInfo, ok bool) {
	return g.objField(g.instVal, c, attr)
}

// ClassField are the values attribute attr of class c itself holds where
// the analysis made that field: what is stored into `c.attr` (a method
// patched in from outside, `Base.step = fast_step`), besides c's own
// definitions, which the hierarchy answers.
func (g *Graph) ClassField(c *index.Class, attr string) (vals []ValueInfo, ok bool) {
	return g.objField(g.classVal, c, attr)
}

func (g *Graph) objField(objs map[*index.Class]VID, c *index.Class, attr string) (vals []ValueInfo, ok bool) {
	v, okv := objs[c]
	id, okn := g.names[attr]
	if !okv || !okn {
		return nil, false
	}
	n, okf := g.instFields[uint64(uint32(v))<<32|uint64(uint32(id))]
	if !okf {
		return nil, false
	}
	return g.valuesOf(n), true
}

// Options tunes the analysis.
type Options struct {
	// MaxRounds bounds the fallback phases (declared types, names); 0 is 6.
	MaxRounds int
	// RootHint reports methods that are roots whatever flows into them
	// (configured entry points, conventions): their self is seeded with
	// their whole class family.
	RootHint func(*index.Function) bool
	// Device is the device type graphs are captured on ("" is cuda): a
	// return on a branch for another device type is dead (guard/device).
	Device string
	// FactBudget replaces factBudget (tests).
	FactBudget int
	// FactCeiling replaces factCeiling (tests).
	FactCeiling int
	// ReverseBuild builds the files' constraints last file first: how
	// much of the graph depends on the order the files come in
	// (bench/order.sh, CAPGUARD_BUILD_ORDER=reverse).
	ReverseBuild bool
	// ResumeLast, a file's path, measures what a resumed solve would
	// give (bench/resume.sh, CAPGUARD_RESUME_LAST): every other file is
	// built and solved to the end first (each stratum: the propagation,
	// the seeds, the name fallback), then this file's constraints are
	// added and every stratum runs on from that state, as an incremental
	// solve would after the file was added. Graph.Resumed is the time the
	// second part took.
	ResumeLast string
	// Canceled, when set, is asked between files while the constraints
	// are built and every few thousand steps of the solve: once it says
	// true, Analyze stops and returns a Graph with only Canceled set
	// (capguard server drops a run a newer edit made stale).
	Canceled func() bool
	// FactDump, a path, is where the solved state is written under keys
	// that name code (factdump.go, CAPGUARD_FACTS): the measure and the
	// oracle of an incremental solve.
	FactDump string
}

// solveStrata runs the solve's strata to their end: the propagation,
// then rounds of the seeds (decorated names, declared types, setters)
// and, when they seed nothing, of the name fallbacks, each followed by
// the propagation again (maxRounds of them, 0 for 6).
func (s *solver) solveStrata(maxRounds int) {
	s.solve()
	rounds := maxRounds
	if rounds == 0 {
		rounds = 6
	}
	for r := 0; r < rounds && !s.stopped; r++ {
		n := s.seedDecorated()
		s.solve()
		n += s.seedDeclared()
		n += s.setterSeeds()
		s.solve()
		if n > 0 {
			continue
		}
		if s.nameFallback()+s.storeFallback() == 0 {
			break
		}
		s.solve()
	}
}

// forgetFilledDrops takes back the name fallback's drops whose premise a
// later step removed. The fallback drops a method call only while its
// callee is empty (nameFallback), and records why (an unknown receiver
// whose method name several unrelated classes define, a common method
// name, receivers without the attribute); a later round can fill that
// callee (a declared type, a seed, another fallback's guess reaching the
// receiver, or a file added to a resumed solve), and then the record
// said a call that has a callee had none.
func (s *solver) forgetFilledDrops() {
	for _, ms := range s.methodSites {
		if ms.callee >= 0 && s.nodes.at(ms.callee).pts.len() > 0 {
			delete(s.dropped, ms.call)
		}
	}
}

// Analyze builds the points-to graph and the call graph of a project.
func Analyze(p *index.Project, opts Options) *Graph {
	s := newSolver(p)
	s.rootHint = opts.RootHint
	s.device = opts.Device
	s.budget = factBudget
	if opts.FactBudget > 0 {
		s.budget = opts.FactBudget
	}
	s.ceiling = factCeiling
	if opts.FactCeiling > 0 {
		s.ceiling = opts.FactCeiling
	}
	files := p.Files
	if opts.ReverseBuild {
		files = slices.Clone(files)
		slices.Reverse(files)
	}
	var last []*index.File
	if opts.ResumeLast != "" {
		// The measure of a resumed solve: the other files built and
		// solved to the end, then the last one added and the solve run
		// on from there (ResumeLast).
		rest := make([]*index.File, 0, len(files))
		for _, f := range files {
			if f.Path == opts.ResumeLast {
				last = append(last, f)
			} else {
				rest = append(rest, f)
			}
		}
		files = rest
	}
	s.canceled = opts.Canceled
	if len(last) > 0 {
		s.premises = map[NID]string{}
	}
	s.build(files)
	s.builtQuals()
	s.solveStrata(opts.MaxRounds)
	var resumed time.Duration
	if len(last) > 0 {
		s.watchGeneric()
		s.resuming = true
		start := time.Now()
		s.build(last)
		s.solveStrata(opts.MaxRounds)
		resumed = time.Since(start)
		if s.genericChanged() {
			s.broke("a setter made generic got a call")
		}
	}
	if s.stopped {
		return &Graph{Proj: p, Canceled: true}
	}
	s.forgetFilledDrops()
	if opts.FactDump != "" {
		if err := s.dumpFacts(opts.FactDump); err != nil {
			fmt.Fprintln(os.Stderr, "capguard: fact dump:", err)
		}
	}
	g := &Graph{Resumed: resumed, ResumeBroken: s.resumeBroken(), Proj: p, H: s.h, Out: map[*index.Function][]Edge{}, In: map[*index.Function][]Edge{},
		Dropped: s.dropped, Assumed: s.assumed, Facts: s.facts, Saturated: s.saturated, Mixed: s.mixedNodes, bySite: map[*syntax.Node][]Edge{}, s: s}
	guesses := map[*syntax.Node]int{}
	mixed := s.mixedSites()
	for site := range mixed {
		if _, ok := g.Dropped[site]; ok {
			continue
		}
		g.Dropped[site] = fmt.Sprintf("its callee may also be one of the values that reach it only by name, through a mix of values (a summary container, a field set under a computed name, or an unknown receiver's method name) that held %d or more of them: one of them is no call edge", maxGuesses)
	}
	for k, st := range s.calls {
		if k.site != nil && kindOf(st) == ByName {
			guesses[k.site]++
		}
	}
	for k, st := range s.calls {
		if k.caller == k.callee && k.site == nil {
			continue
		}
		e := Edge{Site: k.site, Caller: k.caller, Callee: k.callee, Kind: kindOf(st)}
		if e.Kind == ByName && guesses[k.site] >= maxGuesses {
			// One of so many guesses is no call edge (maxGuesses).
			if _, ok := g.Dropped[k.site]; !ok {
				g.Dropped[k.site] = fmt.Sprintf("its callee is one of %d functions that reach it only by name (through a mix of values: a summary container, a field set under a computed name, or an unknown receiver's method name); a guess among %d or more is no call edge", guesses[k.site], maxGuesses)
			}
			continue
		}
		if e.Kind == ByName && mixed[k.site] {
			// Its guesses are some of many (mixed.go).
			continue
		}
		if k.site != nil && s.wrapCalls[k.site] {
			// A summarized wrapper's call of what it wraps (wrapdeco.go):
			// the callers of each decorated name reach it; only a capture
			// region around this call asks for it (CapturedCallees).
			if g.wrapped == nil {
				g.wrapped = map[*syntax.Node][]Edge{}
			}
			g.wrapped[k.site] = append(g.wrapped[k.site], e)
			continue
		}
		g.Out[k.caller] = append(g.Out[k.caller], e)
		g.In[k.callee] = append(g.In[k.callee], e)
		if k.site != nil {
			g.bySite[k.site] = append(g.bySite[k.site], e)
		}
	}
	order := func(es []Edge) {
		sort.Slice(es, func(i, j int) bool {
			a, b := es[i], es[j]
			if a.Caller != b.Caller {
				if a.Caller.File.Path != b.Caller.File.Path {
					return a.Caller.File.Path < b.Caller.File.Path
				}
				return a.Caller.Def.Start < b.Caller.Def.Start
			}
			as, bs := siteStart(a.Site), siteStart(b.Site)
			if as != bs {
				return as < bs
			}
			if a.Callee.File.Path != b.Callee.File.Path {
				return a.Callee.File.Path < b.Callee.File.Path
			}
			if a.Callee.Def.Start != b.Callee.Def.Start {
				return a.Callee.Def.Start < b.Callee.Def.Start
			}
			// Two sites that start together (`f(x)(y)` and its `f(x)`)
			// and run the same callee: s.calls is a map, so order them
			// by where they end, for the same order on every run.
			return siteEnd(a.Site) < siteEnd(b.Site)
		})
	}
	for _, es := range g.Out {
		order(es)
	}
	for _, es := range g.In {
		order(es)
	}
	for _, es := range g.bySite {
		order(es)
	}
	for _, es := range g.wrapped {
		order(es)
	}
	g.Constraints = s.cons.len()
	for _, n := range s.regNodes {
		s.nodes.at(n).pts.each(func(v VID, _ uint8) {
			if val := s.values[v]; (val.Kind == VFunc || val.Kind == VBound) && val.Fn != nil {
				if g.Registered == nil {
					g.Registered = map[*index.Function]bool{}
				}
				g.Registered[val.Fn] = true
			}
		})
	}
	if s.saturated > 0 {
		g.Flooded = s.floodedValues(3)
		g.Merges = s.mergePoints(2)
		g.Hubs = s.hubs()
	}
	// The queries read only the solved points-to sets and the values:
	// the constraints, edges and tables that made them (a third of the
	// analysis' memory on a kernel library) go, and the sets move to a
	// table of their own (a third of a node's size), page by page, so that
	// the node pages go as the sets leave them.
	g.pts = make([]ptsSet, s.nodes.len())
	for pi, page := range s.nodes.p.pages {
		for j := range page {
			if i := pi<<pageBits + j; i < len(g.pts) {
				g.pts[i] = page[j].pts
			}
		}
		s.nodes.p.pages[pi] = nil
	}
	g.s = &solver{values: s.values}
	g.instCall = map[*index.Class]*index.Function{}
	g.instVal = map[*index.Class]VID{}
	for i := range s.values {
		if v := &s.values[i]; v.Kind == VInst && v.Cls != nil {
			if _, ok := g.instCall[v.Cls]; !ok {
				g.instCall[v.Cls] = g.instanceCall(v.Cls)
			}
			g.instVal[v.Cls] = VID(i)
		}
	}
	g.classVal = map[*index.Class]VID{}
	for i := range s.values {
		if v := &s.values[i]; v.Kind == VClass && v.Cls != nil {
			g.classVal[v.Cls] = VID(i)
		}
	}
	g.instFields, g.names = map[uint64]NID{}, s.names
	for k, n := range s.fields {
		if v := VID(int32(uint32(k >> 32))); int(v) < len(s.values) && (s.values[v].Kind == VInst || s.values[v].Kind == VClass) {
			g.instFields[k] = n
		}
	}
	return g
}

// instanceCall is the method calling an instance of c runs: its
// __call__, else a module's forward (nil for none).
func (g *Graph) instanceCall(c *index.Class) *index.Function {
	m := g.H.Lookup(c, "__call__")
	if m == nil && g.H.IsModule(c) {
		m = g.H.Lookup(c, "forward")
	}
	return m
}

// maxGuesses bounds the callees a call site may have by name only (edge
// kind ByName): where more reach it, each is a guess among that many (a
// parameter called as a function that a mix of values floods: 285 test
// functions at one call of a compiler's graph runner), and a chain through
// one of them proves nothing, so none becomes an edge (Graph.Dropped says
// so). It is saturatedCap, the size at which a node is a mix.
const maxGuesses = saturatedCap

func siteStart(n *syntax.Node) int {
	if n == nil {
		return -1
	}
	return int(n.Start)
}

func siteEnd(n *syntax.Node) int {
	if n == nil {
		return -1
	}
	return int(n.End)
}

// Callees are the edges of one call site: the functions a call there
// runs. A summarized wrapper's call of the function it wraps has none: at
// each site that calls a decorated name, that call runs the one function
// decorated there, and that site's own edges reach it (a value or a
// return followed through the wrapper would take every function the
// decorator wraps).
func (g *Graph) Callees(site *syntax.Node) []Edge { return g.bySite[site] }

// CapturedCallees are the edges a capture region around call site site
// captures: Callees, and at a summarized wrapper's call of what it wraps,
// every function the decorator wraps (`with torch.cuda.graph(g): return
// fn(*a)` in a wrapper captures each of them).
func (g *Graph) CapturedCallees(site *syntax.Node) []Edge {
	if es, ok := g.wrapped[site]; ok {
		return es
	}
	return g.bySite[site]
}

// ValueInfo is one value an expression can have.
type ValueInfo struct {
	Kind VKind
	Fn   *index.Function // VFunc, VBound, VKernel
	Cls  *index.Class    // VClass, VInst
	Mod  *index.Module
	Ext  string // VExt, VExtInst
	Edge EdgeKind
}

// Values are the values expression n (evaluated by the analysis) can
// have, in a fixed order.
func (g *Graph) Values(n *syntax.Node) []ValueInfo {
	id, ok := g.exprNode(n)
	if !ok {
		return nil
	}
	return g.valuesOf(id)
}

// InstanceClasses are the project classes of the instances expression n
// can be (one per value, in Values' order); nil where a value is something
// else (a module, an outside object, a tensor) or n has no values: a
// question about an object's class is answered only where every value
// has one.
func (g *Graph) InstanceClasses(n *syntax.Node) []*index.Class {
	// Most expressions asked hold something other than instances (a
	// tensor, a module, an outside name): one pass over the set answers
	// them, without Values' sort (on flashinfer a second of the rules'
	// CPU went to sorting sets whose answer was nil).
	u := syntax.Unparen(n)
	id, ok := g.exprNode(u)
	if !ok {
		return nil
	}
	all := true
	g.pts[id].each(func(v VID, _ uint8) {
		if val := &g.s.values[v]; val.Kind != VInst || val.Cls == nil {
			all = false
		}
	})
	if !all {
		return nil
	}
	vals := g.valuesOf(id)
	out := make([]*index.Class, 0, len(vals))
	for _, v := range vals {
		if v.Kind != VInst || v.Cls == nil {
			return nil
		}
		out = append(out, v.Cls)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// EachValue calls fn with the kind and external name (VExt, VExtInst) of
// every value expression n can have, in no fixed order: Values without
// the slice and the sort, for the yes-or-no questions asked of every
// call site.
func (g *Graph) EachValue(n *syntax.Node, fn func(k VKind, ext string)) {
	id, ok := g.exprNode(n)
	if !ok {
		return
	}
	g.pts[id].each(func(v VID, _ uint8) {
		val := &g.s.values[v]
		fn(val.Kind, val.Ext)
	})
}

// exprNode is the points-to node of expression n (of n without its
// parentheses where n itself was not evaluated); false for none.
func (g *Graph) exprNode(n *syntax.Node) (NID, bool) {
	id, ok := g.s.expr(n)
	if !ok {
		id, ok = g.s.expr(syntax.Unparen(n))
	}
	return id, ok && id >= 0
}

// ValuesUnordered are the values Values gives, in no fixed order: for the
// questions whose answer does not depend on it (is one of them a class, a
// kernel; are all of them functions), asked of sets that a flood makes
// thousands long, where Values' sort was most of the question's cost.
func (g *Graph) ValuesUnordered(n *syntax.Node) iter.Seq[ValueInfo] {
	return func(yield func(ValueInfo) bool) {
		id, ok := g.exprNode(n)
		if !ok {
			return
		}
		for _, f := range g.pts[id].facts {
			val := &g.s.values[f.vid()]
			if !yield(ValueInfo{Kind: val.Kind, Fn: val.Fn, Cls: val.Cls, Mod: val.Mod, Ext: val.Ext, Edge: kindOf(f.str())}) {
				return
			}
		}
	}
}

func (g *Graph) valuesOf(id NID) []ValueInfo {
	pts := &g.pts[id]
	if pts.len() == 0 {
		return nil
	}
	out := make([]ValueInfo, 0, pts.len())
	pts.each(func(v VID, st uint8) {
		val := &g.s.values[v]
		out = append(out, ValueInfo{Kind: val.Kind, Fn: val.Fn, Cls: val.Cls, Mod: val.Mod, Ext: val.Ext, Edge: kindOf(st)})
	})
	if len(out) > 1 {
		// Each value's key is made once (FullName allocates), not at
		// every comparison; byKind sorts with the algorithm sort.Slice
		// uses, so ties keep the same order.
		keys := make([]string, len(out))
		for i := range out {
			keys[i] = valueKeyString(out[i])
		}
		sort.Sort(byKind{out, keys})
	}
	return out
}

// byKind orders values by kind, then key (valueKeyString).
type byKind struct {
	vs   []ValueInfo
	keys []string
}

func (b byKind) Len() int { return len(b.vs) }
func (b byKind) Less(i, j int) bool {
	if b.vs[i].Kind != b.vs[j].Kind {
		return b.vs[i].Kind < b.vs[j].Kind
	}
	return b.keys[i] < b.keys[j]
}
func (b byKind) Swap(i, j int) {
	b.vs[i], b.vs[j] = b.vs[j], b.vs[i]
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
}

func valueKeyString(v ValueInfo) string {
	switch {
	case v.Fn != nil:
		return v.Fn.FullName()
	case v.Cls != nil:
		return v.Cls.File.Name + "." + v.Cls.Qual
	case v.Mod != nil:
		return v.Mod.Path
	}
	return v.Ext
}

// Target is a function that calling a value runs.
type Target struct {
	Fn   *index.Function
	Kind EdgeKind
}

// CallTargets are the project functions that calling expression n's value
// runs: a function, a bound method, a module instance's forward (or an
// object's __call__), a partial's function, the modules of a container
// (make_graphed_callables((a, b), ...)).
func (g *Graph) CallTargets(n *syntax.Node) []Target {
	id, ok := g.exprNode(n)
	if !ok {
		return nil
	}
	seen := map[*index.Function]EdgeKind{}
	g.targets(id, sResolved, seen, map[NID]bool{})
	if len(seen) == 0 {
		return []Target{}
	}
	out := make([]Target, 0, len(seen))
	for f, k := range seen {
		out = append(out, Target{f, k})
	}
	if len(out) > 1 {
		// By name, made once a target; seen is a map, so two functions
		// of one name (a def redefined) are ordered by where they are.
		names := make(map[*index.Function]string, len(out))
		for _, t := range out {
			names[t.Fn] = t.Fn.FullName()
		}
		sort.Slice(out, func(i, j int) bool {
			a, b := out[i].Fn, out[j].Fn
			if names[a] != names[b] {
				return names[a] < names[b]
			}
			if a.File.Path != b.File.Path {
				return a.File.Path < b.File.Path
			}
			return a.Def.Start < b.Def.Start
		})
	}
	return out
}

func (g *Graph) targets(id NID, cap uint8, out map[*index.Function]EdgeKind, seen map[NID]bool) {
	if seen[id] {
		return
	}
	seen[id] = true
	put := func(f *index.Function, st uint8) {
		if f == nil {
			return
		}
		k := kindOf(min(st, cap))
		if old, ok := out[f]; !ok || old.Strength() < k.Strength() {
			out[f] = k
		}
	}
	// The solved sets are read only: their facts are walked in place (a
	// copy made at each call was 54 of the 835 MB the contexts allocated on
	// flashinfer, a holdout).
	for _, f := range g.pts[id].facts {
		v, st := f.vid(), f.str()
		val := &g.s.values[v]
		switch val.Kind {
		case VFunc, VBound:
			put(val.Fn, st)
		case VInst:
			m, ok := g.instCall[val.Cls]
			if !ok {
				m = g.instanceCall(val.Cls)
			}
			put(m, st)
		case VPartial, VCont:
			g.targets(val.Elems, min(st, cap), out, seen)
		}
	}
}

// Nodes is the number of points-to nodes (for benchmarks).
func (g *Graph) Nodes() int { return len(g.pts) }
