package contexts

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/internal/par"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// Library mode (the launcher context) is for a kernel library: a project
// whose own code never captures, so that whether its kernels run under
// capture depends on callers the analysis does not see. A project that
// captures in any way of its own, outside its tests, benchmarks and
// examples, is not one:
//
//   - a capture region, make_graphed_callables, a `.replay()` of a graph,
//     a CUDAGraph made;
//   - a capture root from a graph-protocol convention, an entry point or a
//     framework preset;
//   - capture through a framework: torch.compile in a mode that captures
//     CUDA graphs ("reduce-overhead", "max-autotune") or with
//     inductor's cudagraphs option on, named at the call or bound to what
//     it passes by the function around it (compileCaptures);
//   - a method that captures or replays graphs by its name
//     (`capture_graph`, `capture_cuda_graph`, `replay_graph`): the
//     capture runs in C++ or in a framework behind it;
//   - a graph-mode setting the project holds or passes on: a field,
//     attribute, keyword or command-line option named `use_cuda_graph`,
//     `enable_cuda_graph`, `disable_cuda_graph`, `cuda_graph_*`,
//     `cudagraph_*`, `enforce_eager` (an engine's switch between its
//     captured and eager modes). A keyword of a benchmarking, profiling
//     or autotuning call (Triton's `autotune(use_cuda_graph=...)`, a
//     project's own tuner, `do_bench_cudagraph`) captures that call's
//     timing runs, not the project's code, and is no evidence; nor is an
//     attribute read as such a call's argument
//     (`autotune(use_cuda_graph=CFG.USE_CUDA_GRAPH)`), nor a class's field
//     that only such calls read.
//
// Tests, benchmarks and examples (TestFile) neither make a project an
// engine nor are ever library roots. Nor do the project's programs: a
// script's module-level code (a file no project file imports:
// `scripts/quick_start.py` compiling a model in "max-autotune"), and a
// module's own program (an `if __name__ == "__main__":` block, a `main`,
// and what only they run: programCode). A program uses the library as any caller
// does; its capture says that callers capture, which library mode
// assumes, not that the library's API runs only under the project's own
// captures.

// TestFile reports whether f is a test, benchmark or example: a file named
// test_*.py, *_test.py, conftest.py, bench_*.py, *_bench.py or
// *_benchmark.py, or one under a folder named test(s), testing,
// benchmark(s) (or a name that starts or ends with it), bench(es),
// example(s) or demo(s).
func TestFile(f *index.File) bool { return testPath(f.Path) }

func testPath(p string) bool {
	p = strings.ToLower(filepath_ToSlash(p))
	parts := strings.Split(p, "/")
	base := parts[len(parts)-1]
	if strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" ||
		strings.HasPrefix(base, "bench_") || strings.HasSuffix(base, "_bench.py") || strings.HasSuffix(base, "_benchmark.py") ||
		strings.HasPrefix(base, "benchmark_") {
		return true
	}
	for _, d := range parts[:len(parts)-1] {
		switch d {
		case "test", "tests", "testing", "benchmark", "benchmarks", "bench", "benches", "example", "examples", "demo", "demos":
			return true
		}
		if strings.HasPrefix(d, "benchmark") || strings.HasSuffix(d, "benchmarks") || strings.HasSuffix(d, "benchmark") {
			// `benchmarks_v2`, `microbenchmarks`, `op_benchmark`
			return true
		}
	}
	return false
}

// graphMethodRE: a method that captures or replays graphs by its name.
var graphMethodRE = regexp.MustCompile(`^_*(capture|replay)_?(cuda_?|hip_?|npu_?)?graphs?(_|$)|^_*(cuda_?|)graphs?_(capture|replay)(_|$)|^_*(capture|replay)_(cuda_?)?graphs?$`)

// graphSettingRE: a graph-mode setting's name.
var graphSettingRE = regexp.MustCompile(`^(use|enable|disable|enforce|with|no)_(cuda_?graphs?|cudagraphs?)$|^(cuda_?graphs?|cudagraphs?)_[a-z_]+$|^enforce_eager$|^(cuda_?graphs?|cudagraphs?)$`)

// graphOptionRE: a command-line option that switches graph mode.
var graphOptionRE = regexp.MustCompile(`^--?(use-|enable-|disable-|no-)?(cuda-?graphs?|cudagraphs?)(-[a-z-]+)?$|^--?enforce-eager$`)

