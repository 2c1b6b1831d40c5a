package tensors

// MemberTest is what a membership test `x in c` does with tensor values,
// as the GPU answered (bench/probes/member_list.py,
// bench/results/2026-12-07-h-member-list.txt): a list's or tuple's `in`
// takes each element in order and stops at one that is the very object
// or equal to it, so with a tensor on either side it reads the truth of
// `element == x` on the host; a tensor's `in` (Tensor.__contains__)
// reads `(c == x).any()`; a set's or dict's hashes, and a tensor's hash
// is its identity, so it reads nothing.
type MemberTest int

const (
	// MemberNone: no read the model can show (a set, a dict, a string,
	// a container it cannot see, no tensor).
	MemberNone MemberTest = iota
	// MemberContains: c is a tensor.
	MemberContains
	// MemberEquals: c is a list or tuple whose first comparison is a
	// tensor with a number, which no identity skips.
	MemberEquals
	// MemberEqualsUnlessSame: c is a list or tuple of tensors (and
	// numbers) and x a tensor: an element that is x itself, met before
	// any other, skips every `==`.
	MemberEqualsUnlessSame
)

// Membership is what `left in right` (or `not in`) reads, and the tensor
// whose value it reads: right for MemberContains, else the tensor
// compared by `==`. Only a container the function can see is judged: a
// list or tuple display or list comprehension, or a local name bound to
// one exactly once (with what the function appends or stores into it).
func (m *Model) Membership(left, right *Node) (MemberTest, *Node) {
	left, right = Unparen(left), Unparen(right)
	if left == nil || right == nil {
		return MemberNone, nil
	}
	if m.Kind(right) == KTensor {
		if m.notTensorContainer(right) {
			return MemberNone, nil
		}
		return MemberContains, right
	}
	lit, name := right, ""
	if right.Kind() == "identifier" {
		name = right.Text(m.f.Src)
		m.init()
		if len(m.binds[name]) != 1 {
			return MemberNone, nil
		}
		b := m.BindingOf(name, right)
		if b == nil || b.IsParam || b.Value == nil || b.Unpack {
			return MemberNone, nil
		}
		lit = Unparen(b.Value)
	}
	if lit == nil || !listLit(lit) {
		return MemberNone, nil
	}
	elems, unknown := m.containerElems(lit, name)
	if unknown || len(elems) == 0 {
		return MemberNone, nil
	}
	// first is the element the test meets first, where the display
	// says it (a comprehension's or appended elements come in an order
	// the text does not show).
	var first *Node
	if lit.Is("list", "tuple") && len(lit.NamedChildren()) > 0 {
		first = Unparen(lit.NamedChildren()[0])
	}
	if m.Kind(left) == KTensor {
		if first != nil && left.Kind() == "identifier" && first.Kind() == "identifier" && first.Text(m.f.Src) == left.Text(m.f.Src) {
			return MemberNone, nil // `t in [t, u]`: identity meets first
		}
		numbers, tensors := 0, 0
		for _, e := range elems {
			switch {
			case numericLit(e):
				numbers++
			case m.Kind(e) == KTensor:
				tensors++
			default:
				return MemberNone, nil
			}
		}
		if tensors == 0 || first != nil && numericLit(first) {
			return MemberEquals, left
		}
		return MemberEqualsUnlessSame, left
	}
	if numericLit(left) && first != nil && m.Kind(first) == KTensor {
		// `3 in [t, 5]`: `t == 3` first.
		return MemberEquals, first
	}
	return MemberNone, nil
}

// numericLit: n is a number literal (`2`, `-1`, `0.5`, `True`).
func numericLit(n *Node) bool {
	n = Unparen(n)
	if n == nil {
		return false
	}
	if n.Kind() == "unary_operator" {
		n = Unparen(n.Get("argument"))
	}
	return n != nil && n.Is("integer", "float", "true", "false")
}

// notTensorContainer: what the value model calls a tensor, as the
// container of a membership test, may be something else, which the test
// itself makes likely (`k in d`): the points-to facts hold values and no
// tensor, or a parameter's annotation declares something other than a
// tensor.
func (m *Model) notTensorContainer(n *Node) bool {
	if m.p != nil && m.p.Proj != nil && m.p.Proj.G != nil && m.flowRulesOutTensor(n) {
		return true
	}
	if n.Kind() == "identifier" {
		if b := m.BindingOf(n.Text(m.f.Src), n); b != nil && b.IsParam && annotationExpr(b.param) != nil {
			return annotationKind(m.f, b.param) != KTensor && !optionalTensor(m.f, b.param)
		}
	}
	return false
}
