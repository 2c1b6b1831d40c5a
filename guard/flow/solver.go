// Package flow is the second layer of capguard's analysis: a points-to
// (assignment graph) analysis of the whole project in the spirit of PyCG —
// flow-insensitive, context-insensitive, field-sensitive per class,
// iterated to a fixpoint — and the call graph it proves, each edge with
// the kind of evidence behind it (EdgeKind).
//
// Every variable, attribute, container's elements and function return is a
// node; every value (a module, function, class, instance, bound method,
// container, external name, tensor, Triton kernel...) is interned once.
// Statements add subset edges and constraints; the solver propagates
// values along edges and fires constraints (attribute loads, calls,
// iteration) as values arrive, which adds more edges, until nothing
// changes. Each fact carries a strength (resolved, annotated, hierarchy,
// name): a fact derived through a weaker one is no stronger, and a call
// edge has the strength of the callee value that made it.
//
// Where points-to finds nothing, dispatch falls back in phases, each one
// only for nodes the previous phases left empty: declared types
// (annotations, and a method's own class for its self), then bare method
// names that one method family defines. Calls on tensors and Triton
// kernels never resolve to project methods.
package flow

import (
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"strings"
)

// VID is an interned value; NID is a node.
type (
	VID int32
	NID int32
)

const noNode NID = -1

// VKind is what a value is.
type VKind uint8

const (
	VModule  VKind = iota // a project module
	VFunc                 // a project function (def or lambda), unbound
	VClass                // a project class
	VInst                 // the instances of a project class (one abstract object a class)
	VBound                // a method bound to a receiver (an instance, or a class for classmethods)
	VCont                 // a container made at one site: its elements are one node
	VExt                  // a name from outside the project ("torch.cuda.graph")
	VExtInst              // an object made by an external callable ("torch.cuda.CUDAGraph")
	VTensor               // a tensor
	VKernel               // a Triton kernel (a @triton.jit function)
	VSuper                // super() in a method of Cls, for a receiver
	VPartial              // functools.partial(f, args...)
)

// Container tags.
const (
	tagPlain      uint8 = iota
	tagSequential       // nn.Sequential: calling it calls each element
	// tagApply marks a VBound of an autograd Function's forward through
	// `Fn.apply`: its context parameter is bound though forward is static.
	tagApply
	// tagRows marks the one container that stands for every row of a
	// literal table (rowTable).
	tagRows
)

// Value is an abstract object.
type Value struct {
	Kind VKind
	Mod  *index.Module
	Fn   *index.Function
	Cls  *index.Class
	Recv VID // VBound: the receiver; VSuper: the self value
	Ext  string
	Site *syntax.Node
	// Elems: VCont's elements node; VPartial's function node.
	Elems NID
	Args  []NID // VPartial: the bound positional arguments
	Tag   uint8
}

type valueKey struct {
	kind VKind
	ptr  any
	recv VID
	ext  string
	tag  uint8
}

// node is a set of values with what depends on it.
type node struct {
	pts   ptsSet
	edges []edge
	// cons: the constraints watching the node, solver.watchers[cons-1]
	// (0: none). Most nodes have none, and a slice header on every node
	// was 17 of LightX2V's 72 MB of nodes for 1.2 MB of constraint ids.
	cons int32
	// conts counts the containers in pts, up to contCap (widening);
	// exts the external names, up to extCap.
	conts, exts uint8
	// guesses counts the values held at name strength, up to guessCap.
	guesses uint8
	// saturated: past the fact budget, values were turned away; mixed:
	// past guessCap, guesses were.
	saturated, mixed bool
	// queued: the node is on the solver's node queue; sent: its facts
	// before this index went along its edges and constraints already.
	queued bool
	sent   int32
}

// edgeIndexed is how many edges a node has before solver.edgeIdx indexes
// them (dedupe by lookup, not scan).
const edgeIndexed = 32

type transform uint8

const (
	trNone       transform = iota
	trInstBind             // a class attribute read through an instance of cls: functions bind to it
	trClassBind            // read through class cls: classmethods bind to it
	trTensorCont           // only tensors and containers pass (arithmetic)
	trSelf                 // into a method's self from an argument: only its class's (selfOK)
	trNarrow               // under an isinstance test: only values of its types (narrow.go; recv indexes solver.narrows)
)

// edge is 16 bytes and holds no pointer (the solver walks millions of
// them, and the collector need not): the rare context of a bind edge
// lives in solver.edgeCtx.
type edge struct {
	dst  NID
	recv VID // trInstBind/trClassBind: the receiver value
	tr   transform
	cap  uint8
	ctx  int32 // index into solver.edgeCtx plus one, 0 for none
}

// edgeCtx is where a trInstBind edge reads an attribute: a property read
// there calls its getter from owner at site.
type edgeCtx struct {
	owner *index.Function
	site  *syntax.Node
}

// edgeIndex is an open-addressing table of a node's edges by
// (destination, transform, receiver): slots hold an edge's index plus one
// (0: empty); its size is a power of two, at least twice the edges.
// Cheaper than a map keyed by the triple (no generic struct hashing, no
// growth by splitting), and edges are never removed.
type edgeIndex struct {
	slots slotTable
}

