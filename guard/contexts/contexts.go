// Package contexts is the third layer of capguard's analysis: from the call
// graph (guard/flow) it works out where each function runs — captured,
// replay-prep, post-capture, claimed, launcher — and the chain of calls
// that proves it, root first, with the weakest edge kind on that chain.
//
// Roots: the graph APIs (`with torch.cuda.graph(...)`, capture_begin() ..
// capture_end() spans, make_graphed_callables, torch.npu and HPU
// equivalents, project context managers that wrap one), the code under
// `if torch.cuda.is_current_stream_capturing():`, graph-protocol naming
// conventions for engines that capture in C++ or in a framework,
// configured entry points and presets, the code between a capture's end
// (or a function's start) and a `.replay()`, post-capture hooks, claims of
// capture safety, a capture map recorded by `capguard trace`, and, in a
// project that never captures, its public functions that launch kernels.
package contexts

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/cudagraph-capguard/capguard/guard/device"
	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// Node is a syntax node.
type Node = syntax.Node

// Context says where a function (or a region of one) runs.
type Context string

const (
	Captured    Context = "captured"
	ReplayPrep  Context = "replay-prep"
	PostCapture Context = "post-capture"
	Claimed     Context = "claimed"
	Launcher    Context = "launcher"
	Eager       Context = "eager"
)

// Order is the order contexts are listed and chosen in.
var Order = []Context{Captured, ReplayPrep, PostCapture, Claimed, Launcher}

// Region is a part of a function that runs in a context of its own: the
// body of `with torch.cuda.graph(...)`, a capture_begin()..capture_end()
// span, a capture guard's body, or the statements before a `.replay()`.
type Region struct {
	Fn    *index.Function
	Ctx   Context
	What  string // "with torch.cuda.graph" (or "with " and another graph context's callee: IsWith), "capture_begin()..capture_end()", "before .replay()"
	Node  *Node  // the with statement, the capture_begin statement, the if statement, the replay call
	Stmts []*Node
	// ByCall is, for a replay-prep region before a call of a function
	// that replays (replaycall.go), that function; nil otherwise.
	ByCall *index.Function
	// Replays are, for such a region, the capture regions of the graphs
	// the call replays: those in the classes (or functions) of the
	// functions that hold the `.replay()`; nil where one of them has
	// none (the graph is captured elsewhere: any capture's).
	Replays []*Region
	// Assumed is what the region rests on, where it is not proved (a
	// replay-prep region before a call that replays assumes the call
	// comes after the graph's capture); its findings are warnings.
	Assumed string
	// Caught is, for a capture whose failure a handler takes before going
	// on without the graph (caught.go), that handler in words
	// ("`except Exception` in pkg.mod.f (line 12)"); "" otherwise.
	Caught string
}

// IsWith: the region is a with statement's body (a graph context).
func (r *Region) IsWith() bool { return strings.HasPrefix(r.What, "with ") }

// Reach is how a function came to run in a context.
type Reach struct {
	// Chain is the functions from the root to this one.
	Chain []*index.Function
	// Kinds are the edge kinds along Chain (one fewer than Chain).
	Kinds []flow.EdgeKind
	// Weakest is the weakest kind on the chain, or the root's own kind
	// (traced for a capture map's functions, resolved otherwise).
	Weakest flow.EdgeKind
	// Root says what made the chain's first function a root.
	Root string
	// Cond is set when every chain found passes a call that runs under
	// capture only conditionally (Conditional): "the capture passes
	// `pixel_values`, in pkg.mod.Model.forward".
	Cond string
	// Assumed is set when the chain's root is a guess by name: a built-in
	// graph-protocol convention, or a preset pattern that matches any
	// module's class of that name ("*:*Attention.forward"). It says what
	// was assumed. Roots that are proved (a capture region, a user's
	// entry point, a trace) are preferred where both reach a function.
	Assumed string
	// ByCall is, where the chain starts at a replay-prep region before a
	// call that replays a graph (replaycall.go), that region: it assumes
	// the call comes after the capture.
	ByCall *Region
	// Caught is set in the captured context when only captures whose
	// failure is caught reach the function with a chain that can prove a
	// finding (caught.go): the handler that takes the failure, in words.
	Caught string
}

// Names is the chain in `capguard graph` naming.
func (r *Reach) Names() []string {
	out := make([]string, len(r.Chain))
	for i, f := range r.Chain {
		out[i] = f.FullName()
	}
	return out
}

// Convention is a graph-protocol naming convention: in a class whose
// methods (own or inherited) match Protocol, the methods matching
// Captured run under capture and those matching ReplayPrep between
// replays. A class whose own code captures or replays (a graph runner) is
// exempt.
type Convention struct {
	Name       string
	Protocol   []string
	Captured   []string
	ReplayPrep []string
}

// DefaultConventions are the conventions of engines that capture in C++ or
// in a framework (SGLang's attention backends, graph-protocol mixins).
var DefaultConventions = []Convention{{
	Name: "graph-protocol",
	Protocol: []string{"init_forward_metadata_*_cuda_graph", "*capture*graph*", "prepare*cuda_graph*", "*cuda_graph*replay*",
		"*cudagraph*", "*cuda_graph*"},
	Captured:   []string{"forward", "forward_decode", "__call__"},
	ReplayPrep: []string{"*replay*"},
}}

