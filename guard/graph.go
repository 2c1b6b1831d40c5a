package guard

import "errors"

// GraphFunction is one function of the call graph and capture map, as
// `capguard graph --format json` prints it (a contract other tools read).
type GraphFunction struct {
	// Name is the dotted module path relative to the working directory plus
	// the qualified name ("pkg.mod.Class.method"); module-level code is the
	// module's own name ("pkg.mod").
	Name string `json:"name"`
	Path string `json:"path"`
	Line int    `json:"line"`
	// Context is the first of Contexts in the order captured, replay-prep,
	// post-capture, claimed, launcher; "eager" when it has none.
	Context  Context   `json:"context"`
	Contexts []Context `json:"contexts,omitempty"`
	// Chain proves Context: names from the root to this function.
	Chain []string `json:"chain,omitempty"`
	// Resolution is the weakest edge kind in Chain.
	Resolution EdgeKind `json:"resolution,omitempty"`
	// Calls are the names of the project functions this one calls (a
	// constructor call is an edge to the class's __init__).
	Calls []string    `json:"calls"`
	Edges []GraphEdge `json:"edges,omitempty"`
}

// GraphEdge is one resolved call: the callee, how it was resolved, and the
// 1-based line of the call.
type GraphEdge struct {
	To   string   `json:"to"`
	Kind EdgeKind `json:"kind"`
	Line int      `json:"line"`
}

// GraphResult is the whole graph of one run.
type GraphResult struct {
	Version   int             `json:"version"`
	Functions []GraphFunction `json:"functions"`
	Errors    []FileError     `json:"errors,omitempty"`
}

// BuildGraph analyses the paths as Run does and returns the call graph and
// the capture map instead of findings.
func BuildGraph(opts Options) (*GraphResult, error) {
	return nil, errors.New("capguard graph: not built yet (call graph v2 in progress)")
}
