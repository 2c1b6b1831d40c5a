package tensors

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// This file classifies Python expressions for the rules: which make tensor
// temporaries, which are host values, which are torch dtypes.

// IsDtype reports whether n denotes a torch dtype (`torch.int32`, `torch.bfloat16`).
func IsDtype(f *File, n *Node) bool {
	q := f.Qualify(Unparen(n))
	if !strings.HasPrefix(q, "torch.") {
		return false
	}
	switch strings.TrimPrefix(q, "torch.") {
	case "int8", "int16", "int32", "int64", "int", "long", "short", "uint8", "uint16", "uint32", "uint64",
		"float16", "float32", "float64", "half", "float", "double", "bfloat16", "bool",
		"float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "complex64", "complex128":
		return true
	}
	return false
}

// Temp describes an expression that makes a tensor temporary by conversion
// or copy.
type Temp struct {
	Expr   *Node  // the whole expression
	Source *Node  // what is converted or copied, with chained conversions stripped
	Dtype  string // the target dtype expression text, "" to keep the source's
	Op     string // the outermost operation: "to", "int", "contiguous", "clone", "reshape"
	// Reshape is a trailing copying reshape/flatten kept after the buffer:
	// `x[:, 0].reshape(-1)` -> persistent_buffer(..., x[:, 0]).reshape(-1).
	Reshape string
	// Other are the conversion's arguments besides its dtype
	// (`device=dev`, `copy=True`, `memory_format=...`; non_blocking aside):
	// a fix that drops them changes what the conversion does.
	Other []string
}

// MethodCall splits `recv.name(args)`.
func MethodCall(n *Node, src []byte) (recv *Node, name string, args *Node) {
	n = Unparen(n)
	if n == nil || n.Kind() != "call" {
		return nil, "", nil
	}
	fn := Unparen(n.Get("function"))
	if fn == nil || fn.Kind() != "attribute" {
		return nil, "", nil
	}
	return fn.Get("object"), fn.Get("attribute").Text(src), n.Get("arguments")
}

// Positional returns the positional arguments of an argument_list.
func Positional(args *Node) []*Node {
	var out []*Node
	for _, a := range args.NamedChildren() {
		if a.Kind() != "keyword_argument" && a.Kind() != "list_splat" && a.Kind() != "dictionary_splat" {
			out = append(out, a)
		}
	}
	return out
}

// Keyword returns the value of keyword argument name, or nil.
func Keyword(args *Node, name string, src []byte) *Node {
	for _, a := range args.NamedChildren() {
		if a.Kind() == "keyword_argument" && a.Get("name").Text(src) == name {
			return a.Get("value")
		}
	}
	return nil
}

// isNonContiguousView reports whether n is a view that is likely not
// contiguous: a subscript that indexes past the first dimension, a
// transpose, a permute.
func isNonContiguousView(n *Node, src []byte) bool {
	n = Unparen(n)
	if n == nil {
		return false
	}
	if n.Kind() == "subscript" {
		subs := n.All("subscript")
		return len(subs) > 1
	}
	if _, name, _ := MethodCall(n, src); name == "t" || name == "transpose" || name == "permute" || name == "mT" {
		return true
	}
	if n.Kind() == "attribute" && (n.Get("attribute").Text(src) == "T" || n.Get("attribute").Text(src) == "mT") {
		return true
	}
	return false
}