// TracedRecord is a function a capture map recorded.
type TracedRecord struct {
	Ctx   Context
	Name  string   // capguard graph naming, or "" to match by path and qualified name
	Path  string   // absolute path of the file
	Qual  string   // qualified name ("" for module-level code)
	Stack []string // names from the capture site, root first
}

// Config says which roots a project has besides the graph APIs.
type Config struct {
	// Entry patterns, "module:Qual.name" with * wildcards.
	Captured, ReplayPrep, PostCapture []string
	// PostCaptureRPC are remote-call method names (`collective_rpc`) whose
	// string argument names a project method run after capture.
	PostCaptureRPC []string
	Conventions    []Convention
	// KernelOps are dotted-name globs of extension ops that launch kernels
	// (torch.ops.* always).
	KernelOps []string
	// Predicates are dotted-name globs of conditions that hold during
	// capture: the code under their negation is not captured.
	Predicates []string
	// Device is the device type graphs are captured on ("" is cuda): code
	// on a branch for another device type is not captured.
	Device string
	// Traced are the functions a capture map recorded.
	Traced []TracedRecord
	// CWD is the working directory (absolute), for traced paths.
	CWD string
	// Quiet are patterns that may match nothing without a warning (the
	// presets' and built-in ones).
	Quiet map[string]bool
	// Namesakes are the preset patterns that hold only for the
	// framework's classes, each with the framework's dotted prefixes: a
	// preset turned on only by an import (config.Config.Imported). A
	// class matched by name whose hierarchy provably never reaches the
	// framework (index.Hierarchy.NeverDerives) is a namesake, not the
	// framework's: no root.
	Namesakes map[string][]string
	// OnReload are the post-capture patterns of a preset's load hooks
	// (config.Preset.OnReload): after capture only on a reload, which
	// their roots assume.
	OnReload map[string]bool
	// Canceled, when set, is asked between Compute's passes, between
	// files of the region search and between levels of a propagation;
	// once it says true, Compute stops and returns a Result with only
	// Canceled set (capguard server drops a run a newer buffer made
	// stale).
	Canceled func() bool
}

// Result is where every function runs.
type Result struct {
	Regions []*Region
	Reached map[*index.Function]map[Context]*Reach
	Claims  map[*index.Function]*Node
	// Excluded are statements of a function that never run under capture
	// (the negation of a capture guard, code the captured calls' constant
	// arguments switch off, set-up a proved warm-up ran): captured rules
	// skip them and no captured context flows through their calls.
	Excluded map[*index.Function][]*Node
	// Guarded is the part of Excluded that holds whoever the caller is
	// (capture guards, flags and device tests, not constant arguments or
	// warm-ups): launcher and claimed code skip it too.
	Guarded map[*index.Function][]*Node
	// Warmed are the one-time set-up statements (a first-call memo, a cache
	// miss) of the functions that a proved warm-up ran (the capturing
	// function's call before the capture, with the captured call's own
	// arguments): under that capture they are skipped and the graph reads
	// what the warm-up left (CG202). Excluded holds them only where no
	// capture without a warm-up reaches the function.
	Warmed map[*index.Function][]*Node
	// WarmUps are each capture region's warm-up calls.
	WarmUps map[*Region][]WarmUp
	// Library is set when the project never captures: its public kernel
	// launchers are the roots.
	Library bool
	// Capturing says what shows the project captures of its own (and so
	// is no library), "" when nothing does (library.go).
	Capturing string
	// Stale are capture-map records whose name no longer resolves.
	Stale    []TracedRecord
	Warnings []string
	// Canceled: Config.Canceled said so before Compute ended, and the
	// rest of the Result is empty.
	Canceled bool

	// ownCapture are, by function, the statements of its own capture
	// regions (a `with torch.cuda.graph(...)` body, a capture_begin()..
	// capture_end() span, a capture guard's body): captured code, whatever
	// other context the function runs in (ExcludedIn).
	ownCapture map[*index.Function][]*Node
	// launcherExcl: for a function with code that the constants the
	// launchers' calls pass switch off (prune), that code beside its
	// Guarded: what the launcher context skips there. Made once, after
	// the last guard is known.
	launcherExcl map[*index.Function][]*Node

	// passed are the parameters every captured call of a function passes
	// explicitly by a non-literal expression (prune.go, PassedNone).
	passed map[*index.Function]map[string]bool

	g *flow.Graph
	a *analyser
	// branchMu serializes BranchCond (branches.go).
	branchMu sync.Mutex
}

// Has reports whether fn runs in context c.
func (r *Result) Has(fn *index.Function, c Context) bool {
	return r.Reached[fn] != nil && r.Reached[fn][c] != nil
}

// ExcludedIn are the statements of fn that context c never runs: Excluded
// for captured code, Guarded for launcher and claimed code, and for
// replay-prep and post-capture code the function's own capture regions.
func (r *Result) ExcludedIn(fn *index.Function, c Context) []*Node {
	switch c {
	case Captured:
		return r.Excluded[fn]
	case Launcher:
		if x, ok := r.launcherExcl[fn]; ok {
			return x
		}
		return r.Guarded[fn]
	case Claimed:
		return r.Guarded[fn]
	case ReplayPrep, PostCapture:
		// The function's own capture regions run under capture, not
		// between replays or after the capture: their statements are
		// checked as the regions' (and their calls carry the captured
		// context, not this one).
		return r.ownCapture[fn]
	}
	return nil
}