func edgeHash(dst NID, tr transform, recv VID) uint32 {
	h := (uint32(dst)*0x9E3779B1 ^ uint32(recv)*0x85EBCA77 ^ uint32(tr)) * 0xC2B2AE3D
	return h ^ h>>16
}

// find returns the index of the edge to dst with tr and recv, or -1.
func (t *edgeIndex) find(edges []edge, dst NID, tr transform, recv VID) int {
	mask := t.slots.mask
	for i := edgeHash(dst, tr, recv) & mask; ; i = (i + 1) & mask {
		k := t.slots.at(i)
		if k == 0 {
			return -1
		}
		if x := &edges[k-1]; x.dst == dst && x.tr == tr && x.recv == recv {
			return int(k - 1)
		}
	}
}

// add indexes edges[i] (not in the table yet), growing the table first
// when it would be over half full.
func (t *edgeIndex) add(edges []edge, i int) {
	if 2*(i+1) > t.slots.size() {
		size := 64
		for size < 2*(i+1)+2 { // between a quarter and half full (ptsSet.rehash)
			size *= 2
		}
		t.slots = makeSlots(size)
		for j := 0; j < i; j++ {
			t.put(edges, j)
		}
	}
	t.put(edges, i)
}

func (t *edgeIndex) put(edges []edge, i int) {
	x := &edges[i]
	t.slots.place(edgeHash(x.dst, x.tr, x.recv)&t.slots.mask, int32(i+1))
}

// work is a fact to send again at a higher strength: a value a node had
// sent already came back stronger. A node's new facts are not work items:
// the node goes on the node queue (solver.nq) and sends them together
// (sendNew).
type work struct {
	n NID
	v VID
	s uint8
}

// solver holds the analysis state.
type solver struct {
	// edgeIdx indexes the edges of each node with more than edgeIndexed
	// of them: few nodes, so a map, not a field on every node.
	edgeIdx map[NID]*edgeIndex
	proj    *index.Project
	// canceled is Options.Canceled; stopped, that it said true (the
	// solve then ends at once: Analyze returns a Canceled graph); steps
	// counts the solve's steps between two questions.
	canceled func() bool
	stopped  bool
	steps    int
	// qualStrs are the project's dotted-name strings, quals what they
	// name (importstr.go).
	qualStrs []qualStr
	quals    *qualNames
	// lateQuals are the reads of what those strings name that came
	// before every string was seen (while the constraints were built).
	lateQuals []lateQual
	qualsDone bool
	// narrows are the isinstance tests' type sets (narrow.go); isinst
	// caches whether a function's body tests isinstance at all.
	narrows []narrowSpec
	isinst  map[*index.Function]bool
	h       *index.Hierarchy
	nodes   nodeTable
	values  []Value
	// kinds[v] is values[v].Kind: add asks it of every value it puts in
	// a node, and the small array stays in cache where values do not.
	kinds []VKind
	vmap  map[valueKey]VID
	cons  paged[constraint]
	queue []work
	// nq are the nodes with facts not sent yet (node.sent).
	nq []NID

	fields map[uint64]NID // (value, interned name) -> node
	names  map[string]int32
	locals map[localKey]NID
	rets   map[*index.Function]NID
	// guarded are the returns under a test of a parameter against constants.
	guarded map[*index.Function][]guardedRet
	// pass: parameters returned as they are (passthru.go).
	pass passState
	// setters: setattr under a caller's name, made per call (setters.go).
	setters setterState
	// regNodes hold the functions registered as operator implementations.
	regNodes []NID
	// sigKept: functions whose decorators keep their parameters (signature.go).
	sigKept map[*index.Function]bool
	anyCont VID // the summary container (widen), -1 until made
	// extSum is extSummary's answer for each value, plus one (0: not
	// asked yet).
	extSum []VID
	// edgeCtx are the edges' contexts, each once (edge.ctx); ctxIDs
	// finds one. A call's argument edges share their call's: on LightX2V
	// 1.3M edges have 63k.
	edgeCtx []edgeCtx
	ctxIDs  map[edgeCtx]int32
	// watchers are the nodes' constraint lists (node.cons).
	watchers paged[[]int32]
	// anyWrites holds what is stored through the summary container: it
	// flows into every widened container's elements.
	anyWrites NID
	widened   map[VID]bool
	device    string // Options.Device
	// keys are the key-sensitive (literal) containers.
	keys map[VID]*keyInfo
	// storages: the storage container of each project class that derives
	// from a builtin container, noVID for the others asked (storage.go).
	storages     map[*index.Class]VID
	spreads      map[int32]*spreadInfo // cKwSplat constraints' bindings (kwspread.go)
	yields       map[*index.Function]NID
	params       map[*index.Function][]NID
	selfIn       map[*index.Function]NID // argDst
	builtinNodes map[string]NID

	calls map[callEdgeKey]uint8 // site, caller, callee -> strength
	// bound: the strongest firing of a call through a partial or an
	// nn.Sequential, or of an except clause's tuple, by constraint and value
	// (derive).
	bound map[bindKey]uint8

	// Evaluated expressions keep their node on syntax.Node.Aux (expr).
	decls       []decl                          // declared types, for seeding
	fieldDecls  []fieldDecl                     // `self.x: T = ...`
	decorated   []decoratedName                 // decorated names, for the transparent fallback
	decoSums    map[*index.Function]decoSummary // project decorators summarized (wrapdeco.go)
	wrapCalls   map[*syntax.Node]bool           // call sites: a summarized wrapper's call of what it wraps
	methodSites []methodSite                    // recv.m(...) sites, for the name fallback
	storeSites  []storeSite                     // x.attr[k] = v, x.attr.append(v): for the store fallback
	// selfAttrs maps an attribute name to the classes whose methods set
	// self.name (made on the store fallback's first use).
	selfAttrs map[string][]*index.Class
	// extPerSite counts the external names each attribute read derived
	// (deriveExt).
	extPerSite map[*syntax.Node]int32
	// facts counts the points-to facts (factBudget); saturated the nodes
	// that turned values away past it.
	facts, saturated, mixedNodes int
	// raised counts the facts whose strength went up, newEdges the edges
	// made or strengthened: with the counts above, the node and value
	// counts and the dropped and assumed calls, they tell whether a pass
	// changed the solve (version).
	raised, newEdges int
	budget           int // factBudget unless Options.FactBudget
	ceiling          int // factCeiling unless Options.FactCeiling
	dropped          map[*syntax.Node]string
	// made are the classes the project instantiates (a constructor call
	// reached), for self seeding.
	made map[*index.Class]bool
	// rootHint says which methods are roots whatever flows (entry points,
	// conventions): their self is seeded with their class.
	rootHint func(*index.Function) bool
	// attrNames are the attribute names the project reads (x.name,
	// getattr(x, "name")).
	attrNames map[string]bool
	// classVals, instVals and boundVals cache class, inst and bound_.
	classVals, instVals map[*index.Class]VID
	// newMakes caches newMakesInstance.
	newMakes  map[*index.Function]bool
	boundVals map[boundValKey]VID
	// attrOrder caches attrTypeNames.
	attrOrder map[*index.Class][]string
	assumed   map[*syntax.Node]string
	tensor    VID
	// fireDepth counts the firings nested in watch; pending are the
	// watches deferred past maxFireDepth (solve drains them).
	fireDepth int
	pending   []pendingFire
	// premises, while a resumed solve's first part runs (ResumeLast), are
	// the nodes whose content a stratum's step read to decide (a seed
	// into an empty node, a fallback on an empty callee and its
	// receiver's values); resuming is set in its second part, where a new
	// fact in one of them, or a cap reached (widening, a mix, the
	// budget), means the whole solve might have decided otherwise:
	// resumeWhy counts the reasons by kind (premise.go).
	premises    map[NID]string
	resuming    bool
	resumeWhy   map[string]int
	genericInvs map[*index.Function]int
	// paramConsts caches parametrized: a test function's parameters that
	// parametrize decorators bind to constants.
	paramConsts map[*index.Function]map[string][]string
}