// graphish: node n's text holds "graph" or "eager" in any case, which
// every name graphSettingRE matches does. Most attribute and keyword names
// of a project do not: the test reads the source bytes, so those names are
// neither copied nor lowered (the evidence reads every file).
func graphish(n *Node, src []byte) bool {
	b := src[n.Start:n.End]
	for i := 0; i+5 <= len(b); i++ {
		switch b[i] | 0x20 {
		case 'g':
			if b[i+1]|0x20 == 'r' && b[i+2]|0x20 == 'a' && b[i+3]|0x20 == 'p' && b[i+4]|0x20 == 'h' {
				return true
			}
		case 'e':
			if b[i+1]|0x20 == 'a' && b[i+2]|0x20 == 'g' && b[i+3]|0x20 == 'e' && b[i+4]|0x20 == 'r' {
				return true
			}
		}
	}
	return false
}

// captureEvidence says why the project captures of its own, or "" when
// nothing shows it does (library mode).
func (a *analyser) captureEvidence() string {
	prog := a.programs()
	for _, r := range a.res.Regions {
		if r.What != guardRegion && !TestFile(r.Fn.File) && !benchmarkFunc(r.Fn) && !prog.holds(r.Fn, r.Node) {
			a.visibleCapture = true
			return fmt.Sprintf("%s at %s:%d", r.What, r.Fn.File.Path, r.Fn.File.Line(r.Node))
		}
	}
	for _, r := range a.roots {
		site := r.fn
		if r.via != nil {
			site = r.via
		}
		if !TestFile(site.File) && !TestFile(r.fn.File) {
			a.visibleCapture = true
			return fmt.Sprintf("%s (%s)", r.why, r.fn.FullName())
		}
	}
	// Each file's evidence is its own (fileEvidence reads the syntax, the
	// solved graph and the index, and writes only its settingReads), so
	// the files are read on every core. The evidence is the first file's
	// in path order, as when they were read one after another: a file
	// past the first with evidence found so far is not read, and the
	// settings gathered are those of every file when none has any.
	var files []*index.File
	for _, f := range a.p.Files {
		if !TestFile(f) && f.Tree != nil {
			files = append(files, f)
		}
	}
	whys := make([]string, len(files))
	reads := make([]*settingReads, len(files))
	var first atomic.Int64
	first.Store(int64(len(files)))
	par.Do(len(files), func(i int) {
		if int64(i) > first.Load() {
			return
		}
		reads[i] = &settingReads{benchOnly: map[string]bool{}}
		if whys[i] = a.fileEvidence(files[i], reads[i], prog); whys[i] == "" {
			return
		}
		for { // first = min(first, i)
			cur := first.Load()
			if int64(i) >= cur || first.CompareAndSwap(cur, int64(i)) {
				return
			}
		}
	})
	ev := &settingReads{benchOnly: map[string]bool{}}
	for i := range files {
		if whys[i] != "" {
			return whys[i]
		}
		ev.fields = append(ev.fields, reads[i].fields...)
		for name := range reads[i].benchOnly {
			ev.benchOnly[name] = true
		}
	}
	// A class's graph-mode field is evidence unless what reads it is only
	// benchmarking, profiling or autotuning calls (a tuner's
	// `use_cuda_graph=CFG.USE_CUDA_GRAPH`): any other read was evidence
	// of its own, above.
	for _, fd := range ev.fields {
		if !ev.benchOnly[fd.name] {
			return fd.why
		}
	}
	return ""
}

// settingReads gathers, across files, what decides whether a class's
// graph-mode field is evidence (captureEvidence): the fields, and the
// setting names read as a benchmarking call's argument.
type settingReads struct {
	fields    []settingField
	benchOnly map[string]bool // names read in a benchmarking call's arguments
}

type settingField struct{ name, why string }

// benchmarkFunc: fn or a function around it benchmarks, profiles or
// autotunes by its name (`do_bench`, `_profile_single_kernel`,
// `autotune`): a capture or replay in it times its runs (as
// benchmarkCall's graph options do), it is not the project capturing.
func benchmarkFunc(fn *index.Function) bool {
	for g := fn; g != nil && g.Kind != index.TopLevel; g = g.Outer {
		n := strings.ToLower(g.Name)
		if strings.Contains(n, "tune") || strings.Contains(n, "bench") || strings.Contains(n, "profil") {
			return true
		}
	}
	return false
}