// guarded excludes nodes of fn whoever calls it.
func (a *analyser) guarded(fn *index.Function, nodes ...*Node) {
	a.res.Excluded[fn] = append(a.res.Excluded[fn], nodes...)
	a.res.Guarded[fn] = append(a.res.Guarded[fn], nodes...)
}

// OwnCapture are the statements of fn's own capture regions (a `with
// torch.cuda.graph(...)` body, a capture_begin()..capture_end() span, a
// capture guard's body): captured code whatever other context fn runs in.
func (r *Result) OwnCapture(fn *index.Function) []*Node { return r.ownCapture[fn] }

// IsExcluded reports whether statement node n of fn is under a negated
// capture guard.
func (r *Result) IsExcluded(fn *index.Function, n *Node) bool {
	for _, x := range r.Excluded[fn] {
		if n.Start >= x.Start && n.End <= x.End {
			return true
		}
	}
	return false
}

type root struct {
	// assumed: the root is a guess by name (Reach.Assumed).
	assumed string
	fn      *index.Function
	ctx     Context
	via     *index.Function // the region's function, when the root is a region's callee
	kind    flow.EdgeKind
	why     string
	pre     []*index.Function // a traced root's recorded stack
	site    *Node             // a region root's call in the region
	warm    bool              // the region's function called fn before the capture
	region  *Region           // a region root's region
	// warmCall is the warm-up call (warmRoot) of a warm root.
	warmCall *Node
	// cond: the root's call in its region takes its callee from values
	// the solve could not tell apart or order (valueCond), so the chain
	// rests on it.
	cond string
	// recv: what the region's call tells of the root's self (receiver.go),
	// the zero set for nothing.
	recv recvSet
}

// WarmUp is a call that the capturing function makes before a capture
// region with the arguments of a call in it (a warm-up run).
type WarmUp struct {
	Call   *Node
	Callee *index.Function
	// SetUp are the functions (Callee or what it reaches) whose one-time
	// set-up the warm-up ran (Result.Warmed), by name.
	SetUp []*index.Function
}

type analyser struct {
	// stopped: Config.Canceled said so (stop).
	stopped bool
	// recvMemo and selfMemo: methodRecv's and selfRebound's answers
	// (receiver.go).
	recvMemo  map[*index.Function][]*index.Class
	selfMemo  map[*index.Function]bool
	recvEdges map[recvEdge]recvAnswer
	// direct: the functions whose body launches a kernel (directLaunchers).
	direct map[*index.Function]bool
	// drivers memoises driverBarrier.
	drivers map[*index.Function]bool
	// graphedOpen are the calls of make_graphed_callables (isGraphedAPI)
	// whose callables argument is no project function (callers.go).
	graphedOpen []graphedCall
	// openRoots counts, per capture region, the callables it was assumed
	// to run for its callers (callers.go).
	openRoots map[*Region]int
	// callersBackward are those callables whose capture runs a backward
	// pass too, with where (backward.go).
	callersBackward map[*index.Function]string
	// captureEnv are the constants the captured calls pass each captured
	// function's parameters (prune.go); condMemo caches which conditions
	// are capture guards or flags (branches.go).
	captureEnv map[*index.Function]map[string]string
	condMemo   map[*Node]bool
	// merged: mergedSite's answers (merged.go).
	merged map[*Node]*mergedCall
	// deadMemo: deadIn's answers, by function and constants (constsKey).
	deadMemo map[deadKey][]*Node
	// siteCond: conditionalAt's answers.
	siteCond map[siteKey]string
	// rebinds: rebindsBeforeCapture's answers (rebound.go).
	rebinds   map[*index.Function][]rebind
	p         *index.Project
	g         *flow.Graph
	cfg       Config
	res       *Result
	roots     []root
	captureCM map[*index.Function]bool
	// replayers are the functions holding a graph's `.replay()`, and
	// those calls (graphReplays).
	replayers map[*index.Function]map[*Node]bool
	// captureRegions: captureRegionsByFn's map, once made (replaycall.go).
	captureRegions map[*index.Function][]*Region
	// replaying: replayingFns' set, once made (replaycall.go).
	replaying map[*index.Function]bool
	// firstMemo: capturesFirst's answers (replaycall.go).
	firstMemo map[*index.Function]bool
	// onceMemo: runsOnce's answers (replaycall.go).
	onceMemo map[*index.Function]bool
	// attrBound: attrBoundOutsideInit's set, once made (contrary.go).
	attrBound map[string][]*Node
	matched   map[string]bool
	// graphedSeen: a make_graphed_callables call was found.
	graphedSeen bool
	// builtin are patterns that may match nothing without a warning.
	builtin map[string]bool
	// ifs are the if statements of every function, whose truth under
	// capture guard() works out once the capture flags are known.
	ifs []ifStmt
	// refusals are the asserts and call statements of every function,
	// refusing the helpers known to raise under capture (refusals.go).
	refusals []refusal
	refusing map[*index.Function]bool
	// captureStarts are the statements that begin a capture region
	// (with torch.cuda.graph, capture_begin), by function (guardFollowing).
	captureStarts map[*index.Function][]*Node
	// flags are the project's capture flags (captureFlags), helpers the
	// truth under capture of project predicates (helperTruth).
	flags   map[string]string
	helpers map[*index.Function]truth
	// unselected are the classes that declare no graph support
	// (selection.go), and why.
	unselected map[*index.Class]string
	// gated are the classes selected only by an opt-in gate, and the gate.
	gated map[*index.Class]string
	// prefillSites are the code of captured functions that runs only
	// where prefill is captured (a decode-test argument rules it out);
	// prefillOnly the classes built only there (prune.go).
	prefillSites map[*index.Function][]*Node
	prefillOnly  map[*index.Class]string
	// builtinConventions: the conventions are DefaultConventions (naming
	// guesses), not the user's.
	builtinConventions bool
	// capturing are runsCapture's sets, by the weakest edge kind walked.
	capturing map[flow.EdgeKind]map[*index.Function]bool
	// visibleCapture: the project's capture evidence is a capture region
	// or a root the analysis follows (library.go), not a setting, a name
	// or a framework whose capture it cannot see.
	visibleCapture bool
	// program: programFuncs' set, once made.
	program map[*index.Function]bool
	// procEntries are the process and thread entries (processEntries), found
	// once: launcherCandidates asks for both its callers.
	procEntries map[*index.Function]bool
	// testEntries are testedEntries, found with procEntries (scanEntries).
	testEntries map[*index.Function]bool
	// scripts: scriptModule's answer, a file (programSite).
	scripts map[*index.File]bool
	// callers are, per function holding a capture region, the functions
	// that reach it (outerWrapper).
	callers map[*index.Function]map[*index.Function]bool
	// ctxMemo and ctxBusy: calling contexts (callctx.go).
	ctxMemo map[ctxKey][]callCtx
	// fwdSites, fwdFns and originMemo: forwarding closures (forward.go).
	fwdSites   map[*Node]bool
	fwdFns     map[*index.Function]bool
	originMemo map[*Node]map[*index.Function]bool
	namedMemo  map[*Node]bool
	ctxBusy    map[*index.Function]bool
	// argMemo: argValueFuncs' answers, by argument (callctx.go).
	argMemo map[*Node]map[*index.Function]bool
	// instMemo and decoUse: closure instances (closure.go); siteLive,
	// per call site in a region whose closure instances are known, the
	// region's live contexts.
	instMemo map[*index.Function]instAnswer
	decoUse  map[*index.Function]bool
	siteLive map[*Node]*siteContexts
	// siteCounts: siteCallees' answers, by function and call site
	// (forward.go).
	siteCounts map[*index.Function]map[*Node]int
}

