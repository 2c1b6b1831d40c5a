package contexts

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/internal/fold"
	"github.com/cudagraph-capguard/capguard/guard/internal/par"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// graphSwitchRE: a method that switches graph use on or off, says
// whether a class supports or uses graphs, or names a graph setting
// (`disable_cuda_graphs`, `maybe_enable_cuda_graphs`,
// `supports_cuda_graph_compilation`, `is_cuda_graph_enabled`, and the same
// said the other way round: `stream_cudagraph_enabled`,
// `cuda_graph_supported`, `cudagraph_capture_sizes`, `cuda_graph_bs`): a
// setting or a query a caller asks, not a step of a graph protocol a
// framework drives, so it is no evidence for the built-in conventions (a
// configured convention's protocol patterns are the user's word, and match
// as written).
var graphSwitchRE = regexp.MustCompile(`^_*(maybe_)?(enable|disable|toggle|use|uses|supports?|is|has|can|should|allow|force)_|_(enabled|disabled|supported|available|allowed|active|sizes?|bs|mode)$`)

// privateName: a method named with one leading underscore
// (`_expose_decoder_for_cuda_graph_helper`, `_setup_cuda_graphs`) is the
// class's own business, which its own code calls (a constructor's set-up
// step), not a step of a graph protocol that a framework drives: no
// evidence for the built-in conventions.
func privateName(n string) bool {
	return strings.HasPrefix(n, "_") && !strings.HasPrefix(n, "__")
}

// conventions: in a class that follows a graph protocol (its methods, own
// or inherited, match a Protocol pattern) and does not itself capture or
// replay, the Captured methods are captured and the ReplayPrep methods
// replay-prep.
func (a *analyser) conventions() {
	h := a.g.H
	// Graph runners (classes whose code captures or replays) and their
	// drivers (classes that call a runner's methods) are exempt: their
	// forward decides between capture, replay and eager; it is not the
	// captured code.
	runner := map[*index.Class]bool{}
	for _, r := range a.res.Regions {
		if k := r.Fn.Owner(); k != nil {
			runner[k] = true
		}
	}
	for _, r := range a.roots {
		if r.via != nil {
			if k := r.via.Owner(); k != nil {
				runner[k] = true
			}
		}
	}
	drivers := map[*index.Class]bool{}
	for _, f := range a.p.Files {
		for _, fn := range f.Funcs {
			k := fn.Owner()
			if k == nil || runner[k] {
				continue
			}
			for _, e := range a.g.Out[fn] {
				if c := e.Callee.Owner(); c != nil && runner[c] && e.Kind.Strength() >= flow.Annotated.Strength() {
					drivers[k] = true
				}
			}
		}
	}
	for k := range drivers {
		runner[k] = true
	}
	var capturing map[*index.Function]bool // runsCapture, made on first use
	for _, k := range a.p.Classes {
		exempt := false
		for _, m := range h.MRO(k) {
			if runner[m] {
				exempt = true
			}
		}
		if exempt {
			continue
		}
		for _, conv := range a.cfg.Conventions {
			proto := ""
			methods := map[string]*index.Function{}
			for _, m := range h.MRO(k) {
				for name, fn := range m.Methods {
					if _, ok := methods[name]; !ok {
						methods[name] = fn
					}
				}
			}
			names := make([]string, 0, len(methods))
			for n := range methods {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if matchAny(conv.Protocol, n) && !(a.builtinConventions && (graphSwitchRE.MatchString(n) || privateName(n))) {
					proto = n
					break
				}
			}
			if proto == "" {
				continue
			}
			for _, n := range names {
				fn := methods[n]
				why := fmt.Sprintf("convention %s: %s defines %s", conv.Name, k.Qual, proto)
				assumed := ""
				if a.builtinConventions {
					assumed = fmt.Sprintf("assumes %s runs %%s by the %s naming convention (%s defines %s)", fn.FullName(), conv.Name, k.Qual, proto)
				}
				if matchAny(conv.Captured, n) {
					if capturing == nil {
						capturing = a.runsCapture(flow.Annotated)
					}
					if capturing[fn] {
						// It runs a capture (its step goes to a graph
						// cache that captures or replays): a capture
						// cannot nest, so it is not captured code.
						continue
					}
					a.roots = append(a.roots, root{fn: fn, ctx: Captured, kind: flow.Resolved, why: why, assumed: fmt.Sprintf(assumed, "under capture")})
				} else if matchAny(conv.ReplayPrep, n) && !matchAny(conv.Captured, n) {
					a.roots = append(a.roots, root{fn: fn, ctx: ReplayPrep, kind: flow.Resolved, why: why, assumed: fmt.Sprintf(assumed, "between replays")})
				}
			}
		}
	}
}

// runsCapture: the functions that hold a capture region, and those that
// reach one by calls at least as sure as min: each runs a capture, and a
// capture cannot nest, so none runs under one.
//
// The capture regions are all found before any caller asks (findRegions),
// so each strength's set is walked once and kept.
func (a *analyser) runsCapture(min flow.EdgeKind) map[*index.Function]bool {
	if out, ok := a.capturing[min]; ok {
		return out
	}
	out := map[*index.Function]bool{}
	if a.capturing == nil {
		a.capturing = map[flow.EdgeKind]map[*index.Function]bool{}
	}
	a.capturing[min] = out
	var queue []*index.Function
	for _, r := range a.res.Regions {
		if r.Ctx == Captured && r.What != guardRegion && !out[r.Fn] {
			out[r.Fn] = true
			queue = append(queue, r.Fn)
		}
	}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		for _, e := range a.g.In[fn] {
			if !out[e.Caller] && e.Caller.Kind != index.TopLevel && e.Kind.Strength() >= min.Strength() {
				out[e.Caller] = true
				queue = append(queue, e.Caller)
			}
		}
	}
	return out
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if globMatch(p, name) {
			return true
		}
	}
	return false
}

