package flow

// EdgeKind says how a call edge (and so a chain of them) was resolved,
// from the strongest to the weakest:
//   - traced: recorded by capguard trace in a real run;
//   - resolved: the points-to analysis proved the callee;
//   - annotated: the receiver's declared type (an annotation, or the
//     class of a method's self when nothing in the project creates one);
//   - hierarchy: an override of that declared type's method in a subclass;
//   - name: a bare method name that one method family of the project
//     defines, on a receiver of unknown type.
type EdgeKind string

const (
	Traced    EdgeKind = "traced"
	Resolved  EdgeKind = "resolved"
	Annotated EdgeKind = "annotated"
	Hierarchy EdgeKind = "hierarchy"
	ByName    EdgeKind = "name"
)

// Strength orders edge kinds: a larger number is surer.
func (k EdgeKind) Strength() int {
	switch k {
	case Traced:
		return 5
	case Resolved, "":
		return 4
	case Annotated:
		return 3
	case Hierarchy:
		return 2
	case ByName:
		return 1
	}
	return 0
}

// Weaker returns the weaker of two kinds.
func (k EdgeKind) Weaker(o EdgeKind) EdgeKind {
	if o.Strength() < k.Strength() {
		return o
	}
	return k
}

// kindOf is the edge kind of a points-to strength.
func kindOf(s uint8) EdgeKind {
	switch s {
	case 5:
		return Traced
	case 4:
		return Resolved
	case 3:
		return Annotated
	case 2:
		return Hierarchy
	}
	return ByName
}

// Strengths of points-to facts.
const (
	sName      uint8 = 1
	sHierarchy uint8 = 2
	sAnnotated uint8 = 3
	sResolved  uint8 = 4
)