type ifStmt struct {
	fn *index.Function
	s  *Node
}

// guardRegion is the What of the region under `if capturing:`.
const guardRegion = "is_current_stream_capturing() guard"

// Compute works out every function's contexts.
func Compute(p *index.Project, g *flow.Graph, cfg Config) *Result {
	forgetBindings()
	builtinConventions := cfg.Conventions == nil
	if builtinConventions {
		cfg.Conventions = DefaultConventions
	}
	res := &Result{Reached: map[*index.Function]map[Context]*Reach{}, Claims: map[*index.Function]*Node{},
		Excluded: map[*index.Function][]*Node{}, Guarded: map[*index.Function][]*Node{}, Warmed: map[*index.Function][]*Node{}, WarmUps: map[*Region][]WarmUp{}, g: g}
	a := &analyser{p: p, g: g, cfg: cfg, res: res, captureCM: map[*index.Function]bool{}, matched: map[string]bool{}, builtin: cfg.Quiet,
		builtinConventions: builtinConventions}
	res.a = a
	canceled := &Result{Canceled: true}
	a.findCaptureCMs()
	for _, f := range p.Files {
		if a.stop() {
			return canceled
		}
		for _, fn := range allFuncs(f) {
			a.findRegions(fn)
		}
	}
	a.markCaught()
	a.replayCallRegions()
	a.trimReplayPrep()
	a.captureFlags()
	for _, x := range a.ifs {
		a.guard(x.fn, x.s)
	}
	a.refusalGuards()
	if a.stop() {
		return canceled
	}
	res.ownCapture = map[*index.Function][]*Node{}
	for _, r := range res.Regions {
		if r.Ctx == Captured {
			res.ownCapture[r.Fn] = append(res.ownCapture[r.Fn], r.Stmts...)
		}
	}
	a.selection()
	a.gatedClasses()
	a.conventions()
	a.entries()
	a.rpcTargets()
	a.traced()
	if a.stop() {
		return canceled
	}
	// Library mode only where the project has no capture of its own
	// outside its tests, benchmarks and examples (library.go).
	res.Capturing = a.captureEvidence()
	if res.Capturing == "" && !a.tracedCapture() {
		res.Library = true
		a.launchers(false)
	} else if a.visibleCapture {
		a.launchers(true)
	}
	for _, f := range p.Files {
		for _, fn := range f.Funcs {
			if c := ClaimOf(fn); c != nil {
				res.Claims[fn] = c
				a.roots = append(a.roots, root{fn: fn, ctx: Claimed, kind: flow.Resolved, why: "claims capture safety"})
			}
		}
	}
	a.rootsOfRegions()
	a.prune()
	if a.stop() {
		return canceled
	}
	a.propagate()
	if !a.stop() && a.callersCallables() > 0 {
		// Again with the callables a capture of its callers' callables
		// may be given (callers.go).
		a.res.Reached = map[*index.Function]map[Context]*Reach{}
		a.propagate()
	}
	if !a.stop() && a.backwardRoots() > 0 {
		// Again with the backward passes' roots (backward.go).
		a.res.Reached = map[*index.Function]map[Context]*Reach{}
		a.propagate()
	}
	if a.stop() {
		return canceled
	}
	a.caughtReach()
	a.warn()
	return res
}