// TempOf classifies n as a conversion or copy temporary, or returns nil.
func TempOf(f *File, n *Node) *Temp {
	src := f.Src
	recv, name, args := MethodCall(n, src)
	if recv == nil {
		return nil
	}
	t := &Temp{Expr: Unparen(n), Op: name}
	switch name {
	case "to", "type":
		pos := Positional(args)
		dt := Keyword(args, "dtype", src)
		if dt == nil && len(pos) >= 1 && IsDtype(f, pos[0]) {
			dt = pos[0]
		}
		if dt == nil || !IsDtype(f, dt) {
			return nil // .to(device) is not a conversion of device data
		}
		for _, a := range pos {
			if a != dt && !IsDtype(f, a) {
				return nil // .to(device, dtype): also moves; leave it
			}
		}
		if d := Unparen(dt); d.Kind() == "attribute" && d.Get("attribute").Text(src) == "dtype" &&
			strings.Join(strings.Fields(Unparen(d.Get("object")).Text(src)), "") == strings.Join(strings.Fields(Unparen(recv).Text(src)), "") {
			return nil // x.to(x.dtype) returns x itself: no copy
		}
		for _, a := range args.NamedChildren() {
			if a.Kind() == "keyword_argument" && a.Get("name").Text(src) != "dtype" && a.Get("name").Text(src) != "non_blocking" ||
				a.Kind() == "list_splat" || a.Kind() == "dictionary_splat" {
				t.Other = append(t.Other, a.Text(src))
			}
		}
		t.Dtype = dt.Text(src)
	case "contiguous", "clone":
		if len(args.NamedChildren()) > 0 && name == "contiguous" {
			return nil
		}
		if name == "clone" && len(args.NamedChildren()) > 0 {
			return nil // clone(memory_format=...) keeps its own layout
		}
	case "reshape", "flatten":
		if !isNonContiguousView(recv, src) {
			return nil // a reshape of a contiguous tensor is a view
		}
		t.Reshape = "." + name + args.Text(src)
	default:
		dt, ok := dtypeMethods[name]
		if !ok || len(args.NamedChildren()) > 0 {
			return nil
		}
		t.Dtype = dt
	}
	// Strip chained conversions: x[:, 0].contiguous().to(torch.int32) copies
	// from x[:, 0] straight into an int32 buffer.
	t.Source = recv
	for {
		inner := TempOf(f, t.Source)
		if inner == nil || inner.Reshape != "" {
			break
		}
		if t.Dtype == "" {
			t.Dtype = inner.Dtype
		}
		t.Other = append(t.Other, inner.Other...)
		t.Source = inner.Source
	}
	return t
}

// Assignment is a simple `name = value` statement.
type Assignment struct {
	Stmt   *Node // the expression_statement
	Target *Node
	Name   string
	Value  *Node
}

// AssignmentsIn lists `name = value` assignments in source order in stmts
// (nested compound statements included, nested defs not).
func AssignmentsIn(stmts []*Node, src []byte) []Assignment {
	var out []Assignment
	walkCode(stmts, func(n *Node) bool {
		if n.Kind() == "assignment" {
			l, r := n.Get("left"), n.Get("right")
			if l != nil && r != nil && l.Kind() == "identifier" {
				out = append(out, Assignment{Stmt: n.Parent(), Target: l, Name: l.Text(src), Value: r})
			}
			// lo, hi = int(a.min()), int(a.max()): each name is bound to
			// its own element.
			for _, t := range PairedTargets(l, r) {
				out = append(out, Assignment{Stmt: n.Parent(), Target: t[0], Name: t[0].Text(src), Value: t[1]})
			}
		}
		return true
	})
	return out
}

// PairedTargets pairs the names of a tuple target with the elements of a
// tuple value of the same length (`a, b = e1, e2`, parentheses or
// brackets on either side): [name, element] in order. It returns nil when
// either side is no such tuple, holds a starred element, or the lengths
// differ, and leaves out the targets that are not plain names.
func PairedTargets(left, right *Node) [][2]*Node {
	left, right = Unparen(left), Unparen(right)
	if left == nil || right == nil || !left.Is("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list") ||
		!right.Is("expression_list", "tuple", "list") {
		return nil
	}
	ts, vs := left.NamedChildren(), right.NamedChildren()
	if len(ts) != len(vs) {
		return nil
	}
	var out [][2]*Node
	for i, t := range ts {
		if t.Is("list_splat_pattern", "list_splat") || vs[i].Is("list_splat", "dictionary_splat") {
			return nil
		}
		if t.Kind() == "identifier" {
			out = append(out, [2]*Node{t, vs[i]})
		}
	}
	return out
}

