package tensors

import (
	"bytes"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// This file is the rules' value and device model: local to one function,
// fed by the call graph's points-to facts where it has them. It answers two
// questions about an expression:
//
//   - where a tensor lives (Device): cuda, cpu, pinned host memory, or
//     unknown. It learns it from factory `device=` arguments,
//     `torch.set_default_device` and `with torch.device(...)`, `.cpu()`,
//     `.cuda()`, `.to(...)`, `pin_memory()` / `pin_memory=True`, and from
//     what a local was bound to;
//   - what kind of Python value it is (ValKind): a tensor, a value read from
//     tensor data on the host (`.item()`, `.tolist()`, `int(t)`), host data
//     that never was on the device (a list, a NumPy array), or a constant or
//     metadata (`.shape`, `.size()`, `.numel()`, `.dim()`, `len()`,
//     `.dtype`): fixed for a graph, and reading it synchronizes nothing.
//
// Unknown is a real answer: rules decide what it means for them (CG101
// reports a host read of a tensor of unknown device, and never one of a
// CPU tensor).

// Device is where a tensor lives.
type Device uint8

const (
	DevUnknown Device = iota
	DevCUDA
	DevCPU
	DevPinned // page-locked host memory
)

// Host reports whether the tensor is in host memory.
func (d Device) Host() bool { return d == DevCPU || d == DevPinned }

func (d Device) String() string {
	switch d {
	case DevCUDA:
		return "cuda"
	case DevCPU:
		return "cpu"
	case DevPinned:
		return "pinned"
	}
	return "unknown"
}

// ValKind is what kind of Python value an expression is.
type ValKind uint8

const (
	KUnknown  ValKind = iota
	KMeta             // a constant or tensor metadata (shape, numel, dtype, device): fixed per graph
	KHostData         // host data that never was on the device: a list, a tuple, a NumPy array
	KHostRead         // a Python value read from tensor data (`.item()`, `.tolist()`, `int(t)`)
	KTensor           // a tensor
)

func (k ValKind) String() string {
	return [...]string{"unknown", "metadata", "host data", "host read", "tensor"}[k]
}

// binding is one way a local name gets a value in the function.
type binding struct {
	Start, End int   // the binding statement (or parameter) range
	Value      *Node // the bound expression; nil when unknown (a for target, with ... as)
	Unpack     bool  // bound by tuple unpacking from value
	// Index and Arity, for an unpacked name, are its position among the
	// targets and how many there are (`a, n = f(x)`: n is 1 of 2); Arity
	// is 0 where a starred target makes positions unknown.
	Index, Arity int
	// Starred: bound by a starred target (`*lead, d = x.shape`): a list
	// of value's elements, never one of them.
	Starred bool
	param   *Node // a parameter's annotation, when bound as a parameter
	IsParam bool
	// scope, when set, is the comprehension whose for clause binds the
	// name: only reads inside it see the binding.
	scope *Node
	// Iter is what a for target that is one name iterates over (`for t in
	// bufs`, `[t.item() for t in bufs]`): the name is one of its
	// elements. Value stays nil.
	Iter *Node
}

// Model answers device and kind questions for one function. It does not
// use the points-to values of guard/flow for tensors: there every attribute
// and method result of a tensor is a tensor (x.shape, x.device.type), which
// is right for call resolution and wrong for telling data from metadata.
type Model struct {
	p      *Pass
	f      *File
	fn     *Function
	binds  map[string][]binding
	defDev Device
	// memo and busy guard the recursion through bindings.
	devMemo  map[*Node]Device
	kindMemo map[*Node]ValKind
	busy     map[*Node]bool
	elemMemo map[*Node]ValKind      // elemKind, by container literal
	attrs    map[string][]attrValue // self.attr bindings of the function's class, computed on first use
	set      *modelSet
	// hostNames are the function's locals bound to host values, computed
	// when a caller asks what the function returns.
	hostNames HostBindings
}

// attrValue is a value bound to self.<attr> in a method.
type attrValue struct {
	value *Node
	fn    *Function
}

// modelSet shares the models of one pass's functions (a method's model
// answers for self attributes its class binds elsewhere).
type modelSet struct {
	p    *Pass
	byFn map[*Function]*Model
	// fileAttrs are the values bound to `<anything>.<attr>` in the file, by
	// attribute name, computed on first use.
	fileAttrs map[string][]attrValue
	facts     *fileFacts
	// depth is how many calls deep the models follow return values now.
	depth int
	// callers: the set works out what a parameter's callers pass
	// (paramFromCallers), for the run's memo.
	callers bool
}

// fileFacts are the syntactic facts models build from a file and its
// functions (bindings, attribute stores, the default device), which do
// not depend on the questions asked: the passes of one file share them
// (analyze runs a file's passes on one goroutine), where each rule's
// model used to rebuild them. The models are the file's too, one a
// function (models): their memos hold answers cut short by recursion,
// which depend on the order of the questions, and that order is the
// rules' fixed order over the function. The bindings, default devices and attribute stores are
// read from the syntax alone, so they come from one memo a run (shared)
// and these maps only save its lock; the host memos stay a file's.
type fileFacts struct {
	defDev map[*File]Device
	attrs  map[*File]map[string][]attrValue
	binds  map[modelKey]map[string][]binding
	memos  map[*File]map[string]string
	// models are the passes' models (NewModel), one a function for every
	// rule and context that asks about it: a model reads the project and
	// the function only, not the pass' rule or context.
	models *modelSet
}

// hostMemos are the file's memos filled with host reads (memoHost), by
// the memo's text: the stores `d[...] = value` of the file's functions
// (module level first), in order, each memo taking the first store whose
// value HostValue calls a host read (a memo filled from another memo
// filled earlier included). They are worked out once a file, with models
// of their own (not the asking pass's, whose answers cut short by recursion
// depend on what it was asking): reading every store again for each pass
// made a file's analysis quadratic in its size.
func (ff *fileFacts) hostMemos(f *File, asking *modelSet) map[string]string {
	if m, ok := ff.memos[f]; ok {
		return m // while being filled: the memos filled so far
	}
	memos := map[string]string{}
	ff.memos[f] = memos
	set := &modelSet{p: asking.p, byFn: map[*Function]*Model{}, facts: ff}
	for _, fn := range append([]*Function{f.Top}, f.Funcs...) {
		if fn == nil || fn.Kind == index.Lambda {
			continue
		}
		fm := set.of(f, fn)
		walkCode(fn.BodyStmts(), func(x *Node) bool {
			if x.Kind() != "assignment" {
				return true
			}
			l := Unparen(x.Get("left"))
			if l == nil || l.Kind() != "subscript" {
				return true
			}
			v := Unparen(l.Get("value"))
			if v == nil || !v.Is("identifier", "attribute") {
				return true
			}
			k := strings.Join(strings.Fields(v.Text(f.Src)), "")
			if _, seen := memos[k]; seen {
				return true
			}
			if w := HostValue(f, x.Get("right"), nil, fm); w != "" {
				memos[k] = shortMemoReason(w)
			}
			return true
		})
	}
	return memos
}

// shortMemoReason keeps the first memo and the host read of a chain of
// memos filled from each other ("`b[0]` is a memo of `a[0]` is a memo of
// `int(...)` ..." loses the memos between): a chain's reasons nested in
// full grew with its length, and a chain of n memos cost n² bytes.
func shortMemoReason(w string) string {
	const sep = " is a memo of "
	i, j := strings.Index(w, sep), strings.LastIndex(w, sep)
	if i < 0 || j == i {
		return w
	}
	return w[:i+len(sep)] + w[j+len(sep):]
}

type modelKey struct {
	f  *File
	fn *Function
}

func NewFileFacts() *fileFacts {
	return &fileFacts{defDev: map[*File]Device{}, attrs: map[*File]map[string][]attrValue{}, binds: map[modelKey]map[string][]binding{}, memos: map[*File]map[string]string{}}
}

// attrsOf are the values the file binds to attributes called attr (on any
// object), with the functions that bind them.
func (s *modelSet) attrsOf(f *File, attr string) []attrValue {
	if s.fileAttrs == nil {
		s.fileAttrs = s.facts.fileAttrs(s.p, f)
	}
	return s.fileAttrs[attr]
}

func (ff *fileFacts) fileAttrs(p *Pass, f *File) map[string][]attrValue {
	if m, ok := ff.attrs[f]; ok {
		return m
	}
	m := shared(p, attrsKey{f}, func() map[string][]attrValue { return syntacticAttrs(f) })
	ff.attrs[f] = m
	return m
}

// syntacticAttrs are the values bound to `<anything>.<attr>` in the file,
// by attribute name.
func syntacticAttrs(f *File) map[string][]attrValue {
	m := map[string][]attrValue{}
	for _, fn := range append([]*Function{f.Top}, f.Funcs...) {
		if fn == nil || fn.Kind == index.Lambda {
			continue
		}
		walkCode(fn.BodyStmts(), func(x *Node) bool {
			if x.Kind() == "assignment" {
				if l, r := x.Get("left"), x.Get("right"); l != nil && r != nil && l.Kind() == "attribute" {
					a := l.Get("attribute").Text(f.Src)
					m[a] = append(m[a], attrValue{r, fn})
				}
			}
			return true
		})
	}
	return m
}

func (ff *fileFacts) defaultDevice(p *Pass, f *File) Device {
	if d, ok := ff.defDev[f]; ok {
		return d
	}
	d := shared(p, defDevKey{f}, func() Device { return fileDefaultDevice(f) })
	ff.defDev[f] = d
	return d
}

func (s *modelSet) of(f *File, fn *Function) *Model {
	if m := s.byFn[fn]; m != nil {
		return m
	}
	m := newModelOf(s, f, fn)
	s.byFn[fn] = m
	return m
}

// NewModel builds the model of the pass's function.
func NewModel(p *Pass) *Model {
	facts, _ := p.Facts.(*fileFacts)
	if facts == nil {
		facts = NewFileFacts()
	}
	if facts.models == nil || facts.models.p.Proj != p.Proj {
		facts.models = &modelSet{p: p, byFn: map[*Function]*Model{}, facts: facts}
	}
	return facts.models.of(p.File, p.Fn)
}

func newModelOf(s *modelSet, f *File, fn *Function) *Model {
	return &Model{p: s.p, f: f, fn: fn, set: s}
}

// init builds the model on its first question: most functions ask none.
func (m *Model) init() {
	if m.binds != nil {
		return
	}
	m.devMemo, m.kindMemo, m.busy = map[*Node]Device{}, map[*Node]ValKind{}, map[*Node]bool{}
	f, fn := m.f, m.fn
	if fn == nil || fn.Kind == index.TopLevel || f.Top == nil {
		m.defDev = m.set.facts.defaultDevice(m.p, f)
	} else {
		top := m.set.of(f, f.Top)
		top.init()
		m.defDev = top.defDev
	}
	key := modelKey{f, fn}
	if b, ok := m.set.facts.binds[key]; ok {
		m.binds = b // read only from here on
		return
	}
	m.binds = shared(m.p, bindsKey(key), func() map[string][]binding {
		b := &Model{f: f, fn: fn, binds: map[string][]binding{}}
		b.bindAll()
		return b.binds
	})
	m.set.facts.binds[key] = m.binds
}

// shared is what mk makes of the file's syntax, made once a run when the
// model has a project (its Memo: the files' rules run on every core, and
// a callers pass reads another file's functions again, with facts of its
// own), else once for the model's facts. mk reads the syntax only, so
// every goroutine's copy would be equal.
func shared[K comparable, V any](p *Pass, key K, mk func() V) V {
	if p == nil || p.Proj == nil {
		return mk()
	}
	return p.Proj.Memo(key, func() any { return mk() }).(V)
}

// bindSteps counts bindAll's calls: the tests read it (BindingsRecorded).
var bindSteps atomic.Int64

// BindingsRecorded is how many times a function's bindings were recorded
// in this process.
func BindingsRecorded() int64 { return bindSteps.Load() }

// The keys of shared's memos: a function's bindings, a file's default
// device and its attribute stores.
type (
	bindsKey  modelKey
	defDevKey struct{ f *File }
	attrsKey  struct{ f *File }
)

// bindAll records the bindings of the model's function: its parameters
// and every name its body binds (m.binds, empty, is filled).
func (m *Model) bindAll() {
	bindSteps.Add(1)
	f, fn := m.f, m.fn
	if fn == nil {
		return
	}
	for _, prm := range fn.Params {
		if prm.Node == nil {
			continue
		}
		m.binds[prm.Name] = append(m.binds[prm.Name], binding{Start: int(prm.Node.Start), End: int(prm.Node.Start), IsParam: true, param: prm.Annotation, Value: prm.Default})
	}
	stmts := fn.BodyStmts()
	walkCode(stmts, func(n *Node) bool {
		switch n.Kind() {
		case "assignment", "augmented_assignment":
			l, r := n.Get("left"), n.Get("right")
			st := n
			for st.Parent() != nil && st.Parent().Kind() == "expression_statement" {
				st = st.Parent()
			}
			if n.Kind() == "augmented_assignment" {
				if l != nil && l.Kind() == "identifier" {
					// x += t keeps x's kind where both agree; model it as x = x <op> t.
					m.binds[l.Text(f.Src)] = append(m.binds[l.Text(f.Src)], binding{Start: int(st.Start), End: int(st.End), Value: n})
				}
				return true
			}
			m.bindTarget(l, r, spanOf(st), false)
		case "for_statement":
			// The target is bound before the body runs: reads in the body
			// (and after the loop) see it, not what the name held before.
			at := spanOf(n)
			if r := n.Get("right"); r != nil {
				at.End = int(r.End)
			}
			m.bindTarget(n.Get("left"), nil, at, true)
			m.iterOf(n.Get("left"), n.Get("right"))
		case "for_in_clause":
			// `[f(x) for x in xs]`: the element comes before its clause;
			// the binding holds for reads inside the comprehension only.
			at := spanOf(n)
			if c := n.Parent(); c != nil {
				at = span{Start: int(c.Start), End: int(c.Start), scope: c}
			}
			m.bindTarget(n.Get("left"), nil, at, true)
			m.iterOf(n.Get("left"), n.Get("right"))
		case "with_item":
			if v := n.Get("value"); v != nil && v.Kind() == "as_pattern" {
				for _, t := range v.All("alias") {
					m.bindTarget(t, nil, spanOf(n), true)
				}
			}
		case "named_expression":
			if nm := n.Get("name"); nm != nil {
				m.binds[nm.Text(f.Src)] = append(m.binds[nm.Text(f.Src)], binding{Start: int(n.Start), End: int(n.End), Value: n.Get("value")})
			}
		}
		return true
	})
}

// iterOf records, for a for target that is one name, the iterable it
// takes its elements from (binding.Iter) on the binding bindTarget just
// made.
//
// A target that unpacks builtin zip's or enumerate's items takes each name
// from one of the iterables: `for p, ll in zip(prompts, lls)` takes ll from
// lls, `for i, t in enumerate(bufs)` t from bufs.
func (m *Model) iterOf(t, iter *Node) {
	t = Unparen(t)
	if t == nil || iter == nil {
		return
	}
	if t.Kind() == "identifier" {
		if bs := m.binds[t.Text(m.f.Src)]; len(bs) > 0 {
			bs[len(bs)-1].Iter = iter
		}
		return
	}
	call := Unparen(iter)
	if !t.Is("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list") || call == nil || call.Kind() != "call" {
		return
	}
	targets, args := t.NamedChildren(), Positional(call.Get("arguments"))
	switch m.builtinOf(Unparen(call.Get("function"))) {
	case "zip":
		if len(args) != len(targets) || len(call.Get("arguments").NamedChildren()) != len(args) {
			return // one iterable a name, every argument positional (with `strict=`, the names stay unknown)
		}
	case "enumerate":
		if len(targets) != 2 || len(args) < 1 {
			return
		}
		targets, args = targets[1:], args[:1]
	default:
		return
	}
	for i, e := range targets {
		if e = Unparen(e); e.Kind() == "identifier" {
			m.iterOf(e, args[i])
		}
	}
}

// span is where a binding is made: the statement's range, and for a
// comprehension's target the comprehension it holds in.
type span struct {
	Start, End int
	scope      *Node
}

func spanOf(n *Node) span { return span{Start: int(n.Start), End: int(n.End)} }

// holds: a read at off can see b (a comprehension's target only inside
// the comprehension).
func (b *binding) holds(off int) bool {
	return b.scope == nil || int(b.scope.Start) <= off && off < int(b.scope.End)
}

// bindTarget records the names a target binds; value is what the whole
// target is bound to (nil: unknown).
func (m *Model) bindTarget(t, value *Node, stmt span, unknown bool) {
	if t == nil {
		return
	}
	src := m.f.Src
	switch t.Kind() {
	case "identifier":
		b := binding{Start: stmt.Start, End: stmt.End, Value: value, scope: stmt.scope}
		if unknown {
			b.Value = nil
		}
		m.binds[t.Text(src)] = append(m.binds[t.Text(src)], b)
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list":
		if ps := PairedTargets(t, value); !unknown && ps != nil && len(ps) == len(t.NamedChildren()) {
			// lo, hi = int(a.min()), int(a.max()): each name is bound to
			// its own element.
			for _, p := range ps {
				m.bindTarget(p[0], p[1], stmt, false)
			}
			return
		}
		// a, b = x.chunk(2): the names are elements of value.
		arity := len(t.NamedChildren())
		for _, e := range t.NamedChildren() {
			if e.Kind() == "list_splat_pattern" || e.Kind() == "list_splat" {
				arity = 0
			}
		}
		for i, e := range t.NamedChildren() {
			if e.Kind() == "list_splat_pattern" || e.Kind() == "list_splat" {
				// *lead, d = x.shape: lead is a list of value's elements.
				for _, c := range e.NamedChildren() {
					if c.Kind() == "identifier" && !unknown && value != nil {
						m.binds[c.Text(src)] = append(m.binds[c.Text(src)], binding{Start: stmt.Start, End: stmt.End, Value: value, Unpack: true, Starred: true, scope: stmt.scope})
						continue
					}
					m.bindTarget(c, nil, stmt, true)
				}
				continue
			}
			if e.Kind() == "identifier" {
				b := binding{Start: stmt.Start, End: stmt.End, Value: value, Unpack: true, Index: i, Arity: arity, scope: stmt.scope}
				if unknown {
					b.Value = nil
				}
				m.binds[e.Text(src)] = append(m.binds[e.Text(src)], b)
				continue
			}
			m.bindTarget(e, nil, stmt, true)
		}
	case "parenthesized_expression":
		m.bindTarget(Unparen(t), value, stmt, unknown)
	case "as_pattern_target":
		for _, c := range t.NamedChildren() {
			m.bindTarget(c, nil, stmt, true)
		}
	}
}

// BindingAt is the binding of name that the code at offset off sees: the
// last one that ends before off, in source order.
func (m *Model) BindingAt(name string, off int) *binding {
	m.init()
	bs := m.binds[name]
	for i := len(bs) - 1; i >= 0; i-- {
		if !bs[i].holds(off) {
			continue
		}
		if bs[i].End <= off || bs[i].IsParam {
			return &bs[i]
		}
	}
	return nil
}

// BindingOf is the binding of name that reaches the read use: the last
// one before it (BindingAt), passing over those in another arm of an if
// statement that holds the read, which no run goes through on its way to
// the read (unless a loop around the if carries it to the next
// iteration). `if c is None: c = [..] else: c = c.tolist()` reads the
// parameter in the else arm, not the list.
func (m *Model) BindingOf(name string, use *Node) *binding {
	m.init()
	bs := m.binds[name]
	for i := len(bs) - 1; i >= 0; i-- {
		b := &bs[i]
		if !b.holds(int(use.Start)) {
			continue
		}
		if b.IsParam {
			return b
		}
		if b.End > int(use.Start) {
			continue
		}
		if b.Value != nil && exclusiveArms(b.Value, use) && !loopHolds(b.Value, use) {
			continue
		}
		return b
	}
	return nil
}

// loopHolds says whether a for or while loop around use, inside its
// function, also holds b: the next iteration may carry b to use.
func loopHolds(b, use *Node) bool {
	for l := use.Parent(); l != nil; l = l.Parent() {
		switch l.Kind() {
		case "function_definition", "lambda", "class_definition":
			return false
		case "for_statement", "while_statement":
			if l.Start <= b.Start && b.End <= l.End {
				return true
			}
		}
	}
	return false
}

// Bound reports whether name is a local of the function (bound anywhere in it).
func (m *Model) Bound(name string) bool {
	m.init()
	return len(m.binds[name]) > 0
}

// fileDefaultDevice is the default device the file sets with
// torch.set_default_device (or set_default_tensor_type to a CUDA type):
// factories without `device=` make tensors there. CPU when it sets none.
func fileDefaultDevice(f *File) Device {
	if f == nil || !bytes.Contains(f.Src, []byte("set_default")) {
		return DevCPU
	}
	d := DevCPU
	Walk(f.Tree.Root, func(n *Node) bool {
		if n.Kind() != "call" {
			return true
		}
		q := f.Qualify(n.Get("function"))
		switch q {
		case "torch.set_default_device":
			if a := Positional(n.Get("arguments")); len(a) > 0 {
				if v := devLiteral(f, a[0]); v != DevUnknown {
					d = v
				} else {
					d = DevUnknown
				}
			}
		case "torch.set_default_tensor_type":
			if a := Positional(n.Get("arguments")); len(a) > 0 {
				if strings.Contains(a[0].Text(f.Src), "cuda") {
					d = DevCUDA
				}
			}
		}
		return true
	})
	return d
}

// devLiteral is the device a literal device expression names: "cuda:0",
// "cpu", 0, torch.device("cuda").
func devLiteral(f *File, n *Node) Device {
	n = Unparen(n)
	if n == nil {
		return DevUnknown
	}
	switch n.Kind() {
	case "string", "concatenated_string":
		t := strings.ToLower(n.Text(f.Src))
		switch {
		case strings.Contains(t, "cuda"):
			return DevCUDA
		case strings.Contains(t, "cpu"):
			return DevCPU
		}
	case "integer":
		return DevCUDA // a device index
	case "call":
		switch f.Qualify(n.Get("function")) {
		case "torch.device":
			if a := Positional(n.Get("arguments")); len(a) > 0 {
				return devLiteral(f, a[0])
			}
		case "torch.cuda.current_device":
			return DevCUDA
		}
	}
	return DevUnknown
}

// devArg is the device a `device=` (or `.to(...)`) argument names.
func (m *Model) devArg(n *Node) Device {
	m.init()
	n = Unparen(n)
	if n == nil {
		return DevUnknown
	}
	if d := devLiteral(m.f, n); d != DevUnknown {
		return d
	}
	src := m.f.Src
	switch n.Kind() {
	case "attribute":
		if n.Get("attribute").Text(src) == "device" {
			return m.Dev(n.Get("object"))
		}
	case "identifier":
		if b := m.BindingOf(n.Text(src), n); b != nil && b.Value != nil && !b.Unpack && !b.IsParam {
			if m.busy[b.Value] {
				return DevUnknown
			}
			m.busy[b.Value] = true
			defer delete(m.busy, b.Value)
			return m.devArg(b.Value)
		}
	case "call":
		if _, name, _ := MethodCall(n, src); name == "get_device" {
			return DevCUDA
		}
	}
	return DevUnknown
}

// FactoryDevice is where a factory call puts its tensor: its `device=`, or
// the device of an enclosing `with torch.device(...)`, or the default.
func (m *Model) FactoryDevice(call *Node) Device {
	m.init()
	args := call.Get("arguments")
	if pm := Keyword(args, "pin_memory", m.f.Src); pm != nil && pm.Text(m.f.Src) == "True" {
		return DevPinned
	}
	if d := Keyword(args, "device", m.f.Src); d != nil {
		return m.devArg(d)
	}
	if cuda, ok := legacyConstructors[m.f.Qualify(call.Get("function"))]; ok && cuda {
		return DevCUDA // torch.cuda.LongTensor(lens)
	}
	for x := call.Parent(); x != nil; x = x.Parent() {
		if x.Kind() == "with_statement" {
			for _, it := range x.Children() {
				if it.Kind() != "with_clause" {
					continue
				}
				for _, wi := range it.NamedChildren() {
					v := Unparen(wi.Get("value"))
					if v != nil && v.Kind() == "as_pattern" {
						v = v.NamedChildren()[0]
					}
					if v != nil && v.Kind() == "call" && m.f.Qualify(v.Get("function")) == "torch.device" {
						if a := Positional(v.Get("arguments")); len(a) > 0 {
							return devLiteral(m.f, a[0])
						}
					}
				}
			}
		}
		if x.Is("function_definition", "lambda", "class_definition") {
			break
		}
	}
	return m.defDev
}

// Dev is where tensor expression n lives.
func (m *Model) Dev(n *Node) Device {
	m.init()
	return memoized(m, m.devMemo, Unparen(n), DevUnknown, m.dev1)
}

func (m *Model) dev1(n *Node) Device {
	src := m.f.Src
	switch n.Kind() {
	case "identifier":
		b := m.BindingOf(n.Text(src), n)
		if b == nil {
			if v, outer := m.freeValue(n.Text(src)); v != nil {
				// A closure's free variable: its value where the closure is called.
				return outer.Dev(v)
			}
		}
		if b == nil && !m.Bound(n.Text(src)) {
			if d := m.moduleDev(n.Text(src)); d != DevUnknown {
				return d // a module-level tensor (TABLE = torch.tensor([...]))
			}
		}
		if b != nil && b.Value == nil && b.Iter != nil {
			// `for t in bufs`: an element of what it iterates over.
			if d := m.elemDev(b.Iter); d != DevUnknown {
				return d
			}
		}
		if b != nil && b.Value != nil && !b.Unpack && !b.IsParam && containerLit(b.Value) {
			// `bufs = [torch.empty(s, device="cpu") for s in sizes]`:
			// where its elements are (those stored into it later too).
			return m.elemDev(n)
		}
		if b == nil || b.Value == nil || b.IsParam {
			if CpuMirror(n.Text(src)) {
				return DevCPU // seq_lens_cpu: named for the host copy it is
			}
			if b != nil && b.IsParam {
				return m.paramDevFromCallers(n.Text(src))
			}
			return DevUnknown
		}
		if b.Unpack {
			if b.Starred {
				return DevUnknown // a list
			}
			if recv, name, _ := MethodCall(b.Value, src); recv != nil && splitMethods[name] {
				return m.Dev(recv)
			}
			if m.savedTensors(b.Value) {
				// `x, scale = ctx.saved_tensors`: what forward saved there.
				return m.savedDev(b.Index, b.Arity)
			}
			return foldReturnedElem(m, b, DevUnknown, (*Model).Dev)
		}
		var d Device
		if b.Value.Kind() == "augmented_assignment" {
			d = m.Dev(b.Value.Get("right"))
		} else {
			d = m.Dev(b.Value)
		}
		if d == DevUnknown && CpuMirror(n.Text(src)) {
			// `active_cpu = (lens_cpu > 0) & ...`: what the value model
			// cannot place, its name does (the host copy it is named for).
			return DevCPU
		}
		return d
	case "attribute":
		obj := n.Get("object")
		a := n.Get("attribute").Text(src)
		if tensorAttrs[a] {
			return m.Dev(obj)
		}
		if CpuMirror(a) && len(m.selfAttr(n)) == 0 {
			return DevCPU
		}
		if vals := m.selfAttr(n); len(vals) > 0 {
			d := DevUnknown
			for i, v := range vals {
				dv := m.set.of(v.fn.File, v.fn).Dev(v.value)
				if i == 0 {
					d = dv
				} else if dv != d {
					return DevUnknown
				}
			}
			return d
		}
	case "subscript":
		if v := n.Get("value"); m.savedTensors(v) {
			// `ctx.saved_tensors[1]`
			if i, err := strconv.Atoi(strings.TrimSpace(n.Get("subscript").Text(src))); err == nil && i >= 0 {
				return m.savedDev(i, 0)
			}
			return DevUnknown
		}
		return m.Dev(n.Get("value"))
	case "list", "tuple", "list_comprehension", "set", "set_comprehension", "generator_expression",
		"dictionary", "dictionary_comprehension":
		return m.elemDev(n)
	case "binary_operator":
		l, r := n.Get("left"), n.Get("right")
		switch {
		case m.Kind(l) == KMeta:
			return m.Dev(r)
		case m.Kind(r) == KMeta:
			return m.Dev(l)
		}
		return combineDev(m.Dev(l), m.Dev(r))
	case "unary_operator":
		return m.Dev(n.Get("argument"))
	case "comparison_operator":
		// `t.sum() > 0`, `a == b`: elementwise, on the tensors' device.
		d := DevUnknown
		seen := false
		for _, op := range n.NamedChildren() {
			if m.Kind(op) != KTensor {
				continue
			}
			if !seen {
				d, seen = m.Dev(op), true
			} else {
				d = combineDev(d, m.Dev(op))
			}
		}
		return d
	case "conditional_expression":
		parts := n.NamedChildren()
		if len(parts) == 3 {
			a, b := m.Dev(parts[0]), m.Dev(parts[2])
			if a == b {
				return a
			}
		}
	case "call":
		return m.callDev(n)
	}
	return DevUnknown
}

// moduleDev is the device of a module-level name a function reads: what
// every plain module-level assignment of it gives (`TABLE =
// torch.tensor([...])` is on the default device, the CPU unless the
// program sets another), DevUnknown where they differ, where one cannot
// be told, or where a function of the file rebinds the name (`global`).
func (m *Model) moduleDev(name string) Device {
	top, bs := m.moduleBinds(name)
	if len(bs) == 0 {
		return DevUnknown
	}
	for _, fn := range m.f.Funcs {
		if fn.Globals[name] {
			return DevUnknown
		}
	}
	d := DevUnknown
	for i, b := range bs {
		if b.Value == nil || b.Unpack || b.IsParam || b.Value.Kind() == "augmented_assignment" {
			return DevUnknown
		}
		bd := top.Dev(b.Value)
		if bd == DevUnknown || i > 0 && bd != d {
			return DevUnknown
		}
		d = bd
	}
	return d
}

// moduleBinds are the module-level bindings of name, with the module's
// model, as a function of the file reads it (none for the module's own
// code, or where the file has no module model).
func (m *Model) moduleBinds(name string) (*Model, []binding) {
	if m.fn == nil || m.fn.Kind == index.TopLevel || m.f.Top == nil {
		return nil, nil
	}
	top := m.set.of(m.f, m.f.Top)
	top.init()
	return top, top.binds[name]
}

// freeValue is the value a closure's free variable name has where the
// enclosing function first calls the closure (`def inner(): ... x ...`
// then `x = torch.tensor(...)`, `inner()`), with the enclosing function's
// model; nil when name is local, the function is no closure, it is not
// called there by name, or the binding is not a plain assignment.
func (m *Model) freeValue(name string) (*Node, *Model) {
	m.init()
	fn := m.fn
	if fn == nil || fn.Outer == nil || fn.Outer.Kind != index.Def || fn.Globals[name] || fn.Kind != index.Def {
		return nil, nil
	}
	if len(m.binds[name]) > 0 && !fn.Nonlocals[name] {
		return nil, nil
	}
	outer := m.set.of(m.f, fn.Outer)
	call := -1
	Walk(fn.Outer.Body, func(n *Node) bool {
		if call >= 0 {
			return false
		}
		if n.Kind() == "call" {
			if c := Unparen(n.Get("function")); c != nil && c.Kind() == "identifier" && c.Text(m.f.Src) == fn.Name && n.Start > fn.Def.End {
				call = int(n.Start)
			}
		}
		return true
	})
	if call < 0 {
		return nil, nil
	}
	b := outer.BindingAt(name, call)
	if b == nil || b.Value == nil || b.IsParam || b.Unpack {
		return nil, nil
	}
	v := b.Value
	if v.Kind() == "augmented_assignment" {
		v = v.Get("right")
	}
	return v, outer
}

// combineDev is the device of an elementwise result: cuda when an operand
// is (a CPU scalar tensor broadcasts onto it), host when both are.
func combineDev(a, b Device) Device {
	switch {
	case a == DevCUDA || b == DevCUDA:
		return DevCUDA
	case a.Host() && b.Host():
		return DevCPU
	}
	return DevUnknown
}

func (m *Model) callDev(n *Node) Device {
	src := m.f.Src
	callee := Unparen(n.Get("function"))
	args := n.Get("arguments")
	q := m.f.Qualify(callee)
	switch {
	case q == "torch.from_numpy" || q == "torch.frombuffer" || cpuStateGetters[q]:
		return DevCPU
	case torchapi.ModuleState[q]:
		// nn.Parameter(torch.zeros(c)): made on the host, moved with its
		// module (torchapi.ModuleState): placed only where it was made on
		// a device.
		if a := Positional(args); len(a) > 0 {
			if d := m.Dev(a[0]); d != DevUnknown && !d.Host() {
				return d
			}
		}
		return DevUnknown
	case likeFactories[q] || strings.HasPrefix(q, "torch.") && strings.HasSuffix(q, "_like") || tensorDraws[q]:
		// `torch.randn_like(x)`, `torch.multinomial(probs, 1)`: made where
		// the tensor they are given is, unless `device=` says (a draw from
		// numbers, `torch.normal(0.0, 1.0, size)`, on the default device).
		a := Positional(args)
		switch {
		case Keyword(args, "device", src) != nil:
			return m.FactoryDevice(n)
		case !tensorDraws[q] && len(a) > 0, len(a) > 0 && m.Kind(a[0]) == KTensor:
			return m.Dev(a[0])
		case tensorDraws[q]:
			return m.FactoryDevice(n)
		}
		return DevUnknown
	case hostBuilders[q] || allocators[q] || randomFactories[q] || torchFactories[q]:
		if q == "torch.as_tensor" || q == "torch.asarray" {
			if Keyword(args, "device", src) == nil {
				if a := Positional(args); len(a) > 0 && m.Kind(a[0]) == KTensor {
					return m.Dev(a[0])
				}
			}
		}
		return m.FactoryDevice(n)
	case strings.HasPrefix(q, "torch.") && !strings.HasPrefix(q, "torch.cuda.") && args != nil:
		// torch.cat([a, b]), torch.where(c, a, b): the device of the tensors.
		d := DevUnknown
		for i, a := range Positional(args) {
			a = Unparen(a)
			if a.Is("list", "tuple") {
				if el := a.NamedChildren(); len(el) > 0 {
					a = el[0]
				}
			}
			var da Device
			switch {
			case m.Kind(a) == KTensor:
				da = m.Dev(a)
			case a.Kind() == "identifier" && m.elemKind(a) == KTensor:
				// torch.cat(parts) of a list the function builds: where its
				// elements are.
				da = m.elemDev(a)
			default:
				continue
			}
			if i == 0 || d == DevUnknown {
				d = da
			} else {
				d = combineDev(d, da)
			}
		}
		return d
	}
	recv, name, margs := MethodCall(n, src)
	if recv == nil {
		return m.returnDev(n)
	}
	switch name {
	case "cpu", "numpy":
		return DevCPU
	case "cuda":
		return DevCUDA
	case "pin_memory":
		return DevPinned
	case "to":
		if d := Keyword(margs, "device", src); d != nil {
			return m.devArg(d)
		}
		for _, a := range Positional(margs) {
			if IsDtype(m.f, a) {
				continue
			}
			if m.Kind(a) == KTensor { // .to(other): other's device and dtype
				return m.Dev(a)
			}
			if d := m.devArg(a); d != DevUnknown {
				return d
			}
			return DevUnknown
		}
		return m.Dev(recv)
	case "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor":
		if Keyword(margs, "device", src) != nil {
			return m.FactoryDevice(n)
		}
		return m.Dev(recv)
	}
	if k := m.Kind(recv); k == KTensor || k == KUnknown && tensorOnlyMethods[name] {
		return m.Dev(recv)
	}
	if tensorOnlyMethods[name] {
		if d := m.Dev(recv); d != DevUnknown {
			// `meta.counts_cpu.sum()`: a method only tensors have, of what
			// the model places (by its name, where it cannot tell its
			// kind), runs on that device.
			return d
		}
	}
	return m.returnDev(n)
}

// returnDev is the device of what the project function a call resolves to
// returns, where all its returns agree.
func (m *Model) returnDev(n *Node) Device {
	agree := agreement[Device]{unknown: DevUnknown}
	m.eachReturn(n, func(r *Model, ret *Node) bool {
		rd := r.Dev(ret)
		if rd == DevUnknown {
			// `def load(name, device="cuda"): return torch.empty(..., device=device)`
			// called with device="cpu": the argument places it.
			if p := r.placedBy(ret); p != nil {
				rd = m.paramDevAt(n, r, p)
			}
		}
		return agree.add(rd)
	})
	return agree.value()
}

// agreement folds the values (devices, kinds) of a function's returns:
// the one they all have, else unknown; add says whether another can still
// agree.
type agreement[T comparable] struct {
	v, unknown T
	seen       bool
}

func (a *agreement[T]) add(x T) bool {
	if !a.seen {
		a.v, a.seen = x, true
	} else if x != a.v {
		a.v = a.unknown
	}
	return a.v != a.unknown
}

// value is the agreed value, unknown where nothing was added.
func (a *agreement[T]) value() T {
	if !a.seen {
		return a.unknown
	}
	return a.v
}

// foldReturnedElem is what the elements that the unpacked binding b
// reads from its call's returns (eachReturnedElem) agree on, by of
// (Model.Dev, Model.Kind); an element it cannot find is unknown.
func foldReturnedElem[T comparable](m *Model, b *binding, unknown T, of func(*Model, *Node) T) T {
	agree := agreement[T]{unknown: unknown}
	m.eachReturnedElem(b.Value, b.Index, b.Arity, func(r *Model, e *Node) bool {
		if e == nil {
			return agree.add(unknown)
		}
		return agree.add(of(r, e))
	})
	return agree.value()
}

// placedBy is the parameter of m's function whose value alone places the
// tensor ret evaluates to: a factory's `device=p`, `x.to(p)` or
// `x.to(device=p)`, or a local bound once to one of those; nil otherwise.
func (m *Model) placedBy(ret *Node) *index.Param {
	if m.fn == nil {
		return nil
	}
	src := m.f.Src
	n := Unparen(ret)
	// Through locals bound once and the tensor methods that keep the
	// device (`mask.triu(-w).tril(w)`), a few steps.
	for range 8 {
		if n != nil && n.Kind() == "identifier" {
			if b := m.BindingOf(n.Text(src), n); b != nil && b.Value != nil && !b.Unpack && !b.IsParam {
				n = Unparen(b.Value)
				continue
			}
			return nil
		}
		if n == nil || n.Kind() != "call" {
			return nil
		}
		recv, name, _ := MethodCall(n, src)
		if recv == nil || m.Kind(recv) != KTensor {
			break
		}
		switch name {
		case "to":
		case "cpu", "cuda", "numpy", "pin_memory", "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "tolist", "item":
			return nil
		default:
			n = Unparen(recv)
			continue
		}
		break
	}
	if n == nil || n.Kind() != "call" {
		return nil
	}
	var d *Node
	q := m.f.Qualify(n.Get("function"))
	if hostBuilders[q] || allocators[q] || randomFactories[q] || torchFactories[q] || likeFactories[q] {
		d = Keyword(n.Get("arguments"), "device", src)
	} else if recv, name, margs := MethodCall(n, src); recv != nil && name == "to" && margs != nil {
		if d = Keyword(margs, "device", src); d == nil {
			if a := Positional(margs); len(a) > 0 {
				d = a[0]
			}
		}
	}
	d = Unparen(d)
	if d == nil || d.Kind() != "identifier" {
		return nil
	}
	name := d.Text(src)
	if b := m.BindingAt(name, int(d.Start)); b == nil || !b.IsParam {
		return nil
	}
	for i := range m.fn.Params {
		if p := &m.fn.Params[i]; p.Name == name && (p.Kind == index.Positional || p.Kind == index.KwOnly || p.Kind == index.PosOnly) {
			return p
		}
	}
	return nil
}

// paramDevAt is the device that call (in m) passes for parameter p of
// r's function (contexts.ArgumentFor): its argument, else p's default
// (read in r); unknown where the call cannot be matched.
func (m *Model) paramDevAt(call *Node, r *Model, p *index.Param) Device {
	if m.fn == nil || m.p == nil || m.p.Proj == nil || m.p.Proj.G == nil {
		return DevUnknown
	}
	arg, dflt, ok := contexts.ArgumentFor(m.p.Proj.G, m.fn, call, r.fn, p.Name)
	switch {
	case !ok:
		return DevUnknown
	case dflt:
		return r.devArg(p.Default)
	}
	return m.devArg(arg)
}

// selfAttr returns the values bound to `self.<attr>` in the methods of
// the function's class, when n is such an attribute; for another object's
// attribute, the values the file binds to attributes of that name; nil
// otherwise.
func (m *Model) selfAttr(n *Node) []attrValue {
	if m.fn == nil || n.Kind() != "attribute" {
		return nil
	}
	obj := Unparen(n.Get("object"))
	self := m.fn.Self()
	if self == "" || obj == nil || obj.Kind() != "identifier" || obj.Text(m.f.Src) != self {
		// st.cols: what the file binds to attributes of that name.
		if obj != nil && obj.Is("identifier", "attribute") {
			return m.set.attrsOf(m.f, n.Get("attribute").Text(m.f.Src))
		}
		return nil
	}
	cls := m.fn.Owner()
	if cls == nil {
		return nil
	}
	if m.attrs == nil {
		m.attrs = map[string][]attrValue{}
		for _, meth := range cls.Methods {
			s := meth.Self()
			if s == "" {
				continue
			}
			walkCode(meth.BodyStmts(), func(x *Node) bool {
				if x.Kind() != "assignment" {
					return true
				}
				l, r := x.Get("left"), x.Get("right")
				if l != nil && r != nil && l.Kind() == "attribute" && isName(Unparen(l.Get("object")), s, m.f.Src) && meth.File == m.f {
					a := l.Get("attribute").Text(m.f.Src)
					m.attrs[a] = append(m.attrs[a], attrValue{r, meth})
				}
				return true
			})
		}
	}
	return m.attrs[n.Get("attribute").Text(m.f.Src)]
}

// Kind is what kind of Python value n is.
func (m *Model) Kind(n *Node) ValKind {
	m.init()
	return memoized(m, m.kindMemo, Unparen(n), KUnknown, m.kind1)
}

// memoized answers a question about expression n once (compute, kept in
// memo), and unknown for a nil n or one whose answer is being computed
// (a binding that reads itself).
func memoized[T any](m *Model, memo map[*Node]T, n *Node, unknown T, compute func(*Node) T) T {
	if n == nil {
		return unknown
	}
	if v, ok := memo[n]; ok {
		return v
	}
	if m.busy[n] {
		return unknown
	}
	m.busy[n] = true
	v := compute(n)
	delete(m.busy, n)
	memo[n] = v
	return v
}

// combineKind is the kind of an operation on values of kinds a and b.
func combineKind(a, b ValKind) ValKind {
	switch {
	case a == KTensor || b == KTensor:
		return KTensor
	case a == KHostRead || b == KHostRead:
		return KHostRead
	case a == KUnknown || b == KUnknown:
		return KUnknown
	case a == KHostData || b == KHostData:
		return KHostData
	}
	return KMeta
}

func (m *Model) kind1(n *Node) ValKind {
	src := m.f.Src
	switch n.Kind() {
	case "integer", "float", "true", "false", "none", "string", "concatenated_string", "ellipsis":
		return KMeta
	case "list", "tuple", "set", "expression_list":
		k := KMeta
		for _, e := range n.NamedChildren() {
			ek := m.Kind(e)
			if ek == KTensor {
				ek = KHostData // a list of tensors is a Python container
			}
			k = combineKind(k, ek)
		}
		if k == KMeta && n.Kind() == "list" {
			return KHostData // a list literal is host data for a tensor built from it
		}
		return k
	case "list_comprehension", "dictionary", "dictionary_comprehension", "set_comprehension", "generator_expression":
		return KHostData
	case "identifier":
		return m.nameKind(n)
	case "attribute":
		a := n.Get("attribute").Text(src)
		obj := n.Get("object")
		switch {
		case metaAttrs[a]:
			return KMeta
		case tensorAttrs[a] && m.Kind(obj) == KTensor:
			return KTensor
		}
		if vals := m.selfAttr(n); len(vals) > 0 {
			k := m.set.of(vals[0].fn.File, vals[0].fn).Kind(vals[0].value)
			for _, v := range vals[1:] {
				if m.set.of(v.fn.File, v.fn).Kind(v.value) != k {
					return KUnknown
				}
			}
			return k
		}
		if k := m.declaredAttr(obj, a); k != KUnknown {
			return k
		}
		if m.Kind(obj) == KMeta {
			return KMeta // x.device.type, x.dtype.itemsize
		}
		if IsDtype(m.f, n) {
			return KMeta
		}
	case "subscript":
		v := Unparen(n.Get("value"))
		if v != nil && v.Kind() == "attribute" && v.Get("attribute").Text(src) == "shape" {
			return KMeta
		}
		if _, name, _ := MethodCall(v, src); name == "size" || name == "stride" {
			return KMeta
		}
		switch k := m.Kind(v); k {
		case KTensor, KHostRead, KMeta:
			return k
		case KHostData:
			if ix := Unparen(n.Get("subscript")); ix != nil && ix.Kind() != "slice" {
				return m.elemKind(v)
			}
			return k
		}
	case "binary_operator":
		return combineKind(m.Kind(n.Get("left")), m.Kind(n.Get("right")))
	case "unary_operator":
		return m.Kind(n.Get("argument"))
	case "not_operator":
		if k := m.Kind(n.Get("argument")); k == KTensor {
			return KHostRead // `not t` reads t's value on the host
		} else {
			return k
		}
	case "boolean_operator":
		k := combineKind(m.Kind(n.Get("left")), m.Kind(n.Get("right")))
		if k == KTensor {
			return KHostRead
		}
		return k
	case "comparison_operator":
		k := KMeta
		for _, c := range n.NamedChildren() {
			k = combineKind(k, m.Kind(c))
		}
		for _, c := range n.Children() {
			if !c.Named() && (c.Kind() == "is" || c.Kind() == "in" || c.Kind() == "is not" || c.Kind() == "not in") {
				return KMeta
			}
		}
		return k
	case "conditional_expression":
		parts := n.NamedChildren()
		if len(parts) == 3 {
			return combineKind(m.Kind(parts[0]), m.Kind(parts[2]))
		}
	case "call":
		return m.callKind(n)
	}
	return KUnknown
}

// elemKind is the kind of one element of v, a Python container (host
// data): a list or tuple literal's elements (`[None] * n` too), a list
// comprehension's body, and, for a
// name bound to one, what the function stores into it (`outs[i] = t`,
// `outs.append(t)`). Numbers and None keep the container's kind (host
// data, as before: an element read into a device tensor is a host copy);
// tensors give a tensor; anything else an unknown kind: an element of a
// list is whatever was put in it. A container the function did not build
// from a literal (a parameter declared `Sequence[int]`) keeps its kind.
func (m *Model) elemKind(v *Node) ValKind {
	src := m.f.Src
	v = Unparen(v)
	lit, name := v, ""
	if v.Kind() == "identifier" {
		name = v.Text(src)
		b := m.BindingOf(name, v)
		if b == nil || b.IsParam || b.Value == nil || b.Unpack {
			return KHostData
		}
		lit = Unparen(b.Value)
	}
	if lit.Kind() == "binary_operator" {
		if l := Unparen(lit.Get("left")); l != nil && l.Is("list", "tuple") {
			lit = l
		}
	}
	// One answer a container (its literal): a function that indexes one
	// list many times walks its body once; a store that reads the list
	// (`outs[i] = outs[j] + 1`) while the answer is worked out gets an
	// unknown kind.
	if k, ok := m.elemMemo[lit]; ok {
		return k
	}
	if m.elemMemo == nil {
		m.elemMemo = map[*Node]ValKind{}
	}
	m.elemMemo[lit] = KUnknown
	k := m.elemKindOf(lit, name)
	m.elemMemo[lit] = k
	return k
}

// listLit: n is a list or tuple display, or a list comprehension.
func listLit(n *Node) bool {
	return n.Is("list", "tuple") || n.Kind() == "list_comprehension" && n.Get("body") != nil
}

// containerLit: n is a container display or comprehension.
func containerLit(n *Node) bool {
	n = Unparen(n)
	return n != nil && n.Is("list", "tuple", "list_comprehension", "set", "set_comprehension", "generator_expression",
		"dictionary", "dictionary_comprehension")
}

// containerElems are the expressions that give the elements (a dict's
// values) of the container literal lit bound to name ("": none): its
// own, and what the function stores into name (`name[i] = v`,
// `name.append(v)`); unknownStore says a store's value could not be told.
// Both are empty where lit is no container.
func (m *Model) containerElems(lit *Node, name string) (elems []*Node, unknownStore bool) {
	src := m.f.Src
	switch {
	case lit.Is("list", "tuple", "set"):
		elems = lit.NamedChildren()
	case lit.Is("list_comprehension", "set_comprehension", "generator_expression") && lit.Get("body") != nil:
		elems = []*Node{lit.Get("body")} // [w(i) for i in ...]: each element is the body's value
	case lit.Kind() == "dictionary":
		for _, p := range lit.NamedChildren() {
			if p.Kind() == "pair" && p.Get("value") != nil {
				elems = append(elems, p.Get("value"))
			} else {
				unknownStore = true // `{**other}`
			}
		}
	case lit.Kind() == "dictionary_comprehension":
		if b := lit.Get("body"); b != nil && b.Get("value") != nil {
			elems = []*Node{b.Get("value")}
		}
	default:
		return nil, false
	}
	elems = elems[:len(elems):len(elems)] // appends below never write into the tree's slice
	if name != "" && m.fn != nil {
		walkCode(m.fn.BodyStmts(), func(n *Node) bool {
			switch n.Kind() {
			case "assignment":
				into := func(t *Node) bool { // t is `name[...]`
					t = Unparen(t)
					if t == nil || t.Kind() != "subscript" {
						return false
					}
					o := Unparen(t.Get("value"))
					return o != nil && o.Kind() == "identifier" && o.Text(src) == name
				}
				l, r := Unparen(n.Get("left")), n.Get("right")
				switch {
				case l == nil || r == nil:
				case into(l):
					elems = append(elems, r)
				case l.Is("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list"):
					// `outs[i], lse[i], *_ = attn_fwd(...)`: an element of
					// what the right side holds (paired with a literal's
					// element where it is one), of unknown kind otherwise.
					paired := PairedTargets(l, r)
					for _, t := range l.NamedChildren() {
						if !into(t) {
							continue
						}
						var v *Node
						for _, pr := range paired {
							if pr[0] == t {
								v = pr[1]
							}
						}
						if v == nil {
							unknownStore = true
						} else {
							elems = append(elems, v)
						}
					}
				}
			case "call":
				if recv, meth, args := MethodCall(n, src); recv != nil && Unparen(recv).Kind() == "identifier" && Unparen(recv).Text(src) == name &&
					(meth == "append" || meth == "insert") && args != nil {
					if a := args.NamedChildren(); len(a) > 0 {
						elems = append(elems, a[len(a)-1])
					}
				}
			}
			return true
		})
	}
	return elems, unknownStore
}

// elemKindOf is elemKind of the container literal lit bound to name ("":
// none).
func (m *Model) elemKindOf(lit *Node, name string) ValKind {
	if !listLit(lit) {
		return KHostData
	}
	elems, unknownStore := m.containerElems(lit, name)
	tensor, other := false, unknownStore
	for _, e := range elems {
		if u := Unparen(e); u.Kind() == "none" || u.Kind() == "call" && m.hostArith(u) {
			continue // None, or a host number: `[int(s) for s in sizes]`
		}
		switch m.Kind(e) {
		case KTensor:
			tensor = true
		case KMeta, KHostData, KHostRead:
		default:
			other = true
		}
	}
	switch {
	case other:
		return KUnknown
	case tensor:
		return KTensor
	}
	return KHostData
}

// savedTensors: n is `ctx.saved_tensors` in a method of an autograd
// Function, ctx its first parameter (torch.autograd.Function's documented
// protocol: backward reads what forward, or setup_context, passed to
// `ctx.save_for_backward`, in order).
func (m *Model) savedTensors(n *Node) bool {
	n = Unparen(n)
	if n == nil || n.Kind() != "attribute" || m.fn == nil || m.fn.Class == nil || len(m.fn.Params) == 0 {
		return false
	}
	obj := Unparen(n.Get("object"))
	return n.Get("attribute").Text(m.f.Src) == "saved_tensors" && obj != nil && obj.Kind() == "identifier" &&
		obj.Text(m.f.Src) == m.fn.Params[0].Name
}

// savedDev is the device of the i-th of the arity tensors (0: any number)
// that the class's forward and setup_context save with
// `ctx.save_for_backward(...)`, where every such call puts one device
// there; DevUnknown otherwise (a starred argument before it, another
// number of tensors, no call).
func (m *Model) savedDev(i, arity int) Device {
	agree := agreement[Device]{unknown: DevUnknown}
	for _, name := range []string{"forward", "setup_context"} {
		fn := m.fn.Class.Methods[name]
		if fn == nil || fn.Body == nil || len(fn.Params) == 0 {
			continue
		}
		r := m.set.of(fn.File, fn)
		ctx := fn.Params[0].Name
		src := fn.File.Src
		walkCode(fn.BodyStmts(), func(c *Node) bool {
			recv, meth, args := MethodCall(c, src)
			if recv == nil || meth != "save_for_backward" || Unparen(recv).Kind() != "identifier" || Unparen(recv).Text(src) != ctx {
				return true
			}
			pos := Positional(args)
			for j, a := range pos {
				if j <= i && Unparen(a).Kind() == "list_splat" {
					agree.add(DevUnknown)
					return false
				}
			}
			if i >= len(pos) || arity > 0 && len(pos) != arity {
				agree.add(DevUnknown)
				return false
			}
			agree.add(r.Dev(pos[i]))
			return true
		})
	}
	return agree.value()
}

// HostList: v is a Python list of host values the model can see: the
// result of `t.tolist()` (numbers), a display or comprehension whose
// elements are host data, or a local bound (not as a parameter) to one of
// those, with what the function stores or appends into it.
func (m *Model) HostList(v *Node) bool {
	m.init()
	v = Unparen(v)
	lit := v
	if v != nil && v.Kind() == "identifier" {
		b := m.BindingOf(v.Text(m.f.Src), v)
		if b == nil || b.IsParam || b.Value == nil || b.Unpack {
			return false
		}
		lit = Unparen(b.Value)
	}
	if lit == nil {
		return false
	}
	if _, name, _ := MethodCall(lit, m.f.Src); name == "tolist" {
		return true
	}
	if !listLit(lit) {
		return false
	}
	return m.elemKind(v) == KHostData
}

// elemDev is the device of the elements of the container v holds (a
// literal, or a name bound to one: what the function stores into it
// counts too), where they all agree; DevUnknown otherwise. None elements
// are passed over (`bufs = [None] * n`, then filled).
func (m *Model) elemDev(v *Node) Device {
	v = Unparen(v)
	lit, name := v, ""
	if v.Kind() == "identifier" {
		name = v.Text(m.f.Src)
		b := m.BindingOf(name, v)
		if b == nil || b.IsParam || b.Value == nil || b.Unpack && b.Starred {
			return DevUnknown
		}
		if b.Unpack {
			// `_, lls = gen.run(xs)`: the element of what the call
			// returns (foldReturnedElem), whose device is its elements'.
			return m.Dev(v)
		}
		lit = Unparen(b.Value)
	}
	if lit != nil && !containerLit(lit) && lit.Kind() == "call" {
		// `for ll in gen.run(xs)`: the elements of what a project function
		// returns are where it places them (a list's device is its
		// elements': returnDev, elemDev); a tensor's rows, and the parts
		// torch.split makes, are where the tensor is.
		return m.Dev(lit)
	}
	if lit == nil || !containerLit(lit) {
		return DevUnknown
	}
	elems, unknownStore := m.containerElems(lit, name)
	if unknownStore {
		return DevUnknown
	}
	agree := agreement[Device]{unknown: DevUnknown}
	for _, e := range elems {
		if u := Unparen(e); u == nil || u.Kind() == "none" {
			continue
		}
		if !agree.add(m.Dev(e)) {
			break
		}
	}
	return agree.value()
}

func (m *Model) nameKind(n *Node) ValKind {
	src := m.f.Src
	name := n.Text(src)
	if b := m.BindingOf(name, n); b != nil {
		switch {
		case b.IsParam:
			if k := annotationKind(m.f, b.param); k != KUnknown {
				return k
			}
			if optionalTensor(m.f, b.param) && notNoneAt(src, name, n) {
				return KTensor
			}
			if k := m.paramKindFromCallers(name, n); k != KUnknown || b.Value == nil {
				return k
			}
			// def f(x, offload_to_cpu=False, block=128): a literal default
			// says what the parameter holds.
			switch Unparen(b.Value).Kind() {
			case "true", "false", "integer", "float", "string":
				return KMeta
			}
			return KUnknown
		case b.Value == nil:
			if it := Unparen(b.Iter); it != nil && it.Kind() == "call" && m.builtinOf(Unparen(it.Get("function"))) == "range" {
				// `for i in range(n)`: a Python int, read on the host where
				// a bound is (`range(t.item())`).
				if k := m.Kind(it); k == KMeta || k == KHostRead {
					return k
				}
			}
			return KUnknown
		case b.Unpack:
			if b.Starred {
				// *lead, d = x.shape: a list of numbers (a list of
				// tensors is no tensor).
				if k := m.Kind(b.Value); k == KMeta || k == KHostRead {
					return k
				}
				return KUnknown
			}
			if recv, meth, _ := MethodCall(b.Value, src); recv != nil && splitMethods[meth] && m.Kind(recv) == KTensor {
				return KTensor
			}
			q := m.f.Qualify(Unparen(b.Value).Get("function"))
			if Unparen(b.Value).Kind() == "call" && (q == "torch.split" || q == "torch.chunk" || q == "torch.topk" || q == "torch.sort" || q == "torch.max" || q == "torch.min") {
				return KTensor
			}
			if k := m.Kind(b.Value); k == KMeta || k == KHostRead {
				return k // n, d = x.shape
			}
			// mask, n = roll(mask), where roll returns `r, r.sum()`.
			return foldReturnedElem(m, b, KUnknown, (*Model).Kind)
		case b.Value.Kind() == "augmented_assignment":
			return m.Kind(b.Value.Get("right"))
		}
		return m.Kind(b.Value)
	}
	if v, outer := m.freeValue(name); v != nil {
		// A closure's free variable: its value where the closure is called.
		return outer.Kind(v)
	}
	if !m.Bound(name) {
		// A module-level constant (PAGE = 16).
		if top, bs := m.moduleBinds(name); len(bs) > 0 && bs[len(bs)-1].Value != nil && !bs[len(bs)-1].Unpack {
			if k := top.Kind(bs[len(bs)-1].Value); k == KMeta {
				return k
			}
		}
	}
	return KUnknown
}

// annotationExpr is the expression of an annotation (the one child of its
// `type` node), or nil.
func annotationExpr(ann *Node) *Node {
	if ann != nil && ann.Kind() == "type" && len(ann.NamedChildren()) == 1 {
		return ann.NamedChildren()[0]
	}
	return ann
}

// annotationKind is the kind an annotation declares: int, float, bool and
// str are metadata-like host values, torch.Tensor a tensor.
func annotationKind(f *File, ann *Node) ValKind {
	if ann = annotationExpr(ann); ann == nil {
		return KUnknown
	}
	t := ann.Text(f.Src)
	switch t {
	case "int", "float", "bool", "str":
		return KMeta
	}
	if k := hostAnnotation(t); k != KUnknown {
		return k
	}
	if q := f.Qualify(Unparen(ann)); q == "torch.Tensor" {
		return KTensor
	}
	return KUnknown
}

// optionalTensor: ann is Optional[torch.Tensor] (Union[torch.Tensor, None],
// torch.Tensor | None): a tensor where it is not None (notNoneAt).
func optionalTensor(f *File, ann *Node) bool {
	if ann = annotationExpr(ann); ann == nil {
		return false
	}
	t := ann.Text(f.Src)
	inner := unwrapOptional(t)
	if inner == strings.Join(strings.Fields(t), "") {
		return false
	}
	found := false
	Walk(ann, func(c *Node) bool {
		// The `type` node wrapping the name has the same text; the
		// name under it qualifies.
		if !found && strings.Join(strings.Fields(c.Text(f.Src)), "") == inner && f.Qualify(Unparen(c)) == "torch.Tensor" {
			found = true
		}
		return !found
	})
	return found
}

// notNoneAt: use, a read of name, runs only where name is not None: in
// the body of `if name is not None:` (or of a test that is that `and`
// more), in the else of a lone `if name is None:`, in the true arm of `x
// if name is not None else y`, or after an `if name is None:` that
// returns or raises or an `assert name is not None` (a test that is that
// `and` more), in the same block or an enclosing one. A subscript of name
// (`cu[0]`) is one too: it raises on None, so wherever the expression goes
// on, name holds the tensor.
func notNoneAt(src []byte, name string, use *Node) bool {
	if p := use.Parent(); p != nil && p.Kind() == "subscript" && p.Get("value") == use {
		return true
	}
	for c, p := use, use.Parent(); p != nil; c, p = p, p.Parent() {
		if p.Is("function_definition", "lambda", "class_definition") {
			return false
		}
		switch p.Kind() {
		case "if_statement", "elif_clause":
			if c == p.Get("consequence") && noneTest(src, name, p.Get("condition"), false) {
				return true
			}
		case "else_clause":
			if q := loneIfOf(p); q != nil && noneTest(src, name, q.Get("condition"), true) {
				return true
			}
		case "conditional_expression":
			if kids := p.NamedChildren(); len(kids) == 3 && c == kids[0] && noneTest(src, name, kids[1], false) {
				return true
			}
		case "block", "module":
			for _, st := range p.NamedChildren() {
				if st.Start >= c.Start {
					break
				}
				if st.Kind() == "assert_statement" {
					if kids := st.NamedChildren(); len(kids) > 0 && noneTest(src, name, kids[0], false) {
						return true
					}
					continue
				}
				if st.Kind() != "if_statement" || !noneTest(src, name, st.Get("condition"), true) {
					continue
				}
				alone := true
				for _, k := range st.Children() {
					if k.Kind() == "elif_clause" || k.Kind() == "else_clause" {
						alone = false
					}
				}
				if last := contexts.LastStmt(st.Get("consequence")); alone && last != nil && last.Is("return_statement", "raise_statement") {
					return true
				}
			}
		}
	}
	return false
}

// noneTest: cond is `name is None` (isNone) or `name is not None`
// (contexts.NoneTest); for `is not None`, also an `and` that holds it.
func noneTest(src []byte, name string, cond *Node, isNone bool) bool {
	cond = Unparen(cond)
	if cond == nil {
		return false
	}
	if !isNone && cond.Kind() == "boolean_operator" && cond.Operator(src) == "and" {
		return noneTest(src, name, cond.Get("left"), false) || noneTest(src, name, cond.Get("right"), false)
	}
	n, is := contexts.NoneTest(cond, src)
	return n == name && is == isNone
}

// loneIfOf is the if statement whose else clause e is, when it has no
// elif (an elif's own test would narrow too); nil otherwise.
func loneIfOf(e *Node) *Node {
	q := e.Parent()
	if e.Kind() != "else_clause" || q == nil || q.Kind() != "if_statement" {
		return nil
	}
	for _, k := range q.Children() {
		if k.Kind() == "elif_clause" {
			return nil
		}
	}
	return q
}

// unwrapOptional is the X of Optional[X], Union[X, None], X | None and
// None | X (spaces removed), nested; t itself otherwise.
func unwrapOptional(t string) string {
	t = strings.Join(strings.Fields(t), "")
	for {
		u := strings.TrimPrefix(t, "typing.")
		switch {
		case strings.HasPrefix(u, "Optional[") && strings.HasSuffix(u, "]"):
			t = u[len("Optional[") : len(u)-1]
		case strings.HasPrefix(u, "Union[") && strings.HasSuffix(u, ",None]"):
			t = u[len("Union[") : len(u)-len(",None]")]
		case strings.HasSuffix(t, "|None"):
			t = strings.TrimSuffix(t, "|None")
		case strings.HasPrefix(t, "None|"):
			t = strings.TrimPrefix(t, "None|")
		default:
			return t
		}
	}
}

// hostAnnotation reads a typing annotation of plain host values: a scalar
// (int, float, bool, str) is metadata-like, a sequence of scalars
// (Sequence[int], List[int], tuple[int, ...]) host data; Optional[X],
// X | None and Union[X, None] are X (None is no tensor either). Anything
// else is unknown.
func hostAnnotation(t string) ValKind {
	t = strings.TrimPrefix(unwrapOptional(strings.TrimPrefix(strings.Join(strings.Fields(t), ""), "collections.abc.")), "typing.")
	t = strings.TrimPrefix(t, "collections.abc.")
	scalar := func(x string) bool {
		switch strings.TrimPrefix(x, "builtins.") {
		case "int", "float", "bool", "str":
			return true
		}
		return false
	}
	if scalar(t) {
		return KMeta
	}
	i := strings.IndexByte(t, '[')
	if i < 0 || !strings.HasSuffix(t, "]") {
		return KUnknown
	}
	switch strings.TrimPrefix(t[:i], "typing.") {
	case "List", "list", "Sequence", "Tuple", "tuple", "Iterable", "Collection", "MutableSequence":
	default:
		return KUnknown
	}
	inner := t[i+1 : len(t)-1]
	if strings.ContainsAny(inner, "[]|") {
		return KUnknown
	}
	for _, e := range strings.Split(inner, ",") {
		if e != "..." && !scalar(e) {
			return KUnknown
		}
	}
	return KHostData
}

// builtinOf is the name of the Python builtin callee calls (`max`, or
// `builtins.max`), or "" when it is no builtin (a local of that name
// shadows it).
func (m *Model) builtinOf(callee *Node) string {
	src := m.f.Src
	if callee != nil && callee.Kind() == "identifier" && !m.Bound(callee.Text(src)) {
		return callee.Text(src)
	}
	if q := m.f.Qualify(callee); strings.HasPrefix(q, "builtins.") {
		return strings.TrimPrefix(q, "builtins.")
	}
	return ""
}

func (m *Model) callKind(n *Node) ValKind {
	src := m.f.Src
	callee := Unparen(n.Get("function"))
	args := n.Get("arguments")
	pos := Positional(args)
	if builtin := m.builtinOf(callee); builtin != "" {
		switch builtin {
		case "int", "float", "bool", "round", "complex":
			if len(pos) == 0 {
				return KMeta
			}
			switch k := m.Kind(pos[0]); k {
			case KTensor, KHostRead:
				return KHostRead
			case KMeta:
				return KMeta
			}
			return KUnknown
		case "len", "isinstance", "hasattr", "range", "str", "type", "id", "callable", "getattr", "all", "any":
			if (builtin == "all" || builtin == "any") && len(pos) == 1 && m.Kind(pos[0]) == KTensor {
				return KHostRead // any(t) iterates a tensor on the host
			}
			if builtin == "range" || builtin == "getattr" {
				k := KMeta
				for _, a := range pos {
					k = combineKind(k, m.Kind(a))
				}
				if builtin == "getattr" {
					return KUnknown
				}
				return k
			}
			return KMeta
		case "min", "max", "abs", "sum":
			k := KMeta
			for _, a := range pos {
				ak := m.Kind(a)
				if ak == KTensor && builtin != "abs" {
					ak = KHostRead // max(t) iterates a tensor on the host
				}
				k = combineKind(k, ak)
			}
			return k
		case "list", "tuple", "sorted":
			if len(pos) == 1 {
				switch m.Kind(pos[0]) {
				case KTensor, KHostRead:
					return KHostRead
				case KMeta:
					return KMeta
				}
			}
			return KHostData
		}
	}
	q := m.f.Qualify(callee)
	switch {
	case q == "torch.equal" || q == "torch.allclose" || q == "torch.is_nonzero":
		return KHostRead
	case cpuStateGetters[q]:
		return KTensor // a CPU tensor (callDev)
	case torchMeta[q] || torchapi.DeviceModule(q) || strings.HasPrefix(q, "torch.is_") ||
		strings.HasPrefix(q, "torch.get_") || strings.HasPrefix(q, "torch.set_") || strings.HasPrefix(q, "torch.backends."):
		return KMeta
	case strings.HasPrefix(q, "triton.") || strings.HasPrefix(q, "math.") || q == "numpy.prod":
		if strings.HasPrefix(q, "triton.language") {
			return KUnknown
		}
		k := KMeta
		for _, a := range pos {
			k = combineKind(k, m.Kind(a))
		}
		if k == KTensor {
			return KHostRead
		}
		return k
	case strings.HasPrefix(q, "numpy.") || strings.HasPrefix(q, "np."):
		return KHostData
	case torchapi.HostPredicate(q):
		// torch.compiler.is_compiling(), torch.are_deterministic_algorithms_enabled(): a bool.
		return KMeta
	case torchClass(q):
		// An object of a torch class (a version, an optimizer, a
		// distribution), not a tensor: what it is, is not known here.
		return KUnknown
	case strings.HasPrefix(q, "torch.") && !strings.HasPrefix(q, "torch.nn.") && !strings.HasPrefix(q, "torch.ops.") &&
		!strings.HasPrefix(q, "torch.distributed") && !strings.HasPrefix(q, "torch.library") && !strings.HasPrefix(q, "torch._") &&
		!torchapi.NonTensorModule(q):
		return KTensor
	}
	recv, name, _ := MethodCall(n, src)
	if recv != nil {
		rk := m.Kind(recv)
		switch {
		case name == "item" || name == "tolist":
			if rk == KHostData {
				return KHostData
			}
			return KHostRead
		case name == "numpy":
			return KHostRead
		case (metaMethods[name] || torchapi.PredicateName(name)) && (rk == KTensor || rk == KUnknown):
			return KMeta
		case rk == KTensor:
			return KTensor
		case rk == KUnknown && tensorOnlyMethods[name]:
			return KTensor
		case recv != nil && strMethods[name] && (rk == KMeta || rk == KHostData || strArg(m.f, n)):
			return KHostData // line.split("."), name.strip(): Python strings
		}
	}
	// A project function: what its return statements give (host values
	// and tensors across calls).
	agree := agreement[ValKind]{unknown: KUnknown}
	m.eachReturn(n, func(r *Model, ret *Node) bool { return agree.add(r.Kind(ret)) })
	return agree.value()
}

// strArg: the method call has a string literal argument (`s.split(".")`,
// `s.replace("a", "b")`): no tensor method takes one first.
func strArg(f *File, call *Node) bool {
	pos := Positional(call.Get("arguments"))
	return len(pos) > 0 && Unparen(pos[0]).Is("string", "concatenated_string")
}

// Parameters by their callers. A parameter without a declared type is
// what its function's callers pass: where every call of the function in
// the project is a proved edge (resolved, declared or traced) whose
// argument for it (or the default it leaves) is a tensor, the parameter is
// a tensor, and where every one of them says where that tensor lives, it
// lives there (`if num_tokens > 0:` in a helper every caller passes a
// device count to is a host read). Nothing where the parameter is read
// may rule a tensor out: points-to facts that hold values and no tensor,
// or an isinstance test (`elif isinstance(src, int): int(src)` is no read
// of a tensor). The answer is worked out once a run (paramFromCallers).
// A function with no call in the
// project, a call by a guess, a splat that may supply the parameter or
// callers that disagree leave it unknown, as before; so does a public
// function's device (contexts.Public: callers outside the project may pass
// any). Calls are followed maxReturnDepth deep, as returns are.

// callerArg is one caller's argument for a parameter, in the caller's
// model.
type callerArg struct {
	m *Model
	n *Node
}

// callerArgs are what every call of the model's function passes for
// parameter name; ok false where one of them is not known.
func (m *Model) callerArgs(name string) (out []callerArg, ok bool) {
	if m.fn == nil || m.fn.Kind != index.Def || m.p == nil || m.p.Proj == nil || m.p.Proj.G == nil || m.set.depth >= maxReturnDepth {
		return nil, false
	}
	var param *index.Param
	for i := range m.fn.Params {
		if p := &m.fn.Params[i]; p.Name == name {
			param = p
		}
	}
	if param == nil || param.Kind == index.VarArgs || param.Kind == index.VarKw {
		return nil, false
	}
	g := m.p.Proj.G
	in := g.In[m.fn]
	if len(in) == 0 {
		return nil, false
	}
	for _, e := range in {
		if e.Site == nil || e.Caller == nil || e.Caller.File == nil || (e.Kind != flow.Resolved && e.Kind != flow.Annotated && e.Kind != flow.Traced) {
			return nil, false
		}
		arg, dflt, matched := contexts.ArgumentFor(g, e.Caller, e.Site, m.fn, name)
		switch {
		case !matched:
			return nil, false
		case dflt:
			if param.Default == nil {
				return nil, false
			}
			out = append(out, callerArg{m, param.Default})
		default:
			out = append(out, callerArg{m.set.of(e.Caller.File, e.Caller), arg})
		}
	}
	return out, true
}

// paramKindFromCallers is KTensor where every caller passes a tensor for
// parameter name and nothing at use (the parameter read there) rules a
// tensor out: the points-to facts there or an isinstance test. A public
// function (contexts.Public) whose project callers all pass host tensors
// stays unknown: a caller outside the project may pass a device one, and
// an unknown parameter is what it was before.
func (m *Model) paramKindFromCallers(name string, use *Node) ValKind {
	pi := m.paramFromCallers(name)
	if !pi.tensor || pi.host && contexts.Public(m.fn) || m.flowRulesOutTensor(use) || narrowedAway(m.f.Src, name, use) {
		return KUnknown
	}
	return KTensor
}

// paramDevFromCallers is where the tensors every caller passes for
// parameter name live, where they all agree; unknown for a public
// function (contexts.Public), which callers outside the project may call.
func (m *Model) paramDevFromCallers(name string) Device {
	if m.fn == nil || contexts.Public(m.fn) {
		return DevUnknown
	}
	return m.paramFromCallers(name).dev
}

// paramInfo is what a parameter's callers pass: whether every argument is
// a tensor, all of them host tensors, and the device they agree on.
type paramInfo struct {
	tensor, host bool
	dev          Device
}

type paramKey struct {
	fn   *Function
	name string
}

// paramFromCallers is what the callers of the model's function pass for
// parameter name. Every rule of every file asks it of the same
// parameters: it is worked out once a run (Project.Memo), in a model set
// of its own (its own file facts: the rules' goroutines share none), so
// the answer is the same whichever pass asks first. Within that work a
// caller's own parameters are followed in the same set, maxReturnDepth
// calls deep.
func (m *Model) paramFromCallers(name string) paramInfo {
	if m.fn == nil || m.p == nil || m.p.Proj == nil || m.p.Proj.G == nil {
		return paramInfo{}
	}
	if m.set.callers {
		return m.callersPass(name)
	}
	return m.p.Proj.Memo(paramKey{m.fn, name}, func() any {
		s := &modelSet{p: m.p, byFn: map[*Function]*Model{}, facts: NewFileFacts(), callers: true}
		return s.of(m.f, m.fn).callersPass(name)
	}).(paramInfo)
}

// callersPass works paramFromCallers out in the model's set.
func (m *Model) callersPass(name string) paramInfo {
	args, ok := m.callerArgs(name)
	if !ok {
		return paramInfo{}
	}
	m.set.depth++
	defer func() { m.set.depth-- }()
	out := paramInfo{tensor: true, host: true}
	for i, a := range args {
		if a.m.Kind(a.n) != KTensor {
			return paramInfo{}
		}
		d := a.m.Dev(a.n)
		out.host = out.host && d.Host()
		switch {
		case i == 0:
			out.dev = d
		case d != out.dev:
			out.dev = DevUnknown
		}
	}
	return out
}

// flowRulesOutTensor: the points-to facts of expression n hold values,
// and none is a tensor (a list, a project object).
func (m *Model) flowRulesOutTensor(n *Node) bool {
	vs := m.p.Proj.G.Values(n)
	for _, v := range vs {
		if v.Kind == flow.VTensor || v.Kind == flow.VExt || v.Kind == flow.VExtInst {
			return false
		}
	}
	return len(vs) > 0
}

// narrowedAway: use, a read of name, is in a branch an isinstance test
// of name keeps tensors out of: the body of `if isinstance(name, (int,
// float)):` or the else of `if isinstance(name, torch.Tensor):`.
func narrowedAway(src []byte, name string, use *Node) bool {
	for c, p := use, use.Parent(); p != nil; c, p = p, p.Parent() {
		if p.Is("function_definition", "lambda", "class_definition") {
			return false
		}
		var cond *Node
		inBody := false
		switch p.Kind() {
		case "if_statement", "elif_clause":
			cond, inBody = p.Get("condition"), c == p.Get("consequence")
		case "else_clause":
			if q := loneIfOf(p); q != nil {
				cond = q.Get("condition")
			}
		}
		tensor, ok := isinstanceOf(src, name, Unparen(cond))
		if !ok {
			continue
		}
		if inBody && !tensor || p.Kind() == "else_clause" && tensor {
			return true
		}
	}
	return false
}

// isinstanceOf reads `isinstance(name, T)`: ok, and whether T names a
// tensor type.
func isinstanceOf(src []byte, name string, cond *Node) (tensor, ok bool) {
	if cond == nil || cond.Kind() != "call" {
		return false, false
	}
	fn := Unparen(cond.Get("function"))
	args := Positional(cond.Get("arguments"))
	if fn == nil || fn.Text(src) != "isinstance" || len(args) != 2 || !isName(Unparen(args[0]), name, src) {
		return false, false
	}
	return strings.Contains(args[1].Text(src), "Tensor"), true
}

// maxReturnDepth bounds how deep the model follows calls into the
// functions they resolve to.
const maxReturnDepth = 3

// eachReturn calls fn with the model of each project function the call
// resolves to (by a resolved, annotated or traced edge: not a guess) and
// each expression it returns, until fn returns false. Nothing when a
// callee has a bare return, yields, or the depth is spent.
func (m *Model) eachReturn(call *Node, fn func(*Model, *Node) bool) {
	if m.p == nil || m.p.Proj == nil || m.p.Proj.G == nil || m.set.depth >= maxReturnDepth {
		return
	}
	edges := m.p.Proj.G.Callees(call)
	if len(edges) == 0 {
		return
	}
	type ret struct {
		m *Model
		n *Node
	}
	var rets []ret
	for _, e := range edges {
		if e.Callee == nil || e.Callee.File == nil || (e.Kind != flow.Resolved && e.Kind != flow.Annotated && e.Kind != flow.Traced) {
			return
		}
		cm := m.set.of(e.Callee.File, e.Callee)
		ok := true
		n0 := len(rets)
		walkCode(e.Callee.BodyStmts(), func(x *Node) bool {
			switch x.Kind() {
			case "yield":
				ok = false
			case "return_statement":
				v := x.NamedChildren()
				if len(v) == 0 {
					ok = false
				} else {
					rets = append(rets, ret{cm, v[0]})
				}
			}
			return ok
		})
		if !ok || len(rets) == n0 {
			return
		}
	}
	m.set.depth++
	defer func() { m.set.depth-- }()
	for _, r := range rets {
		if !fn(r.m, r.n) {
			return
		}
	}
}

// eachReturnedElem calls fn with the model and the expression of element
// i of what each project function the call resolves to returns, where
// every return statement gives a tuple or list literal of arity elements
// (`return r, r.sum()`), or a call that does (followed as eachReturn
// follows calls). Where a return gives anything else, fn gets a nil
// expression (the element is unknown). Nothing for a starred target
// (arity 0), an index out of range or a call to no project function.
func (m *Model) eachReturnedElem(call *Node, i, arity int, fn func(*Model, *Node) bool) {
	call = Unparen(call)
	if call == nil || call.Kind() != "call" || arity < 2 || i < 0 || i >= arity {
		return
	}
	m.eachReturn(call, func(r *Model, ret *Node) bool {
		ret = Unparen(ret)
		if ret.Is("expression_list", "tuple", "list") {
			elems := ret.NamedChildren()
			for _, e := range elems {
				if e.Is("list_splat", "parenthesized_list_splat") {
					return fn(r, nil)
				}
			}
			if len(elems) != arity {
				return fn(r, nil)
			}
			return fn(r, elems[i])
		}
		if ret.Kind() == "call" {
			more, got := true, false
			r.eachReturnedElem(ret, i, arity, func(rr *Model, e *Node) bool {
				got = true
				more = fn(rr, e)
				return more
			})
			if !got {
				return fn(r, nil)
			}
			return more
		}
		return fn(r, nil)
	})
}

// constTensor reports whether n is a CPU tensor this function builds from
// literals (torch.tensor([2, 3, 5]), torch.arange(8)), or a value computed
// from one: reading it on the host reads a constant of the program.
func (m *Model) constTensor(n *Node) bool {
	m.init()
	n = Unparen(n)
	if n == nil || m.busy[n] {
		return false
	}
	m.busy[n] = true
	defer delete(m.busy, n)
	src := m.f.Src
	switch n.Kind() {
	case "identifier":
		b := m.BindingOf(n.Text(src), n)
		return b != nil && b.Value != nil && !b.IsParam && !b.Unpack && b.Value.Kind() != "augmented_assignment" &&
			!m.Mutated(n.Text(src)) && m.constTensor(b.Value)
	case "subscript":
		return m.constTensor(n.Get("value"))
	case "attribute":
		// st.cols: every binding the file makes of .cols is a constant
		// tensor, and nothing in the file updates one in place.
		attr := n.Get("attribute").Text(src)
		vals := m.set.attrsOf(m.f, attr)
		if len(vals) == 0 || m.set.attrMutated(m.f, attr) {
			return false
		}
		for _, v := range vals {
			if !m.set.of(v.fn.File, v.fn).constTensor(v.value) {
				return false
			}
		}
		return true
	case "call":
		q := m.f.Qualify(n.Get("function"))
		args := n.Get("arguments")
		if hostBuilders[q] || q == "torch.arange" || q == "torch.zeros" || q == "torch.ones" || q == "torch.full" || q == "torch.eye" {
			if !m.FactoryDevice(n).Host() {
				return false
			}
			for _, a := range args.NamedChildren() {
				if a.Kind() == "keyword_argument" {
					a = a.Get("value")
				}
				if a = Unparen(a); a.Is("list", "tuple") {
					for _, e := range a.NamedChildren() {
						if m.Kind(e) != KMeta {
							return false
						}
					}
					continue
				}
				if m.Kind(a) != KMeta && !IsDtype(m.f, a) {
					return false
				}
			}
			return true
		}
		if recv, name, _ := MethodCall(n, src); recv != nil && !strings.HasSuffix(name, "_") {
			return m.constTensor(recv)
		}
	}
	return false
}

// attrMutated reports whether the file updates an attribute called attr in
// place (x.attr.copy_(...), x.attr[i] = ..., x.attr += ...).
func (s *modelSet) attrMutated(f *File, attr string) bool {
	isAttr := func(n *Node) bool {
		n = Unparen(n)
		return n != nil && n.Kind() == "attribute" && n.Get("attribute").Text(f.Src) == attr
	}
	found := false
	Walk(f.Tree.Root, func(x *Node) bool {
		if found {
			return false
		}
		switch x.Kind() {
		case "call":
			if recv, meth, _ := MethodCall(x, f.Src); recv != nil && strings.HasSuffix(meth, "_") && isAttr(recv) {
				found = true
			}
		case "assignment", "augmented_assignment":
			l := x.Get("left")
			if l != nil && (l.Kind() == "subscript" && isAttr(l.Get("value")) || x.Kind() == "augmented_assignment" && isAttr(l)) {
				found = true
			}
		}
		return !found
	})
	return found
}

// Mutated reports whether the function updates local name in place
// (name.copy_(...), name[i] = ..., name += ...).
func (m *Model) Mutated(name string) bool {
	src := m.f.Src
	found := false
	walkCode(m.fn.BodyStmts(), func(x *Node) bool {
		if found {
			return false
		}
		switch x.Kind() {
		case "call":
			if recv, meth, _ := MethodCall(x, src); recv != nil && strings.HasSuffix(meth, "_") && isName(Unparen(recv), name, src) {
				found = true
			}
		case "assignment", "augmented_assignment":
			if l := x.Get("left"); l != nil && l.Kind() == "subscript" && isName(Unparen(l.Get("value")), name, src) {
				found = true
			}
		}
		return !found
	})
	return found
}

// declaredAttr is the kind the classes of obj declare for its attribute
// attr (`adapter_indices: torch.Tensor` in a dataclass's body, or `self.n:
// int = ...` in a method): where every value the points-to analysis gives
// obj is an instance of a project class whose MRO declares attr, and
// every such declaration says one kind (annotationKind), that kind; else
// unknown. A declared type is evidence as a parameter's annotation is. A
// tensor among the values is passed over where attr is no tensor
// attribute (a tensor has no `adapter_indices`).
func (m *Model) declaredAttr(obj *Node, attr string) ValKind {
	if m.p == nil || m.p.Proj == nil || m.p.Proj.G == nil || m.p.Proj.G.H == nil {
		return KUnknown
	}
	if !declaredNames(m.p.Proj)[attr] {
		return KUnknown // no class declares it: no points-to query
	}
	vals := m.p.Proj.G.Values(obj)
	if len(vals) == 0 {
		return KUnknown
	}
	kind := KUnknown
	n := 0
	for _, v := range vals {
		if v.Kind == flow.VTensor && !tensorAttrs[attr] && !metaAttrs[attr] {
			// A tensor has no such attribute: a value the analysis mixed
			// in (the points-to sets are a superset) says nothing here.
			continue
		}
		if v.Kind != flow.VInst || v.Cls == nil {
			return KUnknown
		}
		k := KUnknown
		for _, c := range m.p.Proj.G.H.MRO(v.Cls) {
			anns := c.AttrTypes[attr]
			if len(anns) == 0 {
				if c.Defines[attr] {
					break // bound in the class body without a declaration
				}
				continue
			}
			k = annotationKind(c.File, anns[0])
			for _, ann := range anns[1:] {
				if annotationKind(c.File, ann) != k {
					return KUnknown
				}
			}
			break
		}
		if k == KUnknown || n > 0 && k != kind {
			return KUnknown
		}
		kind = k
		n++
	}
	return kind
}

type declaredNamesKey struct{}

// declaredNames are the attribute names some project class declares
// (index.Class.AttrTypes), made once a run.
func declaredNames(p *analysis.Project) map[string]bool {
	return p.Memo(declaredNamesKey{}, func() any {
		out := map[string]bool{}
		for _, f := range p.Files {
			for _, c := range f.Classes {
				for name := range c.AttrTypes {
					out[name] = true
				}
			}
		}
		return out
	}).(map[string]bool)
}