type fieldKey struct {
	v    VID
	name string
}

type localKey struct {
	fn   *index.Function
	name string
}

type callEdgeKey struct {
	site   *syntax.Node
	caller *index.Function
	callee *index.Function
}

type bindKey struct {
	c      int32 // the call constraint
	callee VID
}

func newSolver(p *index.Project) *solver {
	// The maps that grow with the project are sized from its functions
	// (measured on a kernel library, an engine and a quantization
	// library: per function, 6-7.5 locals, 4-7 fields, about 3 values):
	// growing them a doubling at a time was a tenth of the constraints'
	// building.
	nf := 0
	for _, f := range p.Files {
		nf += len(f.Funcs)
	}
	s := &solver{proj: p, h: p.Hierarchy(), edgeIdx: map[NID]*edgeIndex{}, vmap: make(map[valueKey]VID, 3*nf),
		fields: make(map[uint64]NID, 5*nf), names: map[string]int32{}, locals: make(map[localKey]NID, 7*nf), rets: make(map[*index.Function]NID, nf), guarded: map[*index.Function][]guardedRet{}, keys: map[VID]*keyInfo{},
		yields: map[*index.Function]NID{}, params: make(map[*index.Function][]NID, nf), builtinNodes: map[string]NID{},
		calls: map[callEdgeKey]uint8{}, bound: map[bindKey]uint8{},
		dropped: map[*syntax.Node]string{}, assumed: map[*syntax.Node]string{},
		made: map[*index.Class]bool{}, attrNames: map[string]bool{},
		classVals: map[*index.Class]VID{}, instVals: map[*index.Class]VID{}, boundVals: map[boundValKey]VID{},
		newMakes: map[*index.Function]bool{}, extPerSite: map[*syntax.Node]int32{}, isinst: map[*index.Function]bool{}}
	s.tensor = s.intern(Value{Kind: VTensor})
	s.anyCont = -1
	return s
}

func (s *solver) newNode() NID {
	return NID(s.nodes.p.add(node{}))
}

