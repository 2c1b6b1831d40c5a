package analysis

import (
	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/index"
)

// Analysis is what the rules see of the call graph and the contexts.
type Analysis struct {
	Proj    *Project
	Regions []*Region
	Reached map[*Function]map[Context]*contexts.Reach
	Claims  map[*Function]*Node
	// AttrsRead and buffers are computed on first use by CG201.
	AttrsRead map[string]bool
	// AttrReaders are, by attribute name, the project classes whose
	// instances captured code reads it from (their points-to values), and
	// AttrReadAnon the names captured code also reads from an object of no
	// known project class (CG201).
	AttrReaders  map[string]map[*index.Class]bool
	AttrReadAnon map[string]bool
	// ByCallReads are, for each replay-prep region before a call that
	// replays whose graphs are known (Region.Replays), what the captured
	// code of those graphs reads (CG201, CG301).
	ByCallReads map[*Region]*ReadSet
	Buffers     map[string]bool
	Registry    map[string]bool // attributes registered as parameters or buffers (CG201)
	// AfterReplay: attributes read after a `.replay()`, with each read
	// (the reading function and the attribute expression read) (CG201).
	AfterReplay map[string][]AttrUse
	// PrepWrites: attributes replay-prep code writes in place (`x.attr.copy_(...)`,
	// `x.attr[:n] = ...`), with the writes (CG201).
	PrepWrites map[string][]PrepWrite
}

// ReadSet is what some captured code reads: attribute names, and by name
// the project classes of the objects read (Anon: also an object of no known
// class).
type ReadSet struct {
	Attrs   map[string]bool
	Readers map[string]map[*index.Class]bool
	Anon    map[string]bool
}

// AttrUse is a use of an attribute: the function, and the attribute
// expression (`self.seq.lens`).
type AttrUse struct {
	Fn   *Function
	Attr *Node
	// Assumes is what the use's context rests on where it is not proved
	// (ContextAssumptions): a fill in replay-prep code reached through a
	// guessed chain. A finding that pairs its own site with this use
	// rests on it too.
	Assumes []string
}

// PrepWrite is an in-place write of an attribute in replay-prep code.
type PrepWrite = AttrUse

func NewAnalysis(p *Project) *Analysis {
	return &Analysis{Proj: p, Regions: p.Ctx.Regions, Reached: p.Ctx.Reached, Claims: p.Ctx.Claims}
}

func (a *Analysis) Has(fn *Function, c Context) bool {
	return a.Reached[fn] != nil && a.Reached[fn][c] != nil
}

// RegionCallees are the project functions the region's statements call, in
// order (each callee of each call once), then those they run implicitly
// (a subscript's __getitem__, a with item's __enter__: contexts.RegionSites).
func (a *Analysis) RegionCallees(r *Region) []*Function {
	var out []*Function
	for _, call := range contexts.RegionSites(a.Proj.G, r) {
		for _, e := range a.Proj.G.CapturedCallees(call) {
			out = append(out, e.Callee)
		}
	}
	return out
}