// graphHelperUsed: a function named as capturing or replaying graphs
// (graphMethodRE) is called by the project's own code: a caller that is no
// such helper itself (following those a few calls up), and no test,
// benchmark or program. A capture helper nothing calls (an engine's
// `graph_capture()` context manager a kernel library ships for the engines
// that capture it, and its group's methods that only it calls) is API for
// callers outside the project, not the project capturing.
func (a *analyser) graphHelperUsed(fn *index.Function, prog programSites) bool {
	seen := map[*index.Function]bool{fn: true}
	work := []*index.Function{fn}
	for depth := 0; depth < 4 && len(work) > 0; depth++ {
		var next []*index.Function
		for _, g := range work {
			for _, e := range a.g.In[g] {
				c := e.Caller
				if c == nil || seen[c] {
					continue
				}
				seen[c] = true
				if TestFile(c.File) || benchmarkFunc(c) || prog.code[c] {
					continue
				}
				if !graphMethodRE.MatchString(strings.ToLower(c.Name)) {
					return true
				}
				next = append(next, c)
			}
		}
		work = next
	}
	return false
}

// fileEvidence finds framework capture, graph methods and graph-mode
// settings in one file. A benchmarking, profiling or autotuning function
// (benchmarkFunc) is no evidence: the graphs it makes time its runs.
func (a *analyser) fileEvidence(f *index.File, ev *settingReads, prog programSites) string {
	src := f.Src
	for _, fn := range f.Funcs {
		if fn.Kind == index.Def && graphMethodRE.MatchString(strings.ToLower(fn.Name)) && !benchmarkFunc(fn) && !prog.code[fn] && a.graphHelperUsed(fn, prog) {
			return fmt.Sprintf("%s captures or replays graphs by its name (%s:%d)", fn.FullName(), f.Path, f.Line(fn.Def))
		}
	}
	at := func(n *Node) string { return fmt.Sprintf("%s:%d", f.Path, f.Line(n)) }
	why := ""
	syntax.Walk(f.Tree.Root, func(n *Node) bool {
		if why != "" {
			return false
		}
		if n.Kind() == "function_definition" {
			if fn := f.FuncAt(n); fn != nil && (benchmarkFunc(fn) || prog.code[fn]) {
				return false
			}
		}
		if n.Kind() == "if_statement" && mainGuard(n, src) {
			return false // the module's program
		}
		if prog.unimported[f] && n.Parent() == f.Tree.Root && !n.Is("function_definition", "class_definition", "decorated_definition") {
			return false // a script's module-level code
		}
		switch n.Kind() {
		case "call":
			if c := syntax.Unparen(n.Get("function")); c != nil {
				for _, d := range a.externalsOf(f, c) {
					if torchapi.GraphClasses[d] || isGraphedAPI(d) {
						why = fmt.Sprintf("%s at %s", d, at(n))
						return false
					}
				}
			}
			if w := a.compileCaptures(f, n); w != "" {
				why = w + " at " + at(n)
				return false
			}
		case "keyword_argument":
			name := n.Get("name")
			if name == nil || !graphish(name, src) || !graphSettingRE.MatchString(strings.ToLower(name.Text(src))) {
				return true
			}
			if call := enclosingCall(n); call != nil && benchmarkCall(f, call) {
				return true
			}
			if v := n.Get("value"); v != nil && v.Kind() == "identifier" && v.Text(src) == name.Text(src) {
				return true // passed on under its own name: the setting is given where it comes from
			}
			why = fmt.Sprintf("the graph-mode setting `%s=` at %s", name.Text(src), at(n))
		case "attribute":
			if attr := n.Get("attribute"); attr != nil && graphish(attr, src) && graphSettingRE.MatchString(strings.ToLower(attr.Text(src))) {
				if call := enclosingCall(n); call != nil && benchmarkCall(f, call) {
					// `triton.autotune(use_cuda_graph=CFG.USE_CUDA_GRAPH)`:
					// the setting times the tuner's runs, like the keyword.
					ev.benchOnly[attr.Text(src)] = true
					return true
				}
				why = fmt.Sprintf("the graph-mode setting `%s` at %s", short(n.Text(src)), at(n))
			}
		case "class_definition":
			if body := n.Get("body"); body != nil {
				for _, s := range body.NamedChildren() {
					if s.Kind() != "expression_statement" || len(s.NamedChildren()) == 0 {
						continue
					}
					asg := s.NamedChildren()[0]
					if asg.Kind() != "assignment" {
						continue
					}
					if l := asg.Get("left"); l != nil && l.Kind() == "identifier" && graphish(l, src) && graphSettingRE.MatchString(strings.ToLower(l.Text(src))) {
						ev.fields = append(ev.fields, settingField{l.Text(src), fmt.Sprintf("the graph-mode field `%s` at %s", l.Text(src), at(s))})
					}
				}
			}
		case "string":
			t := strings.Trim(n.Text(src), `"'`)
			if strings.HasPrefix(t, "-") && graphOptionRE.MatchString(strings.ToLower(t)) {
				if call := enclosingCall(n); call != nil {
					if c := syntax.Unparen(call.Get("function")); c != nil && c.Kind() == "attribute" && c.Get("attribute").Text(src) == "add_argument" {
						why = fmt.Sprintf("the graph-mode option %s at %s", t, at(n))
					}
				}
			}
		}
		return why == ""
	})
	return why
}