// intern returns the value's id, making it on first use.
func (s *solver) intern(v Value) VID {
	k := valueKey{kind: v.Kind, recv: v.Recv, ext: v.Ext, tag: v.Tag}
	switch v.Kind {
	case VModule:
		k.ptr = v.Mod
	case VFunc, VKernel:
		k.ptr = v.Fn
	case VClass, VInst:
		k.ptr = v.Cls
	case VBound:
		k.ptr = v.Fn
	case VSuper:
		k.ptr = v.Cls
	case VCont, VPartial:
		k.ptr = v.Site
	}
	if id, ok := s.vmap[k]; ok {
		return id
	}
	if v.Kind == VCont && v.Elems == 0 {
		v.Elems = s.newNode()
	}
	if len(s.values) >= 1<<factBits {
		panic("flow: more values than a points-to fact holds")
	}
	s.values = append(s.values, v)
	s.kinds = append(s.kinds, v.Kind)
	id := VID(len(s.values) - 1)
	s.vmap[k] = id
	return id
}

func (s *solver) mod(m *index.Module) VID { return s.intern(Value{Kind: VModule, Mod: m}) }
func (s *solver) ext(d string) VID        { return s.intern(Value{Kind: VExt, Ext: d}) }
func (s *solver) extInst(d string) VID    { return s.intern(Value{Kind: VExtInst, Ext: d}) }

// class, inst and bound_ are asked on every attribute read along an MRO
// and every method bound: they look in maps keyed by pointers before
// intern, whose key (an interface and a string) is dearer to hash.
func (s *solver) class(c *index.Class) VID { return s.classValue(s.classVals, VClass, c) }
func (s *solver) inst(c *index.Class) VID  { return s.classValue(s.instVals, VInst, c) }

// classValue is the interned value of kind k for c, memoized in m.
func (s *solver) classValue(m map[*index.Class]VID, k VKind, c *index.Class) VID {
	if v, ok := m[c]; ok {
		return v
	}
	v := s.intern(Value{Kind: k, Cls: c})
	m[c] = v
	return v
}

func (s *solver) bound_(f *index.Function, recv VID) VID {
	k := boundValKey{f, recv}
	if v, ok := s.boundVals[k]; ok {
		return v
	}
	v := s.intern(Value{Kind: VBound, Fn: f, Recv: recv})
	s.boundVals[k] = v
	return v
}

type boundValKey struct {
	fn   *index.Function
	recv VID
}

// fnValue is what a def's name is bound to: a kernel for a Triton
// function, else the function.
func (s *solver) fnValue(f *index.Function) VID {
	if f.Kernel {
		return s.intern(Value{Kind: VKernel, Fn: f})
	}
	return s.intern(Value{Kind: VFunc, Fn: f})
}

// cont is the container made at site (its elements node made with it).
func (s *solver) cont(site *syntax.Node, tag uint8) VID {
	return s.intern(Value{Kind: VCont, Site: site, Tag: tag})
}

// field is the node of attribute name of value v.
func (s *solver) field(v VID, name string) NID { return s.fieldID(v, s.nameID(name)) }

// nameID is an attribute name's interned id.
func (s *solver) nameID(name string) int32 {
	id, ok := s.names[name]
	if !ok {
		id = int32(len(s.names))
		s.names[name] = id
	}
	return id
}

// attrID is nameID(c.attr), kept on the constraint: a load fires for
// every value of its base and reads the name along whole MROs.
func (s *solver) attrID(c *constraint) int32 {
	if c.attrID == 0 {
		c.attrID = s.nameID(c.attr) + 1
	}
	return c.attrID - 1
}

// fieldID is field with the name interned.
func (s *solver) fieldID(v VID, id int32) NID {
	k := uint64(uint32(v))<<32 | uint64(uint32(id))
	if n, ok := s.fields[k]; ok {
		return n
	}
	n := s.newNode()
	s.fields[k] = n
	return n
}

