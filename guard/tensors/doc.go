// Package tensors is the per-function value model of capguard, above the
// rule framework (guard/analysis) and below the fix model and the rules:
// what device an expression's tensor is on (values.go: Device), what kind
// of value it is (ValKind: tensor, host data, metadata), where a local
// was bound, and the expression classification rules share (exprs.go:
// temporaries, host reads, dtypes, assignments).
//
// An attribute's kind is, besides what the function's class binds to it,
// what the classes of its object declare (a dataclass's `indices:
// torch.Tensor`, `self.n: int = ...`): where every value the points-to
// analysis gives the object is an instance of a project class that declares
// the attribute, and every declaration says one kind (declaredAttr). A
// tensor among those values is passed over for an attribute no tensor has.
package tensors