// HostValue says why n is a Python value read from tensor data or a CPU
// mirror (`x.item()`, `int(t.max())`, `x.tolist()`, `seq_lens_cpu...`), or
// returns "" when it is not one.
//
// With a model, reads of a constant tensor (one this function builds on the
// CPU from literals, such as `torch.tensor([2, 3, 5])`) are constants of
// the program, not host values.
func HostValue(f *File, n *Node, hostNames HostBindings, m *Model) string {
	src := f.Src
	n = Unparen(n)
	if n == nil {
		return ""
	}
	why := ""
	Walk(n, func(x *Node) bool {
		if why != "" || x.Kind() == "lambda" {
			return false
		}
		if x.Kind() == "identifier" && x.Parent() != nil && x.Parent().Kind() == "keyword_argument" && x.Parent().Get("name") == x {
			return false // f(max_len=...): the keyword's name, not a read of a local max_len
		}
		if m != nil && x != n && x.Is("identifier", "attribute", "call", "subscript") && m.Kind(x) == KMeta && !hostNames.reaches(x, src) {
			return false // a shape, a config number, a constant: fixed for the graph
		}
		switch x.Kind() {
		case "call":
			recv, name, _ := MethodCall(x, src)
			if recv != nil && hostReads[name] {
				if m != nil && m.constTensor(recv) {
					return false
				}
				if m != nil && m.hostBuilt(recv) {
					return true // torch.tensor(v).item() is v: a host value only if v is one
				}
				if m != nil && m.Dev(recv).Host() {
					// A CPU tensor's data: no sync, and the value changes
					// between replays only if something writes the tensor
					// (a per-step copy of the batch) — not one filled once
					// (a configuration).
					why = "`." + name + "()`" + CPUReadWhy
					return false
				}
				why = "`." + name + "()` reads tensor data on the host"
				return false
			}
			if m != nil {
				if w := m.returnedHost(x); w != "" {
					why = "`" + short(Unparen(x.Get("function")).Text(src)) + "(...)` returns a host value: " + w
					return false
				}
			}
			fnode := Unparen(x.Get("function"))
			if fnode != nil && fnode.Kind() == "identifier" {
				switch fnode.Text(src) {
				case "int", "float", "bool":
					args := Positional(x.Get("arguments"))
					if len(args) == 1 && tensorReduce(args[0], src) {
						if m != nil {
							r := m.reduced(args[0])
							if m.constTensor(r) || !m.mayBeTensor(args[0]) {
								return false
							}
							if m.hostBuilt(r) {
								return true // int(torch.prod(torch.tensor(shape))) is the product of shape: a host value only if shape holds one
							}
							if Unparen(args[0]).Kind() == "subscript" && m.Kind(r) != KTensor {
								// int(padding[0]) of a parameter nothing
								// types: a tensor's data only if it is one
								// (a list or a tuple is subscripted so too;
								// `.max()` and `.sum()` are a tensor's).
								why = "`" + short(r.Text(src)) + "`" + UnknownReadWhy
								return false
							}
						}
						why = "`" + fnode.Text(src) + "(...)` of a tensor reads its data on the host"
						if m != nil && m.Dev(m.reduced(args[0])).Host() {
							// No sync: a CPU tensor's data (DeviceRead).
							why = "`" + fnode.Text(src) + "(...)` of a CPU tensor reads its data on the host"
						}
						return false
					}
				}
			}
		case "subscript":
			if m != nil {
				v := Unparen(x.Get("value"))
				if w := m.memoHost(v); w != "" {
					why = "`" + short(x.Text(src)) + "` is a memo of " + w
					return false
				}
				switch m.Kind(v) {
				case KTensor:
					// x[:n] of a tensor is no host value, whatever bounds
					// it: a host read in its index is a slice bound (CG102
					// reports it there), not the value's (derivedHost).
					why = HostValue(f, v, hostNames, m)
					return false
				case KUnknown:
					// Of what the model does not know, x[n] is host data
					// only if x is (a list of sizes, not a tensor): an
					// assumption.
					if why = HostValue(f, v, hostNames, m); why != "" {
						return false
					}
					for _, i := range x.All("subscript") {
						if HostValue(f, i, hostNames, m) != "" {
							why = "`" + short(x.Text(src)) + "`" + IndexedWhy
							return false
						}
					}
					return false
				}
			}
		case "identifier":
			if par := x.Parent(); par != nil && par.Kind() == "attribute" && par.Get("attribute") == x {
				return false // obj.name: the attribute case decides
			}
			name := x.Text(src)
			if hostNames.at(name, x, src) {
				why = "`" + name + "`" + hostLocalWhy
				return false
			}
			if CpuMirror(name) && (m == nil || m.Kind(x) != KMeta && m.Kind(x) != KHostData && !m.constTensor(x)) {
				why = "`" + name + "`" + MirrorWhy
				return false
			}
		case "attribute":
			a := x.Get("attribute").Text(src)
			if CpuMirror(a) && (m == nil || !m.constTensor(x)) { // a mirror built once from constants never changes
				why = "`" + x.Text(src) + "`" + MirrorWhy
				return false
			}
		}
		return true
	})
	return why
}