// add puts value v with strength st into node n.
func (s *solver) add(n NID, v VID, st uint8) {
	if n < 0 || st == 0 {
		return
	}
	nd := s.nodes.at(n)
	k := s.kinds[v]
	if k != VCont && k != VExt || k == VCont && nd.conts < contCap || k == VExt && nd.exts < extCap {
		// A value the node holds already at this strength or a stronger
		// one changes nothing, and most sends are such repeats (a value
		// that reaches a node along many paths): one lookup answers
		// them. A container or an outside name sent to a node at its cap
		// is not looked up here: it widens to the summary (widen,
		// extSummary) whether the node holds it or not.
		if i := nd.pts.find(v); i >= 0 {
			if nd.pts.facts[i].str() >= st {
				return
			}
			if nd.pts.facts[i].str() == sName {
				nd.guesses--
			}
			nd.pts.facts[i] = mkFact(v, st)
			s.raised++
			s.touched(n)
			if int32(i) < nd.sent {
				s.queue = append(s.queue, work{n, v, st})
			}
			return
		}
	}
	if k == VCont && v != s.anyCont {
		if nd.conts >= contCap {
			// Widening: a node that already holds contCap containers
			// (the parameter of a method every impl's forward shares)
			// gets the summary container instead, whose elements are
			// all of theirs. Precision there is lost already; the facts
			// would grow as containers times nodes.
			s.capped("a node widened to the summary container")
			v = s.widen(v)
			nd = s.nodes.at(n)
		} else if nd.pts.find(v) < 0 {
			nd.conts++
		}
	}
	if s.kinds[v] == VExt {
		if nd.exts >= extCap {
			// Widening of external names: a node that holds extCap of
			// them gets, for a name of more than two parts, the summary
			// of its first two (extSummary).
			s.capped("a node widened an outside name")
			v = s.extSummary(v)
		} else if nd.pts.find(v) < 0 {
			nd.exts++
		}
	}
	if (s.facts >= s.budget && nd.pts.len() >= saturatedCap || s.facts >= s.ceiling) && nd.pts.find(v) < 0 {
		// Past the budget a node keeps the values it has: what else
		// reaches it is not followed (Graph.Saturated counts the nodes).
		// Past the ceiling every node does, so the facts stay bounded
		// whatever the number of nodes.
		if !nd.saturated {
			nd.saturated = true
			s.saturated++
		}
		s.capped("the fact budget")
		return
	}
	i := nd.pts.find(v)
	if i < 0 && st == sName && (nd.guesses >= guessCap || nd.mixed) {
		// A mix of guesses: a call through a node of guessCap guesses
		// makes no edge (maxGuesses), and one more guess would only go
		// on to every node this one reaches (mixedNodes counts them).
		// A mixed node takes no new guess (mixed.go).
		s.markMixed(n)
		return
	}
	if i >= 0 && nd.pts.facts[i].str() == sName && st > sName {
		nd.guesses--
	}
	had := nd.pts.len()
	if !nd.pts.raise(v, st) {
		return
	}
	s.touched(n)
	if nd.pts.len() > had {
		s.facts++
		if st == sName {
			nd.guesses++
		}
		if !nd.queued {
			nd.queued = true
			s.nq = append(s.nq, n)
		}
		return
	}
	s.raised++
	if i := nd.pts.find(v); int32(i) < nd.sent {
		s.queue = append(s.queue, work{n, v, st})
	}
}

// extCap is how many external names a node holds before the deeper ones
// widen to their summaries (extSummary).
const extCap = 32

// extSummary is the summary of external name v: for a name of more than
// two parts, `first.second.*`, which stands for every attribute path below
// `first.second`; reading an attribute of a summary gives the summary
// (load), so it derives no further names. Names derived by attribute
// reads on an external object (`omegaconf.MISSING.data.max_len...`,
// `torch.float32.weight.bias`: a dataclass default or a dtype flowing
// into every config field) are bounded per read site only, so a node
// that many config reads reach held hundreds of them, and every
// attribute read on it derived more: on an RL framework of 100k lines,
// 800 names in 15,000 nodes, 7 million of its 8 million facts. A node
// that holds that many names is a mix already; a name the rules ask
// about (`torch.cuda.synchronize`) is evaluated where it is read, in a
// node of its own.
func (s *solver) extSummary(v VID) VID {
	// Asked once per send to a node at extCap, for the same few names
	// (most of the garbage of a large solve when it made the string each
	// time: 296 MB of DeepSpeed's 1.47 GB): one answer a value.
	if int(v) < len(s.extSum) && s.extSum[v] != 0 {
		return s.extSum[v] - 1
	}
	sum := s.extSummaryOf(v)
	if int(v) >= len(s.extSum) {
		s.extSum = append(s.extSum, make([]VID, int(v)+1-len(s.extSum))...)
	}
	s.extSum[v] = sum + 1
	return sum
}

func (s *solver) extSummaryOf(v VID) VID {
	name := s.values[v].Ext
	i := strings.IndexByte(name, '.')
	if i < 0 {
		return v
	}
	j := strings.IndexByte(name[i+1:], '.')
	if j < 0 || strings.HasSuffix(name, ".*") {
		return v
	}
	return s.ext(name[:i+1+j] + ".*")
}

// factBudget bounds the points-to facts. Context-insensitive flow with one
// abstract object a class can mix every value of a program through one hub
// (a benchmark base class whose instances hold every op and every input
// function): on FlagGems' benchmark folder the facts passed 17 million and
// the solve did not end. Past the budget, a node that holds saturatedCap
// values takes no new one, and the run says so (Graph.Saturated). The
// engines and kernel libraries measured stay under a third of it.
const factBudget = 8_000_000

// factCeiling bounds the facts, at twice the budget. Past the budget only
// the nodes that hold saturatedCap values stop growing, so the facts can
// still grow with the number of nodes (64 each): a folder of installed
// packages (2.2 million lines, torch among them) reached 73 million facts,
// 69 s of solve and 6.3 GB. Past the ceiling no node takes a new value. No
// corpus project comes near it (the largest, 8.7 million).
const factCeiling = 2 * factBudget

// saturatedCap is how many values a node keeps once the budget is spent.
const saturatedCap = 64