// globMatch is path.Match(pattern, name) with its error dropped. The
// shapes entry points and kernel ops are written in, a literal, `*suffix`
// and `prefix*`, are matched directly (contexts asks every function and
// call of a project against every pattern); `*` matches a run of
// characters other than '/', as path.Match's does.
func globMatch(pattern, name string) bool {
	const meta = `*?[\`
	switch i := strings.IndexAny(pattern, meta); {
	case i < 0:
		return pattern == name
	case i == 0 && pattern[0] == '*' && strings.IndexAny(pattern[1:], meta) < 0:
		suffix := pattern[1:]
		return strings.HasSuffix(name, suffix) && strings.IndexByte(name[:len(name)-len(suffix)], '/') < 0
	case i == len(pattern)-1 && pattern[i] == '*':
		prefix := pattern[:i]
		return strings.HasPrefix(name, prefix) && strings.IndexByte(name[len(prefix):], '/') < 0
	}
	ok, _ := path.Match(pattern, name)
	return ok
}

// moduleNames are the dotted names a pattern's module part may match: the
// file's name relative to the working directory, and its import name
// under every package root.
func moduleNames(f *index.File) []string {
	out := []string{f.Name}
	var parts []string
	for m := f.Module; m != nil && isIdent(m.Name); m = m.Parent {
		parts = append([]string{m.Name}, parts...)
		out = append(out, strings.Join(parts, "."))
	}
	return out
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127 || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// EntryMatch matches "module:Qual" patterns (with * wildcards) against a
// function; the module part matches any of the file's dotted names or a
// dotted suffix of one.
func EntryMatch(pattern string, f *index.File, qual string) bool {
	i := strings.IndexByte(pattern, ':')
	if i < 0 {
		return false
	}
	mp, qp := pattern[:i], pattern[i+1:]
	if !globMatch(qp, qual) && qp != qual {
		return false
	}
	for _, m := range moduleNames(f) {
		if globMatch(mp, m) || mp == m || strings.HasSuffix(m, "."+mp) {
			return true
		}
	}
	return false
}

// entries roots the configured and preset entry points.
func (a *analyser) entries() {
	for _, f := range a.p.Files {
		for _, fn := range f.Funcs {
			if fn.Kind != index.Def {
				continue
			}
			for _, set := range []struct {
				pats []string
				ctx  Context
			}{{a.cfg.Captured, Captured}, {a.cfg.ReplayPrep, ReplayPrep}, {a.cfg.PostCapture, PostCapture}} {
				for _, p := range set.pats {
					if EntryMatch(p, f, fn.Qual) {
						a.matched[p] = true
						if fw, ok := a.cfg.Namesakes[p]; ok && namesakePattern(p) && fn.Class != nil && a.g.H.NeverDerives(fn.Class, fw) {
							continue // a namesake of the framework's class, provably not one
						}
						assumed := ""
						if a.builtin[p] && namesakePattern(p) {
							// A preset's pattern for any module's classes
							// named like the framework's (`*:*Attention.forward`):
							// the framework's class, or only a namesake.
							assumed = fmt.Sprintf("assumes %s is the framework's: it matches the preset pattern %s by name only", fn.FullName(), p)
						}
						if set.ctx == PostCapture && a.cfg.OnReload[p] && assumed == "" {
							// A load hook (process_weights_after_loading):
							// it runs before any capture, and after one only
							// when weights are reloaded.
							assumed = fmt.Sprintf("assumes weights are reloaded into the live engine after its graphs are captured: %s runs when weights are loaded, before any capture, and after it only on a reload", fn.FullName())
						}
						a.roots = append(a.roots, root{fn: fn, ctx: set.ctx, kind: flow.Resolved, why: "entry point " + p, assumed: assumed})
					}
				}
			}
		}
	}
}

// rpcTargets roots, in the post-capture context, the project methods a
// framework's remote-call API runs by name (`llm.collective_rpc("reload")`
// runs each worker's `reload`): the methods of that name outside tests. A
// name matches a method by its name alone, so the root says what it
// assumed (its findings are warnings).
func (a *analyser) rpcTargets() {
	if len(a.cfg.PostCaptureRPC) == 0 {
		return
	}
	rpc := map[string]bool{}
	for _, m := range a.cfg.PostCaptureRPC {
		rpc[m] = true
	}
	names := map[string]string{} // target name -> the call that names it
	for _, f := range a.p.Files {
		if f.Tree == nil || f.Tree.Root == nil {
			continue
		}
		mentions := false
		for m := range rpc {
			mentions = mentions || bytes.Contains(f.Src, []byte(m))
		}
		if !mentions {
			continue
		}
		var calls []*Node
		syntax.Walk(f.Tree.Root, func(n *Node) bool {
			if n.Kind() == "call" {
				calls = append(calls, n)
			}
			return true
		})
		for _, call := range calls {
			fun := syntax.Unparen(call.Get("function"))
			if fun == nil || fun.Kind() != "attribute" || !rpc[fun.Get("attribute").Text(f.Src)] {
				continue
			}
			args := call.Get("arguments")
			if args == nil || len(args.NamedChildren()) == 0 {
				continue
			}
			// The method: the first argument, or `method=` (the
			// documented parameter's name).
			first := syntax.Unparen(args.NamedChildren()[0])
			for _, a := range args.NamedChildren() {
				if a.Kind() == "keyword_argument" && a.Get("name").Text(f.Src) == "method" {
					first = syntax.Unparen(a.Get("value"))
				}
			}
			if first == nil || first.Kind() != "string" {
				continue
			}
			name := strings.Trim(first.Text(f.Src), "\"'")
			if name == "" || strings.ContainsAny(name, " .{}") {
				continue
			}
			if _, ok := names[name]; !ok {
				names[name] = fmt.Sprintf("%s(%q) in %s, line %d", fun.Get("attribute").Text(f.Src), name, f.Name, f.Line(call))
			}
		}
	}
	if len(names) == 0 {
		return
	}
	for _, f := range a.p.Files {
		if testPath(f.Path) {
			continue
		}
		for _, fn := range f.Funcs {
			why, ok := names[fn.Name]
			if !ok || fn.Kind != index.Def || fn.Class == nil {
				continue
			}
			a.roots = append(a.roots, root{fn: fn, ctx: PostCapture, kind: flow.Resolved, why: "remote call " + why,
				assumed: fmt.Sprintf("assumes %s is what %s runs on the workers: it matches by its name only", fn.FullName(), why)})
		}
	}
}

// scriptEntry: fn is a program's code, not a library's API that a caller
// may capture: a module-level `main` (Python's program entry, the target of
// console scripts), or a function every call of which comes from its own
// file's `if __name__ == "__main__":` block or from such a function of the
// same file (a library function another file's script calls stays API).
func (a *analyser) scriptEntry(fn *index.Function, seen map[*index.Function]bool) bool {
	if fn.Name == "main" && fn.Class == nil && fn.Outer != nil && fn.Outer.Kind == index.TopLevel {
		return true
	}
	in := a.g.In[fn]
	if len(in) == 0 || seen[fn] {
		return false
	}
	seen[fn] = true
	for _, e := range in {
		if e.Caller == nil || e.Site == nil || e.Caller.File != fn.File {
			return false
		}
		if e.Caller.Kind == index.TopLevel {
			if !a.programSite(e.Site, e.Caller.File) {
				return false
			}
			continue
		}
		if !a.scriptEntry(e.Caller, seen) {
			return false
		}
	}
	return true
}

// underMainGuard: n is inside `if __name__ == "__main__":`.
// scriptModule: f's top-level code parses the command line
// (`parser.parse_args()`, `parse_known_args()`, argparse's documented
// API, outside any def or class): importing it would parse the importer's
// arguments, so it is a script, not a library module, and what its
// top-level code calls is its program, as a `__main__` block's is.
func scriptModule(f *index.File) bool {
	if f.Tree == nil || f.Tree.Root == nil || !bytes.Contains(f.Src, []byte("parse_")) {
		return false
	}
	found := false
	syntax.Walk(f.Tree.Root, func(n *Node) bool {
		if found || n.Is("function_definition", "class_definition", "decorated_definition", "lambda") {
			return false
		}
		if n.Kind() == "if_statement" && mainGuard(n, f.Src) {
			return false
		}
		if n.Kind() == "call" {
			if fn := syntax.Unparen(n.Get("function")); fn != nil && fn.Kind() == "attribute" {
				switch fn.Get("attribute").Text(f.Src) {
				case "parse_args", "parse_known_args":
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// programSite: module-level call site n of f runs as a program: under
// `if __name__ == "__main__":`, or anywhere in a script module
// (scriptModule, worked out once a file).
func (a *analyser) programSite(n *Node, f *index.File) bool {
	if underMainGuard(n, f.Src) {
		return true
	}
	if a.scripts == nil {
		a.scripts = map[*index.File]bool{}
	}
	v, ok := a.scripts[f]
	if !ok {
		v = scriptModule(f)
		a.scripts[f] = v
	}
	return v
}

func underMainGuard(n *Node, src []byte) bool {
	for x := n.Parent(); x != nil; x = x.Parent() {
		if x.Kind() == "if_statement" && mainGuard(x, src) {
			return true
		}
	}
	return false
}

// namesakePattern: an entry pattern for any module ("*:") whose class part
// is a name fragment with a wildcard (`*Attention`, `*Impl`): it matches
// classes by their names alone. A hook method's name on any class
// (`*:*.process_weights_after_loading`) is the framework's protocol, not a
// namesake.
func namesakePattern(p string) bool {
	if !strings.HasPrefix(p, "*:") {
		return false
	}
	q := p[2:]
	i := strings.LastIndexByte(q, '.')
	if i < 0 {
		return false
	}
	cls := q[:i]
	return cls != "*" && strings.ContainsAny(cls, "*?[")
}

// traced roots the functions a capture map recorded; names that resolve
// to nothing are stale.
func (a *analyser) traced() {
	byName := map[string]*index.Function{}
	byPathQual := map[string]*index.Function{}
	for _, f := range a.p.Files {
		for _, fn := range allFuncs(f) {
			byName[fn.FullName()] = fn
			byPathQual[f.Abs+":"+fn.Qual] = fn
		}
	}
	find := func(r TracedRecord) *index.Function {
		if r.Path != "" {
			p := r.Path
			if !filepath.IsAbs(p) && a.cfg.CWD != "" {
				p = filepath.Join(a.cfg.CWD, p)
			}
			if fn := byPathQual[filepath.Clean(p)+":"+r.Qual]; fn != nil {
				return fn
			}
		}
		if r.Name != "" {
			return byName[r.Name]
		}
		return nil
	}
	for _, r := range a.cfg.Traced {
		fn := find(r)
		if fn == nil {
			a.res.Stale = append(a.res.Stale, r)
			continue
		}
		var pre []*index.Function
		for _, s := range r.Stack {
			if g := byName[s]; g != nil && g != fn {
				pre = append(pre, g)
			}
		}
		a.roots = append(a.roots, root{fn: fn, ctx: r.Ctx, kind: flow.Traced, why: "recorded by capguard trace", pre: pre})
	}
}

func (a *analyser) tracedCapture() bool {
	for _, r := range a.cfg.Traced {
		if r.Ctx == Captured {
			return true
		}
	}
	return false
}

// Launches reports whether a call launches a GPU kernel: a Triton launch
// `kernel[grid](...)` (the subscripted value is a @triton.jit function, or
// of unknown origin and named like a kernel, or in a file that imports
// triton), `torch.ops.*`, a configured extension op, or an op of a CUDA
// extension the project builds (a declared module's globs are among
// kernelOps; a run-time load's module is a value: torchapi.
// CUDAExtensionModule).
func Launches(g *flow.Graph, kernelOps []string, f *index.File, call *Node) (string, bool) {
	callee := syntax.Unparen(call.Get("function"))
	if callee == nil {
		return "", false
	}
	if callee.Kind() == "subscript" {
		v := syntax.Unparen(callee.Get("value"))
		if v == nil {
			return "", false
		}
		if !v.Is("identifier", "attribute") {
			// `torch.library.wrap_triton(kernel)[grid](...)`: what the
			// value holds decides (a transparent wrapper holds the kernel).
			for x := range g.ValuesUnordered(v) {
				if x.Kind == flow.VKernel {
					return v.Text(f.Src), true
				}
			}
			return "", false
		}
		name := v.Text(f.Src)
		// Yes-or-no questions of the sets: unordered (Graph.ValuesUnordered).
		nvals := 0
		for x := range g.ValuesUnordered(v) {
			nvals++
			if x.Kind == flow.VKernel {
				return name, true
			}
		}
		// `compiled[key](...)`: an element that a kernel compiler made.
		for x := range g.ValuesUnordered(callee) {
			if x.Kind == flow.VKernel || x.Kind == flow.VExtInst && torchapi.CompiledKernel(x.Ext) {
				return callee.Text(f.Src), true
			}
		}
		for x := range g.ValuesUnordered(v) {
			switch x.Kind {
			case flow.VFunc, flow.VBound, flow.VClass, flow.VInst, flow.VCont, flow.VModule, flow.VTensor:
				return "", false // a project object: not a kernel
			}
		}
		last := name[strings.LastIndexByte(name, '.')+1:]
		if f.Kernels[last] || strings.Contains(strings.ToLower(last), "kernel") {
			return name, true
		}
		if _, ok := f.Imports["triton"]; ok && nvals == 0 {
			return name, true
		}
		return "", false
	}
	if callee.Kind() == "attribute" {
		// An op of a compiled CUDA extension that a run-time load
		// returned (torchapi.ExtensionLoaders).
		for x := range g.ValuesUnordered(callee.Get("object")) {
			if x.Kind == flow.VExtInst && x.Ext == torchapi.CUDAExtensionModule {
				return callee.Text(f.Src), true
			}
		}
	}
	var names []string
	for x := range g.ValuesUnordered(callee) {
		switch x.Kind {
		case flow.VExt:
			names = append(names, x.Ext)
		case flow.VKernel:
			// A kernel DSL's host-side function called directly (CuTe DSL's
			// `@cute.jit`, a `@tilelang.jit` kernel builder).
			return callee.Text(f.Src), true
		case flow.VExtInst:
			if torchapi.CompiledKernel(x.Ext) {
				return callee.Text(f.Src), true // what a kernel compiler made
			}
		}
	}
	if q := f.Qualify(callee); q != "" {
		names = append(names, q)
	}
	for _, q := range names {
		if strings.HasPrefix(q, "torch.ops.") {
			return callee.Text(f.Src), true
		}
		for _, pat := range kernelOps {
			if globMatch(pat, q) {
				return callee.Text(f.Src), true
			}
		}
	}
	return "", false
}

// launchers: in a project that never captures, the public functions from
// which a kernel launch is reached are roots (its callers may capture
// them); never those of tests, benchmarks and examples, which are callers,
// not the library.
//
// api restricts them to a project that captures some of its code itself,
// visibly (a capture region or a root the analysis follows), so that what
// it captures is known: there only the launchers that are a package's API
// for callers outside are roots (a kernel library beside an engine's own
// capture): top-level functions a package's __init__.py re-exports that no
// code of the project calls (outside tests, benchmarks and examples) and
// that reach a launch by resolved calls inside their own module. The
// launchers the project calls itself run where its own code puts them.
func (a *analyser) launchers(api bool) {
	for _, fn := range a.launcherCandidates(api) {
		a.roots = append(a.roots, root{fn: fn, ctx: Launcher, kind: flow.Resolved, why: "public function of a library that launches kernels"})
	}
}

// launcherCandidates are launchers' roots (api as there), sorted by name:
// also the callables a capture of its callers' callables may be given
// (callers.go).
func (a *analyser) launcherCandidates(api bool) []*index.Function {
	direct := a.directLaunchers()
	// Backwards: every function that reaches a launch (for the API of a
	// project that captures, by resolved calls inside one module only: the
	// launch is the API module's own, not one that a guessed, declared-type
	// or registry-wide edge leads to).
	reaches := map[*index.Function]bool{}
	var queue []*index.Function
	for fn := range direct {
		reaches[fn] = true
		queue = append(queue, fn)
	}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		for _, e := range a.g.In[fn] {
			if !reaches[e.Caller] && e.Caller.Kind != index.TopLevel && (!api || e.Kind == flow.Resolved && e.Caller.File == fn.File) {
				reaches[e.Caller] = true
				queue = append(queue, e.Caller)
			}
		}
	}
	// A function that runs a capture of its own (a benchmarking function's
	// capture, which is no evidence against library mode: library.go) and
	// its callers are not captured by a caller: a capture cannot nest.
	capturing := a.runsCapture(flow.Resolved)
	exported := a.exportedFuncs()
	program := a.programFuncs()
	remote := a.remoteCode()
	entries := a.processEntries()
	listed := a.allListed()
	var fns []*index.Function
	for fn := range reaches {
		if !TestFile(fn.File) && !capturing[fn] && !benchmarkFunc(fn) && !program[fn] && !remote[fn] && !entries[fn] && !constructor(fn) && !iterated(fn) && !fn.Async && !a.selfTest(fn) && (a.registered(fn) || (public(fn) || listed[fn]) && (!api || exported[fn] && !a.calledInProject(fn))) && !a.driverBarrier(fn) {
			fns = append(fns, fn)
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].FullName() < fns[j].FullName() })
	return fns
}

// directLaunchers are the functions whose own body launches a kernel,
// worked out once (launchers and callersCallables both ask), a file to a
// core: Launches reads the syntax and the solved graph, which the rules
// read on every core too.
func (a *analyser) directLaunchers() map[*index.Function]bool {
	if a.direct != nil {
		return a.direct
	}
	files := a.p.Files
	per := make([][]*index.Function, len(files))
	par.Do(len(files), func(i int) {
		f := files[i]
		for _, fn := range f.Funcs {
			for _, call := range callsIn(fn.BodyStmts()) {
				if _, ok := Launches(a.g, a.cfg.KernelOps, f, call); ok {
					per[i] = append(per[i], fn)
					break
				}
			}
		}
	})
	a.direct = map[*index.Function]bool{}
	for _, fns := range per {
		for _, fn := range fns {
			a.direct[fn] = true
		}
	}
	return a.direct
}

// programFuncs is programCode of the exported functions, worked out once
// (captureEvidence and launchers both ask).
func (a *analyser) programFuncs() map[*index.Function]bool {
	if a.program == nil {
		a.program = a.programCode(a.exportedFuncs())
	}
	return a.program
}

// programCode: the functions a package's own programs run — the script
// entries (scriptEntry) in its files and what they call, by resolved or
// declared-type edges, inside the same package (the outermost folder with
// an __init__.py that holds the entry: outerPackage), outside tests,
// benchmarks and examples — less the API a package's __init__.py
// re-exports. The package's program decides where they run (eagerly,
// unless its own capture says otherwise): they are not a library's API
// that a caller may capture. A script beside the package (in no package,
// or another one) is a caller of its API like any other.
func (a *analyser) programCode(exported map[*index.Function]bool) map[*index.Function]bool {
	out := map[*index.Function]bool{}
	pkgs := map[*index.File]*index.Module{} // outerPackage, per file
	pkgOf := func(f *index.File) *index.Module {
		m, ok := pkgs[f]
		if !ok {
			m = outerPackage(f)
			pkgs[f] = m
		}
		return m
	}
	var queue []*index.Function
	reach := func(fn *index.Function, pkg *index.Module) {
		if !out[fn] && !TestFile(fn.File) && pkgOf(fn.File) == pkg {
			out[fn] = true
			queue = append(queue, fn)
		}
	}
	entry := map[*index.Function]bool{}
	for _, f := range a.p.Files {
		if TestFile(f) {
			continue
		}
		pkg := pkgOf(f)
		if f.Top != nil {
			// The module-level code (index keeps it in Top, not Funcs): what
			// its program sites call, in this file or another of the package.
			for _, e := range a.g.Out[f.Top] {
				if e.Site != nil && a.programSite(e.Site, f) && e.Kind.Strength() >= flow.Annotated.Strength() {
					reach(e.Callee, pkg)
				}
			}
		}
		for _, fn := range f.Funcs {
			if a.scriptEntry(fn, map[*index.Function]bool{}) {
				entry[fn] = true
				reach(fn, pkg)
			}
		}
	}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		pkg := pkgOf(fn.File)
		for _, e := range a.g.Out[fn] {
			if e.Kind.Strength() >= flow.Annotated.Strength() {
				reach(e.Callee, pkg)
			}
		}
	}
	// A function that code outside the package's programs also calls (the
	// package's API, or a library function a script beside the package
	// uses) is not only the program's: drop it, until every function left
	// is an entry or called only by those left (tests aside).
	for changed := true; changed; {
		changed = false
		for fn := range out {
			if entry[fn] {
				continue
			}
			for _, e := range a.g.In[fn] {
				if e.Caller == fn || TestFile(e.Caller.File) {
					continue
				}
				same := pkgOf(e.Caller.File) == pkgOf(fn.File)
				if e.Caller.Kind == index.TopLevel && e.Site != nil && a.programSite(e.Site, e.Caller.File) && same {
					continue
				}
				if !out[e.Caller] || !same {
					delete(out, fn)
					changed = true
					break
				}
			}
		}
	}
	for fn := range exported {
		delete(out, fn)
	}
	return out
}

// remoteCode: the functions that run in another process, called through a
// remote-call framework's RPC (torchapi.RemoteCall): remote functions and
// the methods an actor class defines, made with `@ray.remote` or by
// passing the function or class to `ray.remote(...)` or to what it
// returns. A capture is one process's stream: no caller's capture holds
// them, so they are not a library's API that a caller may capture.
func (a *analyser) remoteCode() map[*index.Function]bool {
	out := map[*index.Function]bool{}
	classes := map[*index.Class]bool{}
	isMaker := func(f *index.File, e *Node) bool {
		e = syntax.Unparen(e)
		if e == nil {
			return false
		}
		if e.Kind() == "call" { // ray.remote(num_gpus=1)(Cls)
			e = syntax.Unparen(e.Get("function"))
		}
		for _, d := range a.externalsOf(f, e) {
			if strings.TrimSuffix(d, "()") == torchapi.RemoteCall.Decorator {
				return true
			}
		}
		return false
	}
	mark := func(f *index.File, e *Node) {
		sym := a.p.ResolveExpr(f, syntax.Unparen(e))
		switch {
		case sym.Kind == index.SymClass && sym.Class != nil:
			classes[sym.Class] = true
		case sym.Func != nil:
			out[sym.Func] = true
		}
	}
	for _, f := range a.p.Files {
		if f.Tree == nil || !bytes.Contains(f.Src, []byte(torchapi.RemoteCall.Decorator)) {
			continue
		}
		for _, fn := range f.Funcs {
			for _, d := range fn.Decorators {
				if isMaker(f, index.DecoratorTarget(d)) {
					out[fn] = true
				}
			}
		}
		for _, c := range f.Classes {
			for _, d := range c.Decorators {
				if isMaker(f, index.DecoratorTarget(d)) {
					classes[c] = true
				}
			}
		}
		syntax.Walk(f.Tree.Root, func(n *Node) bool {
			if n.Kind() != "call" || !isMaker(f, n.Get("function")) {
				return true
			}
			if al := n.Get("arguments"); al != nil {
				for _, x := range al.NamedChildren() {
					if x.Kind() != "keyword_argument" && x.Kind() != "comment" {
						mark(f, x)
						break
					}
				}
			}
			return true
		})
	}
	for _, f := range a.p.Files {
		for _, fn := range f.Funcs {
			if fn.Class != nil && classes[fn.Class] {
				out[fn] = true
			}
		}
	}
	return out
}

// processEntries: the functions handed to a process or thread launcher
// as the entry of another process or thread (torchapi.ProcessStarters):
// `Process(target=f)`, `Thread(target=f)`, also through a multiprocessing
// context (`mp.get_context("spawn").Process(target=f)`), and
// `torch.multiprocessing.spawn(f, ...)`. The entry runs its own process's
// or thread's work (a worker's or a server's loop): no caller's capture,
// one stream of the calling thread, holds it.
func (a *analyser) processEntries() map[*index.Function]bool {
	a.scanEntries()
	return a.procEntries
}

// testedEntries are processEntries together with the entries tests start
// (a test's spawned worker): each runs once in the process it starts
// (runsOnce).
func (a *analyser) testedEntries() map[*index.Function]bool {
	a.scanEntries()
	return a.testEntries
}

// scanEntries finds, in one pass over the files, the process and thread
// entries that the project's code outside tests hands to a launcher
// (procEntries) and those any file's code does (testEntries).
func (a *analyser) scanEntries() {
	if a.procEntries != nil {
		return
	}
	a.procEntries, a.testEntries = map[*index.Function]bool{}, map[*index.Function]bool{}
	for _, f := range a.p.Files {
		if f.Tree == nil || !bytes.Contains(f.Src, []byte("Process")) && !bytes.Contains(f.Src, []byte("Thread")) && !bytes.Contains(f.Src, []byte("spawn")) && !bytes.Contains(f.Src, []byte("start_processes")) {
			continue
		}
		outs := []map[*index.Function]bool{a.testEntries}
		if !TestFile(f) {
			outs = append(outs, a.procEntries)
		}
		for _, fn := range allFuncs(f) {
			for _, call := range callsIn(fn.BodyStmts()) {
				a.markEntries(fn, call, outs)
			}
		}
	}
}

// markEntries adds to each of outs the functions call, in fn, hands to a
// process or thread launcher as the entry.
func (a *analyser) markEntries(fn *index.Function, call *Node, outs []map[*index.Function]bool) {
	al := call.Get("arguments")
	if al == nil {
		return
	}
	class, fun := a.processStarter(fn, call.Get("function"))
	if !class && !fun {
		return
	}
	src := fn.File.Src
	var given []*Node
	if ps := positional(al); fun && len(ps) > 0 {
		given = append(given, ps[0])
	}
	for _, x := range al.NamedChildren() {
		if x.Kind() != "keyword_argument" {
			continue
		}
		if k := x.Get("name").Text(src); class && k == "target" || fun && k == "fn" {
			given = append(given, x.Get("value"))
		}
	}
	for _, e := range given {
		for _, v := range a.g.Values(syntax.Unparen(e)) {
			if v.Fn != nil && v.Edge.Strength() >= flow.Annotated.Strength() {
				for _, out := range outs {
					out[v.Fn] = true
				}
			}
		}
	}
}

// processStarter: callee is a process or thread launcher
// (torchapi.ProcessStarters): a class whose `target=` is the entry, or a
// function whose first argument is.
func (a *analyser) processStarter(fn *index.Function, callee *Node) (class, fun bool) {
	f := fn.File
	callee = syntax.Unparen(callee)
	if callee == nil {
		return false, false
	}
	names := a.externalsOf(f, callee)
	if callee.Kind() == "attribute" {
		// `ctx.Process(target=f)` where ctx = mp.get_context("spawn"):
		// the outside name of the call the receiver is bound to once.
		if obj := syntax.Unparen(callee.Get("object")); obj != nil && obj.Kind() == "identifier" {
			if b := onlyBinding(fn, obj, f.Src); b != nil && b.Kind() == "call" {
				for _, d := range a.externalsOf(f, b.Get("function")) {
					names = append(names, d+"."+callee.Get("attribute").Text(f.Src))
				}
			}
		}
	}
	for _, d := range names {
		d = strings.ReplaceAll(d, "()", "")
		if torchapi.ProcessStarters.Funcs[d] {
			return false, true
		}
		i := strings.LastIndexByte(d, '.')
		if i < 0 || !torchapi.ProcessStarters.Classes[d[i+1:]] {
			continue
		}
		for _, m := range torchapi.ProcessStarters.Modules {
			if strings.HasPrefix(d, m+".") {
				return true, false
			}
		}
	}
	return false, false
}

// selfTest: fn is named as a test (pytest's default `test` prefix for
// functions, and for methods of a `Test` class) and no project code calls
// it (tests aside): a module's self-test, run by hand or by a test runner,
// which no caller captures. A public function with such a name that the
// project calls is a helper and stays a root.
func (a *analyser) selfTest(fn *index.Function) bool {
	if !strings.HasPrefix(fn.Name, "test") {
		return false
	}
	if fn.Class != nil && !strings.HasPrefix(fn.Class.Name, "Test") {
		return false
	}
	return !a.calledInProject(fn)
}

// outerPackage is the outermost package (a folder with an __init__.py)
// that holds f, or f's own module when no package does.
func outerPackage(f *index.File) *index.Module {
	var top *index.Module
	for m := f.Module; m != nil; m = m.Parent {
		if m.IsDir && m.Regular() {
			top = m
		}
	}
	if top == nil {
		return f.Module
	}
	return top
}

// registered: fn is an operator's implementation registered through
// torch.library (torchapi.OpRegistration): passed to `lib.impl(name, fn,
// key)` (flow's Graph.Registered) or decorated with `torch.library.impl`,
// `register_kernel` or `custom_op`. It runs wherever the operator runs,
// whatever its name.
func (a *analyser) registered(fn *index.Function) bool {
	if a.g.Registered[fn] {
		return true
	}
	for _, d := range fn.Decorators {
		e := index.DecoratorTarget(d)
		if e == nil {
			continue
		}
		if sym := a.p.ResolveExpr(fn.File, e); sym.Kind == index.SymExternal {
			if i, ok := torchapi.OpRegistration[sym.External]; ok && i < 0 {
				return true
			}
		}
	}
	return false
}

// exportedFuncs are the top-level functions that a package's __init__.py
// (outside tests, benchmarks and examples) imports under their own name:
// `from .interface import flash_fwd`.
func (a *analyser) exportedFuncs() map[*index.Function]bool {
	out := map[*index.Function]bool{}
	for _, f := range a.p.Files {
		if TestFile(f) || filepath.Base(f.Path) != "__init__.py" {
			continue
		}
		for name := range f.Imports {
			if fn := a.topLevelFunc(f, name); fn != nil {
				out[fn] = true
			}
		}
	}
	return out
}

// topLevelFunc is the module-level function that name in f resolves to
// under its own name (defined there or imported), or nil.
func (a *analyser) topLevelFunc(f *index.File, name string) *index.Function {
	fn := a.p.ResolveName(f, name).Func
	if fn == nil || fn.Name != name || fn.Class != nil || fn.Outer == nil || fn.Outer.Kind != index.TopLevel {
		return nil
	}
	return fn
}

// allListed: the top-level functions a module's literal `__all__` names
// (outside tests, benchmarks and examples), its own or imported ones: the
// module's declared public API, whatever the spelling of the name (an op
// library's `_safe_softmax` or `_unique2`, which mirror torch's own
// underscored ops; `_quantize_then_scaled_grouped_mm` that a package's
// `__all__` exports). public leaves them out by their leading underscore.
func (a *analyser) allListed() map[*index.Function]bool {
	out := map[*index.Function]bool{}
	for _, f := range a.p.Files {
		if TestFile(f) {
			continue
		}
		for _, name := range f.All {
			if fn := a.topLevelFunc(f, name); fn != nil && fn.Kind == index.Def && !fn.Kernel {
				out[fn] = true
			}
		}
	}
	return out
}

// calledInProject: code of the project outside tests, benchmarks and
// examples calls fn (by any edge, a guess by name too).
func (a *analyser) calledInProject(fn *index.Function) bool {
	for _, e := range a.g.In[fn] {
		if e.Caller != fn && !TestFile(e.Caller.File) {
			return true
		}
	}
	return false
}

// Public is public: a function callers outside the project may call.
func Public(fn *index.Function) bool { return public(fn) }

// public: a top-level function or a method of a top-level class, with no
// leading underscore on either name (dunders of a public class count).
// constructor: fn builds or ends an object (`__init__`, `__new__`,
// `__post_init__`, `__del__`): set-up an engine runs before it captures
// the object's methods, not a call its capture makes. What a constructor
// launches is captured where a captured function builds the object.
func constructor(fn *index.Function) bool {
	if fn.Class == nil {
		return false
	}
	switch fn.Name {
	case "__init__", "__new__", "__post_init__", "__del__":
		return true
	}
	return false
}

// iterated: a generator function (a `yield` in its own body) that no
// context-manager decorator wraps. Calling it runs none of its body: it
// returns a generator object, so a caller's capture around the call
// captures nothing, and the body runs as the caller iterates, host code
// that drives the steps (a streaming generation loop). It is no launcher
// root; what it calls stays one where it is API itself. A context
// manager's body runs up to its yield on entry, inside the caller's block.
func iterated(fn *index.Function) bool {
	if !fn.Generator {
		return false
	}
	for _, d := range fn.Decorators {
		if strings.Contains(d.Text(fn.File.Src), "contextmanager") {
			return false
		}
	}
	return true
}

// moduleSetup: fn is the constructor of a project torch module class. A
// module is built once, its parameters and buffers registered and its
// submodules made, before anything runs it; what a caller captures is its
// forward. So library mode, which assumes a caller captures the public
// function it starts from, does not follow a call into the construction
// of a module (a `build()` that makes the model, a loader that wraps one):
// that is set-up. Where a capture region itself makes a module, the
// captured context follows the call as before.
func (a *analyser) moduleSetup(fn *index.Function) bool {
	return fn.Name == "__init__" && fn.Class != nil && a.g.H != nil && a.g.H.IsModule(fn.Class)
}

// hostDriver: fn runs a loop whose exit the data decides, read back from
// the device: a `break` or `return` under an `if` whose condition (or a
// `while` condition) turns a tensor into a host value (`if tok.item() ==
// eos: break`, `if (out == eos).all(): break`, `while not done.any():`).
// A capture replays a fixed sequence of kernels, so no caller captures a
// loop whose length the data decides: such a function is a host driver (a
// generation loop, an iterative calibration), and the capturable unit is
// the step it calls, a root of its own where it is API. A tensor's shape,
// dtype or device, its length, and an `is None` test read nothing.
func (a *analyser) hostDriver(fn *index.Function) bool {
	if fn.Body == nil || fn.Kind != index.Def {
		return false
	}
	found := false
	var read map[string]bool
	for _, st := range fn.BodyStmts() {
		syntax.Walk(st, func(n *Node) bool {
			if found || n.Is("function_definition", "class_definition", "decorated_definition", "lambda") {
				return false
			}
			if n.Is("for_statement", "while_statement") && read == nil {
				read = a.hostReadLocals(fn)
			}
			if n.Is("for_statement", "while_statement") && a.dataExit(fn, n, read) {
				found = true
			}
			return !found
		})
	}
	return found
}

// driverBarrier: fn is a host driver whose own code launches no kernel.
// As it is no launcher root, the launcher context does not enter it from
// a caller either: a capture replays a fixed sequence of kernels, so the
// caller that reaches a generation loop is no more captured than the loop
// is. The step the loop calls is a root of its own where it is API.
func (a *analyser) driverBarrier(fn *index.Function) bool {
	if b, ok := a.drivers[fn]; ok {
		return b
	}
	if a.drivers == nil {
		a.drivers = map[*index.Function]bool{}
	}
	b := !a.directLaunchers()[fn] && a.hostDriver(fn)
	a.drivers[fn] = b
	return b
}

// dataExit: loop has an exit decided by a device value read on the host
// (hostDriver), and its body calls something.
func (a *analyser) dataExit(fn *index.Function, loop *Node, read map[string]bool) bool {
	body := loop.Get("body")
	if body == nil || len(callsIn([]*Node{body})) == 0 {
		return false
	}
	if loop.Kind() == "while_statement" && a.readsDevice(fn, loop.Get("condition"), read) {
		return true
	}
	found := false
	syntax.Walk(body, func(n *Node) bool {
		if found || n.Is("function_definition", "class_definition", "decorated_definition", "lambda") {
			return false
		}
		if !n.Is("break_statement", "return_statement") {
			return true
		}
		if n.Kind() == "break_statement" {
			// A break leaves the nearest loop: it must be this one.
			for q := n.Parent(); q != nil && q != loop; q = q.Parent() {
				if q.Is("for_statement", "while_statement") {
					return false
				}
			}
		}
		for q := n.Parent(); q != nil && q != loop; q = q.Parent() {
			if q.Is("if_statement", "elif_clause") && a.readsDevice(fn, q.Get("condition"), read) {
				found = true
				break
			}
		}
		return false
	})
	return found
}

// readsDevice: condition c reads a tensor's data on the host: a host read
// method, or a tensor the points-to analysis gives (not a metadata read,
// len, an identity or isinstance test).
func (a *analyser) readsDevice(fn *index.Function, c *Node, read map[string]bool) bool {
	if c == nil {
		return false
	}
	src := fn.File.Src
	found := false
	syntax.Walk(c, func(n *Node) bool {
		if found || n.Is("lambda") {
			return false
		}
		if len(read) > 0 && n.Kind() == "identifier" && read[n.Text(src)] && syntax.NameRef(n) {
			found = true
			return false
		}
		switch n.Kind() {
		case "comparison_operator":
			if strings.Contains(n.Text(src), " is ") {
				return false
			}
		case "call":
			f := syntax.Unparen(n.Get("function"))
			if f == nil {
				return true
			}
			if f.Kind() == "identifier" && (f.Text(src) == "len" || f.Text(src) == "isinstance" || f.Text(src) == "hasattr") {
				return false
			}
			if len(read) > 0 && !(f.Kind() == "identifier" && torchapi.ValueBuiltins[f.Text(src)]) {
				// A host value passed to a function is no longer the
				// value read: what the function returns is not known to
				// come from it. The call itself may still read.
				found = a.readsDevice(fn, n, nil)
				if obj := f.Get("object"); !found && f.Kind() == "attribute" && !a.readsDevice(fn, obj, nil) {
					found = a.readsDevice(fn, obj, read) // a host value's method: `s.strip()`
				}
				return false
			}
			if f.Kind() == "attribute" {
				name := f.Get("attribute").Text(src)
				if torchapi.MetaMethods[name] {
					return false
				}
				if torchapi.HostReads[name] && !a.notTensor(f.Get("object")) {
					found = true
					return false
				}
			}
		case "attribute":
			if torchapi.MetaAttrs[n.Get("attribute").Text(src)] {
				return false
			}
		}
		if metaRead(n, src) {
			return false
		}
		if n.Is("identifier", "attribute", "subscript", "call") && a.tensorValued(n) {
			found = true
			return false
		}
		return true
	})
	return found
}

// hostReadLocals are fn's local names bound from a device value read on
// the host, or from such a local (holdsRead): `tok = x.item()`, `for tok
// in ids.tolist():`, `done[i] = tok == eos` (an element stored marks the
// container). A loop whose exit tests one (`if all(done): break`) is
// decided by the data as much as one that reads the tensor in its
// condition. The names are fn's own, wherever they are bound in it, so a
// name bound once from a read and once from a constant counts as read.
func (a *analyser) hostReadLocals(fn *index.Function) map[string]bool {
	src := fn.File.Src
	read := map[string]bool{}
	mark := func(target *Node) bool {
		added := false
		var names func(t *Node)
		names = func(t *Node) {
			t = syntax.Unparen(t)
			if t == nil {
				return
			}
			switch t.Kind() {
			case "identifier":
				if !read[t.Text(src)] {
					read[t.Text(src)] = true
					added = true
				}
			case "subscript":
				names(t.Get("value"))
			case "pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern", "tuple", "list":
				for _, c := range t.NamedChildren() {
					names(c)
				}
			}
		}
		names(target)
		return added
	}
	for round := 0; round < 8; round++ {
		changed := false
		for _, st := range fn.BodyStmts() {
			syntax.Walk(st, func(n *Node) bool {
				if n.Is("function_definition", "class_definition", "decorated_definition", "lambda") {
					return false
				}
				var target, value *Node
				switch n.Kind() {
				case "assignment", "augmented_assignment":
					target, value = n.Get("left"), n.Get("right")
				case "for_statement":
					target, value = n.Get("left"), n.Get("right")
				case "named_expression":
					target, value = n.Get("name"), n.Get("value")
				}
				if target != nil && value != nil && a.holdsRead(fn, value, read) && mark(target) {
					changed = true
				}
				return true
			})
		}
		if !changed {
			break
		}
	}
	return read
}

// holdsRead: the value of expression e is a device value read on the
// host, or made from one (hostReadLocals): a host read method's result
// (`x.item()`, `ids.tolist()`), a tensor, a local in read, and what
// operators, subscripts, comprehensions and Python's builtins (`int`,
// `all`, `enumerate`) make of them. A call of any other function is not:
// a tensor passed to it says nothing of what it returns.
func (a *analyser) holdsRead(fn *index.Function, e *Node, read map[string]bool) bool {
	src := fn.File.Src
	found := false
	syntax.Walk(e, func(n *Node) bool {
		if found || n.Is("lambda") || metaRead(n, src) {
			return false
		}
		switch n.Kind() {
		case "identifier":
			found = syntax.NameRef(n) && (read[n.Text(src)] || a.tensorValued(n))
			return false
		case "attribute":
			if torchapi.MetaAttrs[n.Get("attribute").Text(src)] {
				return false
			}
			found = a.tensorValued(n)
			return !found
		case "comparison_operator":
			return !strings.Contains(n.Text(src), " is ")
		case "call":
			f := syntax.Unparen(n.Get("function"))
			switch {
			case f == nil:
			case f.Kind() == "identifier" && torchapi.ValueBuiltins[f.Text(src)]:
				if args := n.Get("arguments"); args != nil {
					found = a.holdsRead(fn, args, read)
				}
			case f.Kind() == "attribute":
				name, obj := f.Get("attribute").Text(src), f.Get("object")
				found = torchapi.HostReads[name] && !a.notTensor(obj) || a.tensorValued(n) ||
					!torchapi.MetaMethods[name] && a.holdsRead(fn, obj, read)
			default:
				found = a.tensorValued(n)
			}
			return false
		}
		return true
	})
	return found
}

// metaRead: n reads a tensor's metadata (`x.shape[0]`, `x.size(1)`,
// `x.dtype`), not its data.
func metaRead(n *Node, src []byte) bool {
	for n != nil && n.Kind() == "subscript" {
		n = syntax.Unparen(n.Get("value"))
	}
	if n != nil && n.Kind() == "call" {
		f := syntax.Unparen(n.Get("function"))
		return f != nil && f.Kind() == "attribute" && torchapi.MetaMethods[f.Get("attribute").Text(src)]
	}
	return n != nil && n.Kind() == "attribute" && torchapi.MetaAttrs[n.Get("attribute").Text(src)]
}

// notTensor: the points-to analysis gives n values, none a tensor.
func (a *analyser) notTensor(n *Node) bool {
	vs := a.g.Values(n)
	for _, v := range vs {
		if v.Kind == flow.VTensor {
			return false
		}
	}
	return len(vs) > 0
}

// tensorValued: the points-to analysis gives n a tensor and nothing that
// is not one.
func (a *analyser) tensorValued(n *Node) bool {
	vs := a.g.Values(n)
	if len(vs) == 0 {
		return false
	}
	for _, v := range vs {
		if v.Kind != flow.VTensor {
			return false
		}
	}
	return true
}

func public(fn *index.Function) bool {
	if fn.Kind != index.Def || fn.Kernel {
		return false
	}
	if strings.HasPrefix(fn.Name, "_") && !(strings.HasPrefix(fn.Name, "__") && strings.HasSuffix(fn.Name, "__")) {
		return false
	}
	if fn.Class != nil {
		return fn.Class.Outer != nil && fn.Class.Outer.Kind == index.TopLevel && fn.Class.Enclosing == nil && !strings.HasPrefix(fn.Class.Name, "_")
	}
	return fn.Outer != nil && fn.Outer.Kind == index.TopLevel
}

// claimRE matches a claim of capture safety; negations are filtered after.
var claimRE = regexp.MustCompile(`(?i)\b(cuda[ _-]?graph|graph|capture)[ _-]?(capture[ _-]?)?(safe|compatible|friendly)\b|\bsafe (for|under|with|during) (cuda[ _-]?graph|graph|stream)[ _-]?capture|\bsafe to capture\b`)
var negRE = regexp.MustCompile(`(?i)\b(not|never|un|isn't|is not|aren't)[ _-]*(cuda[ _-]?graph|graph|capture)?[ _-]?(capture[ _-]?)?-?(safe|compatible)`)

// negWordRE is a negation that turns a claim of its clause around: "is
// not CUDA-graph safe", "cannot be made capture-safe", "no longer
// graph-safe", "never capture safe", "isn't".
var negWordRE = regexp.MustCompile(`(?i)\b(not|never|cannot|can't|isn't|aren't|wasn't|won't|no longer|nor|neither|without)\b|n't\b`)

// madeRE is a clause whose subject makes something else safe ("Make the
// generator state safe for CUDA graph capture", "ensures the buffers are
// capture-safe"): what it claims is of that object, not of the function.
var madeRE = regexp.MustCompile(`(?i)\b(make|makes|making|made|ensure|ensures|ensuring|keep|keeps|keeping|render|renders)\b`)

// producerRE is a clause that opens with a verb that hands over or asks
// about something else ("Prepare CUDA-graph-compatible device work",
// "Build graph-safe grouped input storage", "Returns whether cuda graph
// safe RNG is supported"), with no copula before the claim: the claim
// qualifies what the function produces or asks about, not the function.
// "Creates no temporaries, so it is capture safe" (a copula) stays a
// claim.
var producerRE = regexp.MustCompile(`(?i)^(prepare|prepares|preparing|build|builds|building|create|creates|creating|return|returns|returning|allocate|allocates|allocating|construct|constructs|constructing|produce|produces|producing|wrap|wraps|wrapping)\b`)

// copulaRE is a copula: what follows it is said of the clause's subject.
var copulaRE = regexp.MustCompile(`(?i)\b(is|are|be|being|was|were|stays|remains)\b`)

// producerClause: clause (the text before a claim) opens with a producer
// verb (producerRE) and holds no copula.
func producerClause(clause string) bool {
	c := strings.TrimLeft(clause, " \t\r\n\"'#")
	return producerRE.MatchString(c) && !copulaRE.MatchString(c)
}

// wishRE marks a sentence that says what is still to be done rather than
// what is: a to-do marker ("# TODO: CUDA graph compatible version", a
// note that the function is not yet so) or future work ("designed to be
// CUDA graph compatible (future work)"). Its claim is no claim.
var wishRE = regexp.MustCompile(`(?i)\b(todo|fixme|xxx|tbd)\b|\bfuture work\b|\bin the future\b|\beventually\b`)

// sentenceAround is the sentence of s that holds [lo, hi): back to the
// end of the one before (. ! ? followed by a space or a line break, or a
// blank line) and on to its own end. Unlike a clause it goes past : and
// ;, so that a to-do label ("TODO:") stays with what it labels.
func sentenceAround(s string, lo, hi int) string {
	start := 0
	for i := lo - 1; i >= 0; i-- {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\n') || s[i] == '\n' && i > 0 && s[i-1] == '\n' {
			start = i + 1
			break
		}
	}
	end := len(s)
	for i := hi; i < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n') || s[i] == '\n' && i+1 < len(s) && s[i+1] == '\n' {
			end = i + 1
			break
		}
	}
	return s[start:end]
}