// hostBindingsOf are the assignments of fn that bind a local to a host
// value (as CG102 computes them for the function it checks).
func hostBindingsOf(f *File, fn *Function, m *Model) HostBindings {
	h, _ := HostAssignments(f, bodyStmts(fn), m)
	return h
}

// HostAssignment is an assignment that binds a local to a host value, and
// why (HostValue's reason).
type HostAssignment struct {
	Assignment
	Why string
}

// HostAssignments are the assignments in stmts that bind a local to a host
// value: those whose value is one by itself (`n = int(lens_cpu.max())`),
// then, until none is added, those whose value reads a local that such a
// binding reaches (`m = n * 2`, `start = end` where `end` took `.item()`).
// Without the second step a host value was followed one assignment deep.
func HostAssignments(f *File, stmts []*Node, m *Model) (HostBindings, []HostAssignment) {
	h := HostBindings{}
	var out []HostAssignment
	as := AssignmentsIn(stmts, f.Src)
	done := make([]bool, len(as))
	for pass := 0; ; pass++ {
		added := false
		var names HostBindings // none in the first pass: a value that is one by itself
		if pass > 0 {
			names = h
		}
		var now []int
		for i, a := range as {
			if done[i] {
				continue
			}
			if pass > 0 && (m == nil || !m.derivedHost(a.Value, names)) {
				continue
			}
			if why := HostValue(f, a.Value, names, m); why != "" {
				now = append(now, i)
				out = append(out, HostAssignment{a, why})
			}
		}
		// Added after the pass, so that a pass reads the bindings of the one before.
		for _, i := range now {
			done[i], added = true, true
			h[as[i].Name] = append(h[as[i].Name], as[i].Stmt)
		}
		if !added {
			return h, out
		}
	}
}

// derivedHost says whether value is computed from a host-bound local by
// host arithmetic alone (`n * 2`, `max(n + 1, k)`, `triton.cdiv(n, B)`,
// `sizes[i]`, `(n, 4)`), so that it is itself a host value that changes
// when the local does. A tensor made from the local (`torch.empty(n)`,
// `(x * s).to(torch.int8)`), an object a project function builds from it,
// or an attribute of one is no host value, whatever it was made from: its
// data lives on the device, and a read of its shape is metadata fixed for
// the graph.
func (m *Model) derivedHost(value *Node, h HostBindings) bool {
	if m.Kind(value) == KTensor {
		return false
	}
	src := m.f.Src
	var reach func(n *Node) bool
	reach = func(n *Node) bool {
		n = Unparen(n)
		if n == nil {
			return false
		}
		switch n.Kind() {
		case "identifier":
			return h.at(n.Text(src), n, src)
		case "keyword_argument":
			return reach(n.Get("value"))
		case "subscript":
			// sizes[i] of a host list is a host value; x[:n] of a tensor
			// (or of what the model does not know) is no host value,
			// whatever bounds it.
			v := n.Get("value")
			if reach(v) {
				return true
			}
			if k := m.Kind(v); k == KMeta || k == KHostData {
				for _, i := range n.All("subscript") {
					if reach(i) {
						return true
					}
				}
			}
		case "binary_operator", "unary_operator", "boolean_operator", "comparison_operator", "not_operator",
			"conditional_expression", "tuple", "list", "expression_list":
			for _, c := range n.NamedChildren() {
				if reach(c) {
					return true
				}
			}
		case "call":
			args := n.Get("arguments")
			if args == nil || !m.hostArith(n) {
				return false
			}
			for _, a := range args.NamedChildren() {
				if reach(a) {
					return true
				}
			}
		}
		return false
	}
	return reach(value)
}