// writeElems is the node a store into container v's elements goes to:
// its elements, or for the summary container every widened one's.
func (s *solver) writeElems(v VID) NID {
	if v == s.anyCont {
		return s.anyWrites
	}
	return s.values[v].Elems
}

// guessCap is how many values a node holds at name strength (guesses:
// through the summary container, a computed attribute, a method name on
// an unknown receiver) before it turns new guesses away. It is
// maxGuesses: a call through such a node makes no edge, so the guesses
// past it would change no call there, and carried on to every node the
// node reaches they were most of the solve on the projects that passed
// the fact budget (name-strength facts in nodes holding 64 or more of
// them, 2026-12-02: LightX2V's package 5.9 of 9.9 million facts,
// FlagGems' root 8.1 of 10.5 million, ao's root 7.8 of 8.5 million).
// What a node with fewer guesses would have made of them (an attribute
// read that keeps only the classes that have the attribute) is lost. The
// guesses such a node holds are the first to arrive, some of many: it
// passes none of them on and makes what it reaches mixed too (mixed.go);
// Graph.Mixed counts the mixed nodes.
const guessCap = saturatedCap

// contCap is how many containers a node holds before it widens to the
// summary container.
const contCap = 24

// ContCap is contCap, for messages.
const ContCap = contCap

// widen returns the summary container, made on first use: its elements
// are every widened container's, and what is written through it goes into
// every widened container (writeElems) as well.
func (s *solver) widen(v VID) VID {
	if s.anyCont < 0 {
		s.anyCont = s.intern(Value{Kind: VCont, Tag: 255})
		s.anyWrites = s.newNode()
		s.addEdge(s.anyWrites, s.values[s.anyCont].Elems, edge{cap: sName})
	}
	if !s.widened[v] {
		if s.widened == nil {
			s.widened = map[VID]bool{}
		}
		s.widened[v] = true
		// Both ways: what is put into the summary (an append through a
		// widened node) is in v for its other holders too.
		// Through the summary a value is a guess (one of many containers'
		// elements): it passes at name strength, so calls on it are
		// recorded as the weakest kind of edge.
		s.addEdge(s.values[v].Elems, s.values[s.anyCont].Elems, edge{cap: sName})
		// What is put in through a widened holder (an append) reaches v's
		// other holders too (writeElems).
		s.addEdge(s.anyWrites, s.values[v].Elems, edge{cap: sName})
	}
	return s.anyCont
}

// version is the solve's state in counts that only grow (facts, their
// strengths, edges, nodes, values, turned-away and mixed nodes, assumed
// calls) and the dropped calls: a pass that leaves it as it was changed
// nothing the next pass or the graph reads.
type version [9]int

func (s *solver) version() version {
	return version{s.facts, s.raised, s.newEdges, s.nodes.p.len(), len(s.values), s.saturated, s.mixedNodes, len(s.dropped), len(s.assumed)}
}

// addEdge makes dst a superset of src (through tr) and sends src's values
// along at once.
func (s *solver) addEdge(src, dst NID, e edge) { s.addEdgeAt(src, dst, e, nil, nil) }

// addEdgeAt is addEdge for a bind edge read by owner at site (kept with a
// new edge; an edge already there keeps its own).
func (s *solver) addEdgeAt(src, dst NID, e edge, owner *index.Function, site *syntax.Node) {
	if src < 0 || dst < 0 || src == dst && e.tr == trNone {
		return
	}
	if e.cap == 0 {
		e.cap = sResolved
	}
	e.dst = dst
	if i := s.findEdge(src, e); i >= 0 {
		// The same edge: a stronger cap re-sends what goes through it.
		x := &s.nodes.at(src).edges[i]
		if x.cap < e.cap {
			x.cap = e.cap
			s.newEdges++
			xe := *x
			s.sendAll(src, func(v VID, st uint8) { s.send(v, min(st, xe.cap), xe) })
		}
		return
	}
	if owner != nil || site != nil {
		e.ctx = s.edgeCtxID(edgeCtx{owner, site})
	}
	nd := s.nodes.at(src)
	if nd.mixed {
		s.markMixed(dst)
	}
	nd.edges = append(nd.edges, e)
	s.newEdges++
	if len(nd.edges) > edgeIndexed {
		idx := s.edgeIdx[src]
		if idx == nil {
			idx = &edgeIndex{}
			s.edgeIdx[src] = idx
			for i := range len(nd.edges) - 1 {
				idx.add(nd.edges, i)
			}
		}
		idx.add(nd.edges, len(nd.edges)-1)
	}
	s.sendAll(src, func(v VID, st uint8) { s.send(v, min(st, e.cap), e) })
}

// findEdge returns the index of src's edge equal to e (destination,
// transform, receiver), or -1.
func (s *solver) findEdge(src NID, e edge) int {
	nd := s.nodes.at(src)
	if len(nd.edges) > edgeIndexed {
		return s.edgeIdx[src].find(nd.edges, e.dst, e.tr, e.recv)
	}
	for i := range nd.edges {
		x := &nd.edges[i]
		if x.dst == e.dst && x.tr == e.tr && x.recv == e.recv {
			return i
		}
	}
	return -1
}