// claimsSafety: a claim of capture safety that no negation of its own
// clause turns around, in a sentence that is no to-do (wishRE). Each claimRE match is read with the text before it
// in its clause (back to . ; : ! ? or a blank line; a wrapped line goes on); "unsafe",
// "incompatible" and negRE's forms right at the match negate it too. A
// negation in another sentence does not undo a claim.
func claimsSafety(s string) bool {
	for _, m := range claimRE.FindAllStringIndex(s, -1) {
		start := m[0]
		lo := strings.LastIndexAny(s[:start], ".;:!?")
		for lo > 0 && s[lo] == '.' && lo+1 < len(s) && s[lo+1] != ' ' && s[lo+1] != '\n' {
			lo = strings.LastIndexAny(s[:lo], ".;:!?") // "torch.cuda"
		}
		if p := strings.LastIndex(s[:start], "\n\n"); p > lo {
			lo = p
		}
		clause := s[lo+1 : start]
		if negWordRE.MatchString(clause) || madeRE.MatchString(clause) || producerClause(clause) {
			continue
		}
		near := s[max(0, start-16):m[1]]
		if negRE.MatchString(near) {
			continue
		}
		if wishRE.MatchString(sentenceAround(s, start, m[1])) {
			continue
		}
		return true
	}
	return false
}