// stop reports whether Config.Canceled said the run is stale (asked until
// it says so once).
func (a *analyser) stop() bool {
	if !a.stopped && a.cfg.Canceled != nil && a.cfg.Canceled() {
		a.stopped = true
	}
	return a.stopped
}

func allFuncs(f *index.File) []*index.Function {
	return append([]*index.Function{f.Top}, f.Funcs...)
}

// isGraphedAPI: make_graphed_callables and HPU's wrap_in_hpu_graph.
func isGraphedAPI(d string) bool {
	return torchapi.GraphedAPIs[d] || strings.HasSuffix(d, "wrap_in_hpu_graph") || strings.HasSuffix(d, "hpu.graphs.wrap_in_hpu_graph")
}

// externalsOf are the external names an expression can denote.
func (a *analyser) externalsOf(f *index.File, n *Node) []string {
	var out []string
	for _, v := range a.g.Values(n) {
		if v.Kind == flow.VExt || v.Kind == flow.VExtInst {
			out = append(out, v.Ext)
		}
	}
	if len(out) == 0 {
		if q := f.Qualify(n); q != "" {
			out = append(out, q)
		}
	}
	return out
}

// graphedAPIsOf is externalsOf(f, callee) when one of those names is a
// graphed API, else nil: findRegions asks it of every call, and most are
// not, which EachValue tells without the sorted value list.
func (a *analyser) graphedAPIsOf(f *index.File, callee *Node) []string {
	ext, hit := false, false
	a.g.EachValue(callee, func(k flow.VKind, d string) {
		if k == flow.VExt || k == flow.VExtInst {
			ext = true
			hit = hit || isGraphedAPI(d)
		}
	})
	if !ext {
		if q := f.Qualify(callee); q == "" || !isGraphedAPI(q) {
			return nil
		}
	} else if !hit {
		return nil
	}
	return a.externalsOf(f, callee)
}

// isCaptureWith reports whether a with statement opens a graph capture:
// its item calls a graph API (or a project context manager wrapping one),
// or holds an object a graph API made.
func (a *analyser) isCaptureWith(f *index.File, with *Node) bool {
	for _, v := range withValues(with) {
		target := v
		if v.Kind() == "call" {
			target = syntax.Unparen(v.Get("function"))
		}
		for _, d := range a.externalsOf(f, target) {
			if torchapi.CaptureAPIs[d] {
				return true
			}
		}
		if v.Kind() != "call" {
			for _, val := range a.g.Values(v) {
				if val.Kind == flow.VExtInst && torchapi.CaptureAPIs[val.Ext] {
					return true
				}
			}
		}
		for _, t := range a.g.CallTargets(target) {
			if a.captureCM[t.Fn] {
				return true
			}
		}
	}
	return false
}

// withValues are the context managers a with statement enters: each
// item's expression, without its `as` target and parentheses.
func withValues(with *Node) []*Node {
	var out []*Node
	for _, c := range with.Children() {
		if c.Kind() != "with_clause" {
			continue
		}
		for _, it := range c.NamedChildren() {
			v := syntax.Unparen(it.Get("value"))
			if v != nil && v.Kind() == "as_pattern" {
				v = syntax.Unparen(v.NamedChildren()[0])
			}
			if v != nil {
				out = append(out, v)
			}
		}
	}
	return out
}

// graphReplays are fn's calls that replay a graph (`self.graph.replay()`,
// isGraphReplay), and the texts (blanks dropped) of what they replay.
func (a *analyser) graphReplays(fn *index.Function, calls []*Node) (replays map[*Node]bool, replayed map[string]bool) {
	src := fn.File.Src
	for _, call := range calls {
		callee := syntax.Unparen(call.Get("function"))
		if callee == nil || callee.Kind() != "attribute" || callee.Get("attribute").Text(src) != "replay" ||
			len(call.Get("arguments").NamedChildren()) != 0 || !a.isGraphReplay(callee.Get("object")) {
			continue
		}
		if replays == nil {
			replays, replayed = map[*Node]bool{}, map[string]bool{}
		}
		replays[call] = true
		replayed[blankless(callee.Get("object").Text(src))] = true
	}
	return replays, replayed
}

// graphContextOf: a with statement of fn whose context manager is an
// outside call taking, as its first argument, a graph that fn replays
// (`with backend.graph(self.graph):` ... `self.graph.replay()`) captures
// into that graph, whatever backend's API it is: it returns the call's
// callee text ("htcore.hpu.graph"), or "". Without it, the set-up the
// with statement follows (the static buffers a lazy runner allocates
// before its first capture) was read as preparation between replays.
func (a *analyser) graphContextOf(f *index.File, with *Node, replayed map[string]bool) string {
	if len(replayed) == 0 {
		return ""
	}
	src := f.Src
	for _, v := range withValues(with) {
		if v.Kind() != "call" {
			continue
		}
		callee := syntax.Unparen(v.Get("function"))
		if callee == nil || len(a.g.CallTargets(callee)) > 0 {
			continue // a project function: captureCM decides
		}
		args := positional(v.Get("arguments"))
		if len(args) > 0 && replayed[blankless(args[0].Text(src))] {
			return callee.Text(src)
		}
	}
	return ""
}

// blankless is syntax.Blankless.
var blankless = syntax.Blankless