func (s *solver) copyTo(src, dst NID, cap uint8) { s.addEdge(src, dst, edge{cap: cap}) }

// send applies an edge's transform to one value.
func (s *solver) send(v VID, st uint8, e edge) {
	val := &s.values[v]
	switch e.tr {
	case trNone:
		s.add(e.dst, v, st)
	case trTensorCont:
		if val.Kind == VTensor || val.Kind == VCont {
			s.add(e.dst, v, st)
		}
	case trSelf:
		if s.selfOK(s.values[e.recv].Cls, v) {
			s.add(e.dst, v, st)
		}
	case trNarrow:
		if s.narrowOK(s.narrows[e.recv], v) {
			s.add(e.dst, v, st)
		}
	case trInstBind, trClassBind:
		switch val.Kind {
		case VFunc:
			f := val.Fn
			switch {
			case f.Static:
				s.add(e.dst, v, st)
			case f.ClassMethod:
				recv := e.recv
				if e.tr == trInstBind {
					recv = s.class(s.values[e.recv].Cls)
				}
				s.add(e.dst, s.bound_(f, recv), st)
			case f.Property && e.tr == trInstBind:
				// Reading a property calls its getter.
				var x edgeCtx
				if e.ctx > 0 {
					x = s.edgeCtx[e.ctx-1]
				}
				s.recordCall(x.site, x.owner, f, st)
				s.bindReceiver(f, e.recv, st)
				s.copyTo(s.retFull(f), e.dst, st)
			case e.tr == trInstBind:
				s.add(e.dst, s.bound_(f, e.recv), st)
			default:
				s.add(e.dst, v, st)
			}
		default:
			s.add(e.dst, v, st)
		}
	}
}

// solve propagates until nothing changes: the facts that came back
// stronger first, then the nodes with new facts, the node queued last
// first. Sending a node's new facts edge by edge (sendNew) rather than
// each fact along every edge looks each destination's set up many times in
// a row, where the cache still holds it: on the solve of GPTQModel's
// package (a fresh holdout, 8.8 M facts) 38 -> 31 s, on LightX2V's 27 ->
// 18 s, on FlagGems' src/ 3.7 -> 3.1 s. The order values reach a node in
// changes with it, and with the order the choices that depend on it
// (which containers a node holds before it widens, which nodes stop
// taking values past the fact budget).
func (s *solver) solve() {
	for s.drainPending(); (len(s.queue) > 0 || len(s.nq) > 0) && !s.stop(); s.drainPending() {
		if len(s.queue) == 0 {
			s.sendNew()
			continue
		}
		w := s.queue[len(s.queue)-1]
		s.queue = s.queue[:len(s.queue)-1]
		if cur, _ := s.nodes.at(w.n).pts.get(w.v); cur != w.s {
			continue // superseded by a stronger fact, already queued
		}
		if w.s == sName && s.nodes.at(w.n).mixed {
			continue
		}
		for i := 0; i < len(s.nodes.at(w.n).edges); i++ {
			e := s.nodes.at(w.n).edges[i]
			s.send(w.v, min(w.s, e.cap), e)
		}
		// Read the list again each time: a firing may watch n again.
		for i := 0; ; i++ {
			cs := s.consOf(w.n)
			if i >= len(cs) {
				break
			}
			s.fire(cs[i], w.v, w.s)
		}
	}
}

// stopEvery is how many steps of the solve go between two questions to
// Options.Canceled (tests lower it).
var stopEvery = 4096

// stop reports whether the solve is to end now (Options.Canceled), asking
// once every stopEvery steps.
func (s *solver) stop() bool {
	if s.canceled == nil || s.stopped {
		return s.stopped
	}
	if s.steps++; s.steps%stopEvery == 0 && s.canceled() {
		s.stopped = true
	}
	return s.stopped
}

// sendNew sends the facts a node got since it last sent along its edges
// and to its constraints: edge by edge, each edge taking them all, so a
// destination's set is looked up many times in a row.
func (s *solver) sendNew() {
	n := s.nq[len(s.nq)-1]
	s.nq = s.nq[:len(s.nq)-1]
	nd := s.nodes.at(n)
	nd.queued = false
	lo, hi := nd.sent, int32(nd.pts.len())
	nd.sent = hi
	// nd stays good while sends add nodes (nodeTable's pages never move);
	// its slices are read through it again each time, as sends to n itself
	// may grow them.
	for i := 0; i < len(nd.edges); i++ {
		e := nd.edges[i]
		for j := lo; j < hi; j++ {
			f := nd.pts.facts[j]
			if f.str() == sName && nd.mixed {
				continue
			}
			s.send(f.vid(), min(f.str(), e.cap), e)
		}
	}
	for i := 0; ; i++ {
		cs := s.consOf(n)
		if i >= len(cs) {
			break
		}
		c := cs[i]
		for j := lo; j < hi; j++ {
			f := nd.pts.facts[j]
			if f.str() == sName && nd.mixed {
				continue
			}
			s.fire(c, f.vid(), f.str())
		}
	}
}