// hostArith says whether call computes a host number (or a host
// container) from its arguments alone: a builtin of numbers and
// containers (int, max, len, divmod), math.*, numpy.prod, or one of
// Triton's host helpers (triton.cdiv, triton.next_power_of_2), as
// callKind classifies them.
func (m *Model) hostArith(call *Node) bool {
	callee := Unparen(call.Get("function"))
	switch m.builtinOf(callee) {
	case "int", "float", "bool", "round", "min", "max", "abs", "sum", "len", "divmod", "pow", "list", "tuple", "sorted":
		return true
	case "":
	default:
		return false
	}
	q := m.f.Qualify(callee)
	return strings.HasPrefix(q, "math.") || q == "numpy.prod" ||
		strings.HasPrefix(q, "triton.") && !strings.HasPrefix(q, "triton.language")
}

// returnedHost says why the project function a call resolves to returns a
// host value read from tensor data (`return int(lens_cpu.max())`, or a
// local bound to one), or "" when no return of it does.
func (m *Model) returnedHost(call *Node) string {
	why := ""
	m.eachReturn(call, func(r *Model, ret *Node) bool {
		if r.fn == nil || r.Kind(ret) == KTensor {
			return true // a tensor is no host value, whatever it was made from
		}
		if r.hostNames == nil {
			r.hostNames = hostBindingsOf(r.f, r.fn, r)
		}
		if w := HostValue(r.f, ret, r.hostNames, r); w != "" {
			why = w
			return false
		}
		return true
	})
	return why
}

// memoHost says what host read a memo holds: d is a module global or an
// attribute (`_LEN_CACHE`, `self._memo`) that the file fills by subscript
// with a value read from tensor data (`_LEN_CACHE[t.data_ptr()] =
// int(t.max())`). Reading the memo under capture returns what an earlier
// (warm-up) call read: the value is baked like the read itself. "" when
// it is not one.
func (m *Model) memoHost(d *Node) string {
	if d == nil || !d.Is("identifier", "attribute") {
		return ""
	}
	key := strings.Join(strings.Fields(d.Text(m.f.Src)), "")
	if d.Kind() == "identifier" && m.Bound(key) {
		return "" // a local dict: made anew each call
	}
	return m.set.facts.hostMemos(m.f, m.set)[key]
}

// mayBeTensor: n (the argument of int(), float(), bool()) may read tensor
// data: the model does not know it for metadata, host data or a host read,
// and it is no lookup by string key (`config["text_len"]`: a mapping) nor a
// reduction over host values (`math.prod(shape)`).
func (m *Model) mayBeTensor(n *Node) bool {
	n = Unparen(n)
	switch m.Kind(n) {
	case KMeta, KHostData:
		return false
	case KTensor:
		return true
	}
	if n.Kind() == "subscript" {
		for _, i := range n.All("subscript") {
			if Unparen(i).Is("string", "concatenated_string") {
				return false
			}
		}
	}
	if recv, _, _ := MethodCall(n, m.f.Src); recv != nil {
		if q := m.f.Qualify(recv); q == "math" || q == "numpy" || q == "np" || q == "operator" || q == "statistics" {
			return false
		}
	}
	return true
}