// findCaptureCMs marks the project's context managers whose body yields
// inside a graph capture.
func (a *analyser) findCaptureCMs() {
	for _, f := range a.p.Files {
		for _, fn := range f.Funcs {
			if !fn.Generator || len(fn.Decorators) == 0 {
				continue
			}
			cm := false
			for _, d := range fn.Decorators {
				if strings.Contains(d.Text(f.Src), "contextmanager") {
					cm = true
				}
			}
			if !cm {
				continue
			}
			forEachStmt(fn.Body, func(s *Node) {
				if s.Kind() == "with_statement" && a.isCaptureWith(f, s) && containsYield(s) {
					a.captureCM[fn] = true
				}
			})
		}
	}
}

func containsYield(n *Node) bool {
	return anyInScope(n, func(x *Node) bool { return x.Kind() == "yield" })
}

// findRegions finds fn's capture regions, graphed callables, capture
// guards and pre-replay spans.
func (a *analyser) findRegions(fn *index.Function) {
	f := fn.File
	src := f.Src
	var captures []*Region
	calls := callsIn(fn.BodyStmts())
	replays, replayed := a.graphReplays(fn, calls)
	if len(replays) > 0 {
		if a.replayers == nil {
			a.replayers = map[*index.Function]map[*Node]bool{}
		}
		a.replayers[fn] = replays
	}
	visitBlock := func(block *Node) {
		stmts := block.NamedChildren()
		begin := -1
		for i, s := range stmts {
			if s.Kind() == "with_statement" && !expectsRaise(s, src) {
				what := ""
				if a.isCaptureWith(f, s) {
					what = "with torch.cuda.graph"
				} else if api := a.graphContextOf(f, s, replayed); api != "" {
					what = "with " + api
				}
				if body := s.Get("body"); body != nil && what != "" {
					r := &Region{Fn: fn, Ctx: Captured, What: what, Node: s, Stmts: body.NamedChildren()}
					captures = append(captures, r)
				}
			}
			if hasMethodCall(s, "capture_begin", src) {
				begin = i
			}
			if begin >= 0 && i > begin && hasMethodCall(s, "capture_end", src) && !expectsRaise(stmts[begin], src) {
				captures = append(captures, &Region{Fn: fn, Ctx: Captured, What: "capture_begin()..capture_end()",
					Node: stmts[begin], Stmts: stmts[begin+1 : i]})
				begin = -1
			}
			if s.Kind() == "if_statement" {
				a.ifs = append(a.ifs, ifStmt{fn, s})
			}
			if r, ok := refusalOf(fn, s); ok && i+1 < len(stmts) {
				a.refusals = append(a.refusals, r)
			}
		}
	}
	if fn.Kind == index.TopLevel {
		if fn.Body != nil {
			visitBlock(fn.Body)
		}
	}
	forEachStmt(fn.Body, func(s *Node) {
		if !s.Is("function_definition", "class_definition", "decorated_definition") {
			for _, b := range stmtBlocks(s) {
				visitBlock(b)
			}
		}
	})
	if fn.Kind == index.Def && fn.Body != nil {
		visitBlock(fn.Body)
	}
	sort.SliceStable(captures, func(i, j int) bool { return captures[i].Node.Start < captures[j].Node.Start })
	a.res.Regions = append(a.res.Regions, captures...)
	// make_graphed_callables(target, ...), wrap_in_hpu_graph(model) and .replay().
	for _, call := range calls {
		callee := syntax.Unparen(call.Get("function"))
		if callee == nil {
			continue
		}
		for _, d := range a.graphedAPIsOf(f, callee) {
			if !isGraphedAPI(d) {
				continue
			}
			args := positional(call.Get("arguments"))
			if len(args) == 0 {
				continue
			}
			targets := a.g.CallTargets(args[0])
			m := a.mergedSite(fn, call, args[0], len(targets))
			for _, t := range targets {
				cond := ""
				if t.Kind != flow.Traced {
					cond = m.cond(t.Fn)
				}
				a.roots = append(a.roots, root{fn: t.Fn, ctx: Captured, via: fn, kind: t.Kind,
					why: lastName(d) + " at " + fmt.Sprintf("%s:%d", f.Path, f.Line(call)), cond: cond})
			}
			if len(targets) == 0 {
				// What it graphs is what its callers give (callers.go).
				a.graphedOpen = append(a.graphedOpen, graphedCall{fn, call, args[0]})
			}
			a.graphedSeen = true
		}
		if replays[call] {
			pre := a.replayPrepStmts(fn, call, captures)
			if len(pre) > 0 {
				a.res.Regions = append(a.res.Regions, &Region{Fn: fn, Ctx: ReplayPrep, What: "before .replay()", Node: call, Stmts: pre})
			}
		}
	}
}

// expectsRaise: statement s is, or lies in, a with statement of a test's
// expected exception (`with pytest.raises(E):`, `self.assertRaises(E)`,
// `assertRaisesRegex`): a capture there is one the test expects to fail (a
// capture guard's refusal), not a capture that runs.
func expectsRaise(s *Node, src []byte) bool {
	for x := s; x != nil; x = x.Parent() {
		if x.Is("function_definition", "class_definition", "lambda") {
			return false
		}
		if x.Kind() != "with_statement" {
			continue
		}
		for _, v := range withValues(x) {
			if v.Kind() != "call" {
				continue
			}
			name := v.Get("function").Text(src)
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			switch name {
			case "raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp":
				return true
			}
		}
	}
	return false
}