// watch attaches constraint c to node n and fires it for n's values.
// Firing can watch again (a call through a partial watches the partial's
// function node, whose values fire that call...): past maxFireDepth
// nested firings the rest is deferred to solve's worklist (pending), so
// the Go stack stays bounded whatever the program.
func (s *solver) watch(n NID, c int32) {
	if n < 0 {
		return
	}
	nd := s.nodes.at(n)
	if nd.cons == 0 {
		nd.cons = s.watchers.add(nil) + 1
	}
	w := s.watchers.at(nd.cons - 1)
	*w = append(*w, c)
	if nd.mixed {
		s.mixCons(c)
	}
	k := nd.pts.len()
	if k == 0 {
		return
	}
	if s.fireDepth >= maxFireDepth {
		s.pending = append(s.pending, pendingFire{c: c, n: n, upto: int32(k)})
		return
	}
	s.fireDepth++
	s.sendAll(n, func(v VID, st uint8) { s.fire(c, v, st) })
	s.fireDepth--
}

// maxFireDepth bounds the firings nested in one another (watch).
const maxFireDepth = 64

// pendingFire is a deferred watch: fire c for the first upto values of
// node n (those it held when c was attached; later ones reach c through
// the worklist).
type pendingFire struct {
	c    int32
	n    NID
	upto int32
}

// drainPending fires the deferred watches, last first (the order the
// nested firing would have taken).
func (s *solver) drainPending() {
	for len(s.pending) > 0 {
		p := s.pending[len(s.pending)-1]
		s.pending = s.pending[:len(s.pending)-1]
		for i := int32(0); i < p.upto; i++ {
			f := s.nodes.at(p.n).pts.facts[i]
			if f.str() == sName && s.nodes.at(p.n).mixed {
				continue
			}
			s.fire(p.c, f.vid(), f.str())
		}
	}
}

func (s *solver) newCons(c constraint) int32 {
	return s.cons.add(c)
}

// ret is a function's return node; a generator's calls return a
// container of what it yields.
func (s *solver) ret(f *index.Function) NID {
	if n, ok := s.rets[f]; ok {
		return n
	}
	n := s.newNode()
	s.rets[f] = n
	if f.Generator {
		g := s.cont(f.Def, tagPlain)
		s.add(n, g, sResolved)
		s.yields[f] = s.values[g].Elems
	}
	return n
}

// yieldNode is where a generator's yields go.
func (s *solver) yieldNode(f *index.Function) NID {
	s.ret(f)
	if n, ok := s.yields[f]; ok {
		return n
	}
	return s.ret(f)
}

// recordCall records a call edge with the given strength.
func (s *solver) recordCall(site *syntax.Node, caller, callee *index.Function, st uint8) {
	if caller == nil || callee == nil {
		return
	}
	k := callEdgeKey{site, caller, callee}
	if s.calls[k] < st {
		s.calls[k] = st
	}
}

// bindReceiver binds a method's first parameter to recv.
func (s *solver) bindReceiver(f *index.Function, recv VID, st uint8) {
	ps := s.paramNodes(f)
	if len(ps) > 0 && !f.Static {
		s.add(ps[0], recv, st)
	}
	s.setterGeneric(f)
}

// paramNodes are a function's parameter nodes, in order.
func (s *solver) paramNodes(f *index.Function) []NID {
	if ps, ok := s.params[f]; ok {
		return ps
	}
	ps := make([]NID, len(f.Params))
	for i, p := range f.Params {
		ps[i] = s.local(f, p.Name)
	}
	s.params[f] = ps
	return ps
}

// local is a function's local variable node.
func (s *solver) local(f *index.Function, name string) NID {
	k := localKey{f, name}
	if n, ok := s.locals[k]; ok {
		return n
	}
	n := s.newNode()
	s.locals[k] = n
	return n
}

// expr is the node an evaluated expression got: syntax.Node.Aux holds it
// plus one (0: not evaluated; -1: evaluated to noNode).
func (s *solver) expr(n *syntax.Node) (NID, bool) {
	if n == nil || n.Aux == 0 {
		return noNode, false
	}
	if n.Aux < 0 {
		return noNode, true
	}
	return NID(n.Aux - 1), true
}

func (s *solver) setExpr(n *syntax.Node, id NID) {
	if n == nil {
		return
	}
	if id < 0 {
		n.Aux = -1
		return
	}
	n.Aux = int32(id) + 1
}

// consOf are the constraints watching node n (node.cons).
func (s *solver) consOf(n NID) []int32 {
	if c := s.nodes.at(n).cons; c > 0 {
		return *s.watchers.at(c - 1)
	}
	return nil
}

// edgeCtxID is ctx's index in solver.edgeCtx plus one, added if new.
func (s *solver) edgeCtxID(ctx edgeCtx) int32 {
	if id, ok := s.ctxIDs[ctx]; ok {
		return id
	}
	if s.ctxIDs == nil {
		s.ctxIDs = map[edgeCtx]int32{}
	}
	s.edgeCtx = append(s.edgeCtx, ctx)
	id := int32(len(s.edgeCtx))
	s.ctxIDs[ctx] = id
	return id
}
