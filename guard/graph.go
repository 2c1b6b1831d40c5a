package guard

import (
	"sort"

	"github.com/cudagraph-capguard/capguard/guard/capmap"
	"github.com/cudagraph-capguard/capguard/guard/contexts"
)

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
	// ChainKinds are the edge kinds along Chain; Root says what made the
	// chain's first function a root.
	ChainKinds []EdgeKind `json:"chain_kinds,omitempty"`
	Root       string     `json:"root,omitempty"`
	// Condition is set when Context holds only conditionally: every chain
	// passes a call made under an optional input, a prefill branch or a
	// cache miss ("the capture passes `pixel_values`, in pkg.m.Model.forward").
	Condition string `json:"condition,omitempty"`
	// Assumes is what the chain's root rests on when it is not proved (a
	// preset pattern matched by name, a backward pass, a caller passing it
	// to a capture of its callers' callables, a weight reload): its
	// findings are warnings that say so.
	Assumes string `json:"assumes,omitempty"`
	// Coverage is the share of its lines the traced run executed under
	// capture and in replay prep (a capture map with lines; else nil).
	Coverage *FunctionCoverage `json:"coverage,omitempty"`
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
	// Dropped are the calls left without a callee on purpose.
	Dropped  []GraphDrop `json:"dropped,omitempty"`
	Errors   []FileError `json:"errors,omitempty"`
	Warnings []string    `json:"warnings,omitempty"`
	// Library says whether the project is checked in library mode (its
	// kernel launchers are launcher roots) and why: "library: nothing in
	// the project captures outside its tests", or "not a library: " and
	// the capture that shows it captures of its own.
	Library string `json:"library,omitempty"`
}

// GraphDrop is a call the analysis left without a callee on purpose, and
// why (for `capguard graph --why`).
type GraphDrop struct {
	Caller string `json:"caller"`
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Call   string `json:"call"`
	Reason string `json:"reason"`
}

// BuildGraph analyses the paths as Run does and returns the call graph and
// the capture map instead of findings.
func BuildGraph(opts Options) (*GraphResult, error) {
	opts.Progress = inOrder(opts.Progress)
	proj, res, _, err := prepare(opts, true)
	if err != nil {
		return nil, err
	}
	out := &GraphResult{Version: 1, Errors: res.Errors, Warnings: res.Warnings}
	switch {
	case proj.Ctx.Library:
		out.Library = "library: nothing in the project captures outside its tests, benchmarks and examples"
	case proj.Ctx.Capturing != "":
		out.Library = "not a library: " + proj.Ctx.Capturing
	}
	var cov *capmap.Lines
	if proj.Traced != nil {
		cov = proj.Traced.M.Coverage(proj.Traced.Cwd)
	}
	for _, f := range proj.Files {
		for _, fn := range append([]*Function{f.Top}, f.Funcs...) {
			gf := graphFunction(proj, fn)
			gf.Coverage = functionCoverage(cov, fn)
			out.Functions = append(out.Functions, gf)
		}
	}
	// Dropped is a map: sorted by path, line and call text, and where
	// those tie (two calls on a line whose shortened texts agree) by the
	// site's position, so that the order is the same on every run.
	type drop struct {
		GraphDrop
		start, end int
	}
	var drops []drop
	for site, why := range proj.G.Dropped {
		f, caller := proj.SiteOwner(site)
		if f == nil {
			continue
		}
		call := site
		if fn := Unparen(site.Get("function")); fn != nil {
			call = fn
		}
		drops = append(drops, drop{GraphDrop{Caller: caller.FullName(), Path: f.Path, Line: f.Line(site),
			Call: short(call.Text(f.Src)), Reason: why}, int(site.Start), int(site.End)})
	}
	sort.Slice(drops, func(i, j int) bool {
		a, b := drops[i], drops[j]
		switch {
		case a.Path != b.Path:
			return a.Path < b.Path
		case a.Line != b.Line:
			return a.Line < b.Line
		case a.Call != b.Call:
			return a.Call < b.Call
		case a.start != b.start:
			return a.start < b.start
		case a.end != b.end:
			return a.end < b.end
		}
		return a.Reason < b.Reason
	})
	for _, d := range drops {
		out.Dropped = append(out.Dropped, d.GraphDrop)
	}
	return out, nil
}

func graphFunction(proj *Project, fn *Function) GraphFunction {
	gf := GraphFunction{Name: fn.FullName(), Path: fn.File.Path, Line: fn.Line(), Context: Eager, Calls: []string{}}
	if ctxs := proj.Ctx.Reached[fn]; len(ctxs) > 0 {
		for _, c := range contexts.Order {
			r := ctxs[c]
			if r == nil {
				continue
			}
			if len(gf.Contexts) == 0 {
				gf.Context = c
				gf.Chain = r.Names()
				gf.Resolution = r.Weakest
				gf.ChainKinds = r.Kinds
				gf.Root = r.Root
				gf.Assumes = r.Assumed
				if c == Captured || c == Claimed {
					gf.Condition = r.Cond
				}
			}
			gf.Contexts = append(gf.Contexts, c)
		}
	}
	seen := map[string]bool{}
	for _, e := range proj.G.Out[fn] {
		name := e.Callee.FullName()
		if !seen[name] {
			seen[name] = true
			gf.Calls = append(gf.Calls, name)
		}
		line := 0
		if e.Site != nil {
			line = fn.File.Line(e.Site)
		}
		gf.Edges = append(gf.Edges, GraphEdge{To: name, Kind: e.Kind, Line: line})
	}
	return gf
}