// trimReplayPrep: the code before a `.replay()` that runs before the
// capture is set-up for the capture, not preparation between replays. A
// statement that calls a project function that runs a capture region (a
// nested `capture_graphs(i)`, a runner's `capture()`, or a re-initialize
// routine that builds new state and then calls the routine that captures:
// through any chain of calls proved at least by annotation, runsCapture)
// is the capture: only the statements after the last such one are
// replay-prep (a warm-up loop that allocates buffers, captures and
// replays once per batch size; a decoder that rebuilds its state and
// graphs when the inputs outgrow them, then replays).
func (a *analyser) trimReplayPrep() {
	captures := a.runsCapture(flow.Annotated)
	if len(captures) == 0 {
		return
	}
	var kept []*Region
	for _, r := range a.res.Regions {
		if r.Ctx != ReplayPrep || r.What != "before .replay()" && r.ByCall == nil {
			kept = append(kept, r)
			continue
		}
		last := -1
		for i, st := range r.Stmts {
			if a.capturesAmong([]*Node{st}, captures) {
				last = i
			}
		}
		if last >= 0 {
			r.Stmts = r.Stmts[last+1:]
		} else if r.ByCall != nil && a.capturesBesides(r.Fn, r.Node, captures) {
			// The function runs a capture, but not before this call: the
			// call comes in set-up, before the graph it replays exists
			// (replaycall.go).
			continue
		}
		if len(r.Stmts) > 0 {
			kept = append(kept, r)
		}
	}
	a.res.Regions = kept
}

// isGraphReplay: `.replay()` on a graph object (GraphObject).
func (a *analyser) isGraphReplay(recv *Node) bool { return GraphObject(a.g, recv) }

// GraphObject: the receiver of a `.replay()` is a graph object, not a
// project object with a replay method of its own. A project object that
// reaches the receiver only by name (a guess through a mix of values: the
// summary container, a field set under a computed name, an unknown
// receiver's method name) says nothing of it: such guesses reach many
// nodes that never hold them, and one made a runner's
// `self.graph.replay()` no replay (a layer that an example's monkeypatched
// model mixed into every field of a generator's runner).
func GraphObject(g *flow.Graph, recv *Node) bool {
	for _, v := range g.Values(syntax.Unparen(recv)) {
		if v.Edge == flow.ByName {
			continue
		}
		switch v.Kind {
		case flow.VInst, flow.VClass, flow.VModule, flow.VFunc, flow.VBound:
			return false
		}
	}
	return true
}

// replayPrepStmts are the statements that run before the replay call in
// fn, after the last capture region that ends before it: a function that
// captures and then replays prepares only between the two.
func (a *analyser) replayPrepStmts(fn *index.Function, call *Node, captures []*Region) []*Node {
	pre := withoutExits(a.withoutContrary(fn, call, precedingStmts(fn, call)))
	after := -1
	for _, r := range captures {
		end := r.Node.End
		if r.What == "capture_begin()..capture_end()" && len(r.Stmts) > 0 {
			end = r.Stmts[len(r.Stmts)-1].End
		}
		if r.Node.Start < call.Start && int(end) > after {
			after = int(end)
		}
	}
	if after < 0 {
		return pre
	}
	var out []*Node
	for _, s := range pre {
		if int(s.Start) >= after && !hasMethodCall(s, "capture_end", fn.File.Src) {
			out = append(out, s)
		}
	}
	return out
}

// withoutExits: a preceding `if` whose branch always leaves the function
// (`if graph is None: return self.model(x)`, the eager fallback) runs that
// branch only where no replay follows: of such an `if`, its conditions and
// the branches that fall through to the replay stay.
func withoutExits(stmts []*Node) []*Node {
	var out []*Node
	for _, s := range stmts {
		if s.Kind() != "if_statement" {
			out = append(out, s)
			continue
		}
		branches := []*Node{s.Get("consequence")}
		parts := []*Node{s.Get("condition")}
		for _, c := range s.Children() {
			switch c.Kind() {
			case "elif_clause":
				parts = append(parts, c.Get("condition"))
				branches = append(branches, c.Get("consequence"))
			case "else_clause":
				branches = append(branches, c.Get("body"))
			}
		}
		cut := false
		for _, b := range branches {
			if alwaysExits(b) {
				cut = true
			}
		}
		if !cut {
			out = append(out, s)
			continue
		}
		for _, p := range parts {
			if p != nil {
				out = append(out, p)
			}
		}
		for _, b := range branches {
			if b != nil && !alwaysExits(b) {
				out = append(out, b)
			}
		}
	}
	return out
}

// alwaysExits: every path through block ends in a return or raise (its
// last statement is one, or a with, if/else or try whose every branch
// always exits).
func alwaysExits(block *Node) bool {
	if exits(block) {
		return true
	}
	last := lastStmt(block)
	if last == nil {
		return false
	}
	switch last.Kind() {
	case "with_statement":
		return alwaysExits(last.Get("body"))
	case "if_statement":
		if !alwaysExits(last.Get("consequence")) {
			return false
		}
		hasElse := false
		for _, c := range last.Children() {
			switch c.Kind() {
			case "elif_clause":
				if !alwaysExits(c.Get("consequence")) {
					return false
				}
			case "else_clause":
				hasElse = true
				if !alwaysExits(c.Get("body")) {
					return false
				}
			}
		}
		return hasElse
	}
	return false
}