// hostBuilt: n is a tensor this code builds on the host from Python values
// (`torch.tensor(1.0 / s)`, `torch.tensor(a) / torch.tensor(b)`): reading it
// back reads those values, not device data.
func (m *Model) hostBuilt(n *Node) bool {
	n = Unparen(n)
	if n == nil {
		return false
	}
	switch n.Kind() {
	case "binary_operator":
		return m.hostBuilt(n.Get("left")) && (m.hostBuilt(n.Get("right")) || m.Kind(n.Get("right")) == KMeta) ||
			m.Kind(n.Get("left")) == KMeta && m.hostBuilt(n.Get("right"))
	case "call":
		q := m.f.Qualify(n.Get("function"))
		if q == "torch.tensor" || q == "torch.as_tensor" || q == "torch.scalar_tensor" {
			if !m.FactoryDevice(n).Host() {
				return false
			}
			for _, a := range Positional(n.Get("arguments")) {
				if k := m.Kind(a); k == KTensor || k == KHostRead {
					return false
				}
			}
			return true
		}
		if TorchOpFresh(q) {
			// torch.prod(torch.tensor(shape)): an out-of-place op on
			// host-built tensors (and host numbers) builds one too.
			built := false
			for _, a := range Positional(n.Get("arguments")) {
				if m.hostBuilt(a) {
					built = true
				} else if k := m.Kind(a); k != KMeta && k != KHostData {
					return false
				}
			}
			if d := Keyword(n.Get("arguments"), "device", m.f.Src); d != nil && !m.devArg(d).Host() {
				return false
			}
			return built
		}
		if recv, name, _ := MethodCall(n, m.f.Src); recv != nil && !strings.HasSuffix(name, "_") && name != "to" && name != "cuda" {
			return m.hostBuilt(recv)
		}
	}
	return false
}

// reduced is the tensor a tensorReduce expression reads: t of t.max(),
// t[0] or torch.max(t) (the function form: its first argument, not the
// module `torch`).
func (m *Model) reduced(n *Node) *Node {
	n = Unparen(n)
	if n.Kind() == "subscript" {
		return n.Get("value")
	}
	if q := m.f.Qualify(n.Get("function")); strings.HasPrefix(q, "torch.") && strings.Count(q, ".") == 1 {
		if args := Positional(n.Get("arguments")); len(args) > 0 {
			return args[0]
		}
	}
	if recv, _, _ := MethodCall(n, m.f.Src); recv != nil {
		return recv
	}
	return n
}

// tensorReduce: `t.max()`, `t.sum()`, `t[0]`, `torch.max(t)` and the like.
func tensorReduce(n *Node, src []byte) bool {
	n = Unparen(n)
	if n.Kind() == "subscript" {
		v := Unparen(n.Get("value"))
		if v != nil && v.Kind() == "attribute" && v.Get("attribute").Text(src) == "shape" {
			return false // shapes are fixed per graph
		}
		if _, name, _ := MethodCall(v, src); name == "size" {
			return false
		}
		return true
	}
	if _, name, _ := MethodCall(n, src); name != "" {
		switch name {
		case "max", "min", "sum", "amax", "amin", "prod", "mean", "argmax", "any", "all":
			return true // x.max() and torch.max(x) alike: torch is the receiver
		}
	}
	return false
}

// TorchOpFresh reports whether qualified name q is an out-of-place torch
// operation of torchapi.FreshOps (the keyword arguments aside: `out=` is a
// write, which the fix model checks on its own).
func TorchOpFresh(q string) bool {
	for _, ns := range []string{"torch.ops.aten.", "torch.nn.functional.", "torch."} {
		if rest, ok := strings.CutPrefix(q, ns); ok {
			op, overload, _ := strings.Cut(rest, ".")
			return torchapi.FreshOps[op] && (ns == "torch.ops.aten." || overload == "")
		}
	}
	return false
}

// MirrorWhy ends the reason HostValue gives for a value it takes for host
// data by its name alone (CpuMirror): a guess, not a fact of the value
// model.
const MirrorWhy = " is a CPU mirror"

// CPUReadWhy ends the reason HostValue gives for a value read from a
// tensor the value model proves is on the host: whether it changes between
// replays depends on writes the model does not follow.
const CPUReadWhy = " reads a host tensor's data"

// UnknownReadWhy ends the reason HostValue gives for `int()`, `float()` or
// `bool()` of a value the model cannot tell from a Python number (an
// untyped parameter, its element): it reads tensor data only if the value
// is a tensor, an assumption.
const UnknownReadWhy = " is read with int(), float() or bool(), which reads tensor data if it is a tensor"