// compileCaptures: a torch.compile call (or decorator) in a mode that
// captures CUDA graphs, or with inductor's cudagraphs option on.
func (a *analyser) compileCaptures(f *index.File, call *Node) string {
	callee := syntax.Unparen(call.Get("function"))
	if callee == nil {
		return ""
	}
	compile := false
	for _, d := range a.externalsOf(f, callee) {
		if torchapi.GraphCompilers[d] {
			compile = true
		}
	}
	if !compile {
		return ""
	}
	return CompileGraphKeywords(call.Get("arguments"), f.Src)
}

// CompileGraphKeywords says how a compiler call's arguments args turn
// CUDA graphs on (torchapi.CompileGraphSetting), or "": the keywords
// written there, those a `**name` spread of a dict display passes, and
// each value as the function around the call binds it (boundTexts: a
// parameter's default, a local bound to it), with how it is known.
func CompileGraphKeywords(args *Node, src []byte) string {
	if args == nil {
		return ""
	}
	for _, kw := range compileKeywords(args, src) {
		for _, val := range boundTexts(kw.value, src) {
			if w := torchapi.CompileGraphSetting(kw.name, val.text); w != "" {
				return w + val.how
			}
		}
	}
	return ""
}

// keyword is a keyword argument of a call: its name and value.
type keyword struct {
	name  string
	value *Node
}

// compileKeywords are the keyword arguments of argument list args, with
// those a `**name` spread passes where the function around the call binds
// name to a dict display (`kwargs = {"mode": "max-autotune"}`, in any of
// its branches): the keys written as strings, with their values.
func compileKeywords(args *Node, src []byte) []keyword {
	var kws []keyword
	for _, a := range args.NamedChildren() {
		switch a.Kind() {
		case "keyword_argument":
			if name, val := a.Get("name"), a.Get("value"); name != nil && val != nil {
				kws = append(kws, keyword{name.Text(src), val})
			}
		case "dictionary_splat":
			named := a.NamedChildren()
			if len(named) == 0 {
				continue
			}
			for _, b := range boundTexts(syntax.Unparen(named[0]), src) {
				if b.node == nil || b.node.Kind() != "dictionary" {
					continue
				}
				for _, pair := range b.node.NamedChildren() {
					k, v := pair.Get("key"), pair.Get("value")
					if pair.Kind() != "pair" || k == nil || v == nil || k.Kind() != "string" {
						continue
					}
					kws = append(kws, keyword{strings.Trim(k.Text(src), `"'`), v})
				}
			}
		}
	}
	return kws
}

// boundText is a value an expression may hold, with how it is known ("",
// or what it assumes, worded to follow an evidence sentence).
type boundText struct {
	node *Node
	text string
	how  string
}