// mayClaim is a necessary condition for claimRE: every claim holds
// "safe", "compatible" or "friendly". It looks for "afe" (the regexp's
// case folding also takes U+017F for s) and the other two, ASCII case
// folded (no other letter of theirs folds outside ASCII), so that the
// regexp runs only on the rare docstrings and comments that have one.
func mayClaim(s string) bool {
	return fold.Contains(s, "afe") || fold.Contains(s, "compatible") || fold.Contains(s, "friendly")
}

// ClaimOf returns the node that claims fn is capture-safe: its docstring,
// a comment on the lines just above the def or in its body, or a
// decorator.
func ClaimOf(fn *index.Function) *Node {
	if fn.Kind != index.Def {
		return nil
	}
	f := fn.File
	src := f.Src
	claims := func(s string) bool { return mayClaim(s) && claimsSafety(s) }
	for _, d := range fn.Decorators {
		t := strings.ToLower(d.Text(src))
		if strings.Contains(t, "capture_safe") || strings.Contains(t, "graph_safe") || strings.Contains(t, "cudagraph_safe") {
			return d
		}
	}
	if fn.Docstring != nil && claims(fn.Docstring.Text(src)) {
		return fn.Docstring
	}
	top := fn.Def
	if top.Parent() != nil && top.Parent().Kind() == "decorated_definition" {
		top = top.Parent()
	}
	comments := f.Tree.Comments
	topLine, topCol := f.Pos(int(top.Start))
	lo := f.LineStart(topLine - 2)
	i := sort.Search(len(comments), func(i int) bool { return int(comments[i].Start) >= lo })
	// A comment in the body speaks for the function only before its first
	// statement (the docstring aside): further down it speaks for the code
	// beside it (`# keeps CUDA-graph-safe pointers` above one allocation).
	head := fn.Def.End
	if fn.Body != nil {
		for _, st := range fn.Body.NamedChildren() {
			if st.Kind() == "comment" || fn.Docstring != nil && st.Start <= fn.Docstring.Start && fn.Docstring.End <= st.End {
				continue
			}
			head = st.Start
			break
		}
	}
	for _, c := range comments[i:] {
		if c.Start >= fn.Def.End {
			break
		}
		inBody := c.Start > fn.Def.Start && c.End <= head
		cLine, cCol := f.Pos(int(c.Start))
		above := c.End <= top.Start && topLine-cLine <= 2 && cCol <= topCol
		if (inBody || above) && claims(c.Text(src)) {
			if inBody && InnermostAt(f, int(c.Start)) != fn {
				continue
			}
			return c
		}
	}
	return nil
}

// InnermostAt returns the innermost def (not lambda) holding offset off.
func InnermostAt(f *index.File, off int) *index.Function {
	var best *index.Function
	for _, g := range f.Funcs {
		if g.Kind == index.Def && int(g.Def.Start) <= off && off < int(g.Def.End) {
			best = g // Funcs are in source order: later ones are nested deeper
		}
	}
	return best
}