// IndexedWhy ends the reason HostValue gives for `x[n]`, n a host value,
// of an x the model cannot tell from a tensor: host data only if x is a
// host container, an assumption.
const IndexedWhy = " is indexed by a host value, which makes it one if what it indexes is a list or a mapping, not a tensor"

// hostLocalWhy ends the reason HostValue gives for a local bound to a host
// value earlier in the function.
const hostLocalWhy = " holds a host value read at capture time"

// deviceReadWhys end the reasons HostValue gives for a value read from a
// tensor the model does not know to be on the host: a sync in captured code.
var deviceReadWhys = []string{"()` reads tensor data on the host", "(...)` of a tensor reads its data on the host"}

// DeviceRead says whether a reason HostValue gave is a read of a tensor's
// data that is not known to be on the host (`.item()`, `.tolist()`,
// `int(t)`): in captured code, a sync.
func DeviceRead(why string) bool {
	for _, w := range deviceReadWhys {
		if strings.HasSuffix(why, w) {
			return true
		}
	}
	return false
}

// HostLocal is the local a reason HostValue gave names (a local bound to a
// host value), if it is one.
func HostLocal(why string) (string, bool) {
	if !strings.HasPrefix(why, "`") || !strings.HasSuffix(why, "`"+hostLocalWhy) {
		return "", false
	}
	return strings.TrimSuffix(strings.TrimPrefix(why, "`"), "`"+hostLocalWhy), true
}

// Assumed says whether a reason HostValue gave rests on an assumption (a
// name, a host tensor's contents), and what the assumption is.
func Assumed(why string) (string, bool) {
	switch {
	case strings.HasSuffix(why, MirrorWhy):
		return "assumes " + strings.TrimSuffix(why, MirrorWhy) + ", named as a CPU mirror, changes between replays", true
	case strings.HasSuffix(why, UnknownReadWhy):
		return "assumes " + strings.TrimSuffix(why, UnknownReadWhy) + " is a tensor: nothing in the code says what it holds", true
	case strings.HasSuffix(why, IndexedWhy):
		return "assumes " + strings.TrimSuffix(why, IndexedWhy) + " is host data: nothing in the code says whether what it indexes is a tensor", true
	case strings.HasSuffix(why, CPUReadWhy):
		return "assumes the host tensor " + strings.TrimSuffix(why, CPUReadWhy) + " reads is written between replays (a tensor filled once, a configuration, never is)", true
	}
	return "", false
}

// CpuMirror reports whether a name says it is the host copy of a tensor
// (seq_lens_cpu, positions_host).
func CpuMirror(name string) bool {
	return strings.HasSuffix(name, "_cpu") || strings.HasSuffix(name, "_host")
}

// IsTensorFactory reports whether n creates a tensor: a torch factory or a
// conversion temporary.
func IsTensorFactory(f *File, n *Node) bool {
	n = Unparen(n)
	if n == nil || n.Kind() != "call" {
		return false
	}
	if TempOf(f, n) != nil {
		return true
	}
	q := f.Qualify(n.Get("function"))
	if hostBuilders[q] || allocators[q] || likeFactories[q] || randomFactories[q] {
		return true
	}
	switch q {
	case "torch.cat", "torch.stack", "torch.cumsum", "torch.nn.Parameter":
		return true
	}
	recv, name, _ := MethodCall(n, f.Src)
	if recv != nil {
		switch name {
		case "cumsum", "cuda", "pin_memory", "new_empty", "new_zeros", "new_full", "new_tensor", "repeat", "expand_as":
			return true
		}
	}
	return false
}

// HostBindings are, by local name, the statements that bind it to a host
// value.
type HostBindings map[string][]*Node