// boundTexts are the values expression n may hold, as the function around
// it says: n itself, or for a plain name, each right side the function
// (or, at module level, the module) binds it to with `=`, and the default
// of the parameter of that name (which holds where a caller omits it:
// `def build(compile_mode="max-autotune")`). A name bound in a nested
// function or read from elsewhere is left as it is.
func boundTexts(n *Node, src []byte) []boundText {
	if n == nil {
		return nil
	}
	if n.Kind() != "identifier" {
		return []boundText{{node: n, text: n.Text(src)}}
	}
	name := n.Text(src)
	scope := n.Parent()
	for scope != nil && !scope.Is("function_definition", "lambda", "module") {
		scope = scope.Parent()
	}
	if scope == nil || scope.Kind() == "lambda" {
		return []boundText{{node: n, text: name}}
	}
	var out []boundText
	if params := scope.Get("parameters"); params != nil {
		for _, p := range params.NamedChildren() {
			if !p.Is("default_parameter", "typed_default_parameter") {
				continue
			}
			if pn, v := p.Get("name"), p.Get("value"); pn != nil && v != nil && pn.Text(src) == name {
				out = append(out, boundText{node: v, text: v.Text(src), how: " (the default of the parameter `" + name + "`)"})
			}
		}
	}
	body := scope
	if b := scope.Get("body"); b != nil {
		body = b
	}
	syntax.Walk(body, func(x *Node) bool {
		if x != body && x.Is("function_definition", "class_definition", "decorated_definition", "lambda") {
			return false
		}
		if x.Kind() == "assignment" {
			if l, r := x.Get("left"), x.Get("right"); l != nil && r != nil && l.Kind() == "identifier" && l.Text(src) == name {
				r = syntax.Unparen(r)
				out = append(out, boundText{node: r, text: r.Text(src), how: " (bound to `" + name + "`)"})
			}
		}
		return true
	})
	if len(out) == 0 {
		return []boundText{{node: n, text: name}}
	}
	return out
}

// enclosingCall is the call whose argument list holds n.
func enclosingCall(n *Node) *Node {
	for x := n.Parent(); x != nil; x = x.Parent() {
		if x.Kind() == "call" {
			return x
		}
		if x.Is("function_definition", "class_definition", "lambda", "block") {
			return nil
		}
	}
	return nil
}

// benchmarkCall: a call of a benchmarking, profiling or autotuning API,
// the project's own or Triton's (triton.autotune, a project `libtuner`,
// triton.testing.do_bench_cudagraph and the like), whose graph options
// capture its own timing runs, not the project's code.
func benchmarkCall(f *index.File, call *Node) bool {
	callee := syntax.Unparen(call.Get("function"))
	if callee == nil {
		return false
	}
	t := strings.ToLower(callee.Text(f.Src))
	if q := f.Qualify(callee); q != "" {
		t += " " + strings.ToLower(q)
	}
	return strings.Contains(t, "tune") || strings.Contains(t, "bench") || strings.Contains(t, "profil") || strings.HasPrefix(t, "triton.")
}

// programSites are the project's programs (captureEvidence): the
// functions only a package's own program runs (programCode), and the
// module-level code of scripts: files that no project file imports.
type programSites struct {
	code       map[*index.Function]bool
	unimported map[*index.File]bool
}

// holds: a capture at node n of fn is a program's.
func (p programSites) holds(fn *index.Function, n *Node) bool {
	if p.code[fn] || fn.Kind == index.TopLevel && p.unimported[fn.File] {
		return true
	}
	return n != nil && underMainGuard(n, fn.File.Src)
}

// programs finds the project's programs.
func (a *analyser) programs() programSites {
	p := programSites{code: a.programFuncs(), unimported: map[*index.File]bool{}}
	imported := map[*index.Module]bool{}
	for _, f := range a.p.Files {
		for _, dotted := range f.Imports {
			// `from pkg.mod import f` binds "pkg.mod.f": the longest
			// prefix that is a module is what the file imports.
			for d := dotted; d != ""; {
				if m := a.p.Import(f, d, 0); m != nil {
					for ; m != nil && !imported[m]; m = m.Parent {
						imported[m] = true // a package's __init__ runs too
					}
					break
				}
				i := strings.LastIndexByte(d, '.')
				if i < 0 {
					break
				}
				d = d[:i]
			}
		}
	}
	for _, f := range a.p.Files {
		if f.Module == nil || !imported[f.Module] {
			p.unimported[f] = true
		}
	}
	return p
}

// mainGuard: n is `if __name__ == "__main__":`.
func mainGuard(n *Node, src []byte) bool {
	c := n.Get("condition")
	if c == nil {
		return false
	}
	t := strings.ReplaceAll(strings.ReplaceAll(c.Text(src), "'", "\""), " ", "")
	return t == `__name__=="__main__"` || t == `"__main__"==__name__`
}