// truth is what a condition is while a stream captures.
type truth uint8

const (
	unknown truth = iota
	isTrue
	isFalse
)

// captureTruth evaluates a condition during capture: a call of
// torch.cuda.is_current_stream_capturing() is true; a configured predicate
// is true (or false, for a "!" pattern); `not`, `and` and `or` combine
// them; anything else is unknown. capturing says whether the truth rests on
// is_current_stream_capturing (which makes the true branch a capture root;
// a predicate only says what does not run).
func (a *analyser) captureTruth(f *index.File, cond *Node) (t truth, capturing bool) {
	cond = syntax.Unparen(cond)
	if cond == nil {
		return unknown, false
	}
	switch cond.Kind() {
	case "not_operator":
		t, c := a.captureTruth(f, cond.Get("argument"))
		switch t {
		case isTrue:
			return isFalse, c
		case isFalse:
			return isTrue, c
		}
		return unknown, false
	case "boolean_operator":
		l, lc := a.captureTruth(f, cond.Get("left"))
		r, rc := a.captureTruth(f, cond.Get("right"))
		op := cond.Operator(f.Src)
		if op == "and" {
			switch {
			case l == isFalse:
				return isFalse, lc
			case r == isFalse:
				return isFalse, rc
			case l == isTrue && r == isTrue:
				return isTrue, lc || rc
			}
			return unknown, false
		}
		switch {
		case l == isTrue:
			return isTrue, lc
		case r == isTrue:
			return isTrue, rc
		case l == isFalse && r == isFalse:
			return isFalse, lc || rc
		}
		return unknown, false
	}
	// A test of the device type: a CUDA graph runs on the target device.
	switch device.Eval(cond, f.Src, a.cfg.Device) {
	case device.True:
		return isTrue, false
	case device.False:
		return isFalse, false
	}
	if t := a.flagTruth(f, cond); t != unknown {
		return t, false
	}
	target := cond
	if cond.Kind() == "call" {
		target = syntax.Unparen(cond.Get("function"))
		if t, c := a.helperCall(cond); t != unknown {
			return t, c
		}
		if a.captureAPICheck(f, cond) {
			return isTrue, false
		}
		if args := cond.Get("arguments"); args == nil || len(args.NamedChildren()) == 0 {
			for _, d := range append(a.externalsOf(f, target), f.Qualify(target)) {
				if torchapi.TrueUnderCapture[d] {
					return isTrue, false
				}
			}
		}
	}
	names := a.externalsOf(f, target)
	if q := f.Qualify(target); q != "" {
		names = append(names, q)
	}
	for _, d := range names {
		if strings.HasSuffix(d, "is_current_stream_capturing") {
			return isTrue, true
		}
	}
	for _, pat := range a.cfg.Predicates {
		want := isTrue
		if strings.HasPrefix(pat, "!") {
			want, pat = isFalse, pat[1:]
		}
		for _, d := range names {
			if ok, _ := path.Match(pat, d); ok {
				return want, false
			}
		}
	}
	return unknown, false
}

// captureAPICheck: `hasattr(torch.cuda, "is_current_stream_capturing")`
// and the like, a check that a CUDA-graph API exists: true wherever a
// capture runs.
func (a *analyser) captureAPICheck(f *index.File, call *Node) bool {
	fn := syntax.Unparen(call.Get("function"))
	args := call.Get("arguments")
	if fn == nil || fn.Kind() != "identifier" || fn.Text(f.Src) != "hasattr" || args == nil {
		return false
	}
	as := args.NamedChildren()
	if len(as) != 2 {
		return false
	}
	name, ok := index.StringLit(as[1], f.Src)
	if !ok || !torchapi.CaptureAPINames[name] {
		return false
	}
	for _, d := range append(a.externalsOf(f, syntax.Unparen(as[0])), f.Qualify(syntax.Unparen(as[0]))) {
		if d == "torch.cuda" || d == "torch.cuda.graphs" {
			return true
		}
	}
	return false
}

// guard handles a condition whose truth during capture is known: the
// branch that cannot run under capture is excluded from captured code
// (its calls carry no captured context, captured rules skip it), and under
// `if torch.cuda.is_current_stream_capturing():` the branch that runs
// while capturing is a capture region of its own.
func (a *analyser) guard(fn *index.Function, s *Node) {
	t, capturing := a.captureTruth(fn.File, s.Get("condition"))
	if t == unknown {
		return
	}
	body := s.Get("consequence")
	var alt []*Node
	for _, c := range s.Children() {
		if c.Kind() == "else_clause" || c.Kind() == "elif_clause" {
			alt = append(alt, c)
		}
	}
	region := func(b *Node) {
		if capturing && b != nil {
			a.res.Regions = append(a.res.Regions, &Region{Fn: fn, Ctx: Captured, What: guardRegion, Node: s, Stmts: b.NamedChildren()})
		}
	}
	if t == isFalse {
		if body != nil {
			a.guarded(fn, body)
		}
		for _, c := range alt {
			if c.Kind() == "else_clause" {
				region(c.Get("body"))
				if len(alt) == 1 && exits(c.Get("body")) {
					a.guardFollowing(fn, s)
				}
			}
		}
		return
	}
	region(body)
	a.guarded(fn, alt...)
	// `if capturing: raise ...` (or return): nothing after the if runs
	// under capture.
	if len(alt) == 0 && exits(body) {
		a.guardFollowing(fn, s)
	}
}