// at says whether the local name read at use holds a host value there: a
// binding comes before the read in the source, or both are in one loop, so
// that a later iteration reads what an earlier one bound. A read before
// any binding (`assert torch.is_tensor(v)` ahead of `v = v.item()`) still
// sees the parameter. A binding before the read does not reach it where no
// path runs from one to the other without another binding first: the two
// are in different arms of one if statement (`if t is None: n =
// int(lens.max()) else: n = blocks * size`, a read in the else arm), or a
// plain assignment of the name to a value that reads no host local stands
// between them in a block that holds the read (`n = x.size(0)`), which
// every path into the read's statement runs. A loop around both still
// carries the binding round (the loop case above).
func (h HostBindings) at(name string, use *Node, src []byte) bool {
	for _, b := range h[name] {
		if b.End <= use.Start && !exclusiveArms(b, use) && !h.rebound(name, b, use, src) {
			return true
		}
		if loopHolds(b, use) {
			return true
		}
	}
	return false
}

// reaches says whether x is a read of a local that a host binding reaches
// (at). The model's kind of a local is its last binding's in source order,
// which can be a shape bound in a branch or in the other arm of an if while
// a host binding reaches the read too: `(n, 4)` holds what `n` does.
func (h HostBindings) reaches(x *Node, src []byte) bool {
	if x.Kind() != "identifier" || len(h) == 0 {
		return false
	}
	if par := x.Parent(); par != nil && par.Kind() == "attribute" && par.Get("attribute") == x {
		return false
	}
	return h.at(x.Text(src), x, src)
}

// exclusiveArms says whether b and use lie in different arms (the
// consequence, an elif, the else) of one if statement: no run of it goes
// from one into the other (a loop around it is the caller's concern).
func exclusiveArms(b, use *Node) bool {
	var arm *Node
	for l := use; l.Parent() != nil; l = l.Parent() {
		p := l.Parent()
		if p.Kind() == "function_definition" || p.Kind() == "lambda" || p.Kind() == "class_definition" {
			return false
		}
		if p.Start <= b.Start && b.End <= p.End {
			// p is the lowest node that holds both: l is the use's child of p.
			if p.Kind() != "if_statement" || !isArm(p, l) {
				return false
			}
			arm = l
			break
		}
	}
	if arm == nil {
		return false
	}
	for _, c := range arm.Parent().NamedChildren() {
		if c != arm && c.Start <= b.Start && b.End <= c.End {
			return isArm(arm.Parent(), c)
		}
	}
	return false
}

// isArm: c is a branch of if statement p (its consequence block, an elif or
// the else clause), not its condition.
func isArm(p, c *Node) bool {
	return c.Kind() == "elif_clause" || c.Kind() == "else_clause" || c.Kind() == "block" && p.Get("consequence") == c
}

// rebound says whether a plain assignment of name (`name = value`, value
// reading no local that has a host binding, nor name itself) comes after b
// and before use as a statement of a block that holds use, with no def or
// lambda between that block and use (a closure reads the name when it is
// called). Entering a block runs its statements in order, so every path
// from b to use runs that assignment: b's value does not reach the read.
func (h HostBindings) rebound(name string, b, use *Node, src []byte) bool {
	for l := use; l.Parent() != nil; l = l.Parent() {
		p := l.Parent()
		switch p.Kind() {
		case "function_definition", "lambda", "class_definition":
			return false
		case "block", "module":
			for _, k := range p.NamedChildren() {
				if k == l || k.Start >= l.Start {
					break
				}
				if k.Start >= b.End && h.plainRebind(name, k, src) {
					return true
				}
			}
		}
	}
	return false
}

// plainRebind: statement k is `name = value` (or `name: T = value`) whose
// value reads neither name nor any local with a host binding.
func (h HostBindings) plainRebind(name string, k *Node, src []byte) bool {
	if k.Kind() != "expression_statement" || len(k.NamedChildren()) != 1 {
		return false
	}
	a := k.NamedChildren()[0]
	if a.Kind() != "assignment" {
		return false
	}
	l, r := a.Get("left"), a.Get("right")
	if l == nil || r == nil || l.Kind() != "identifier" || l.Text(src) != name || r.Kind() == "assignment" {
		return false
	}
	clean := true
	Walk(r, func(x *Node) bool {
		if !clean || x.Kind() == "lambda" {
			return false
		}
		if x.Kind() == "identifier" {
			if t := x.Text(src); t == name || len(h[t]) > 0 {
				clean = false
			}
		}
		return clean
	})
	return clean
}
