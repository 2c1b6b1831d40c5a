package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// The flow fixtures (testdata/flow/<construct>/, one small project per
// call-graph construct) assert where functions run. A `def` line may carry
//
//	def forward(self, x):  # context: captured
//	def refresh(state):    # context: replay-prep
//	def both(x):           # context: captured replay-prep
//	def plan(self, p):     # context: captured resolution: hierarchy
//
// `# context: C...` says the function's contexts (GraphFunction.Contexts)
// are exactly C..., in capguard's order (captured, replay-prep,
// post-capture, claimed, launcher), and so its Context is the first;
// `# context: eager` says it has none. `resolution: K` says the weakest edge
// kind on the chain that proves its context (GraphFunction.Resolution) is K;
// `conditional` that every such chain passes a condition (an optional input,
// a prefill branch, a cache miss: GraphFunction.Condition), and its absence
// that one chain passes none.
// Their `# want:` findings are checked by TestFixtures like any fixture's.
//
// A function is found in BuildGraph's output by its file and the line of its
// def (or of its first decorator, where the def is decorated), so the check
// does not depend on names. TestFlowNames then runs BuildGraph from inside
// each project (Paths ["."]) and checks the names of the asserted functions:
// the dotted module path relative to the working directory plus the
// qualified name, as DESIGN.md's "Context model (v2)" has them.

// markerRE finds a context marker anywhere on a line; defRE a def line.
var (
	markerRE = regexp.MustCompile(`#\s*context:(.*)$`)
	defRE    = regexp.MustCompile(`^(\s*)(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
	classRE  = regexp.MustCompile(`^(\s*)class\s+([A-Za-z_][A-Za-z0-9_]*)\s*[(:]`)
)

// knownContexts are the contexts a marker may name, in capguard's order.
var knownContexts = []Context{Captured, ReplayPrep, PostCapture, Claimed, Launcher}

// contextAssertion is one `# context:` marker on a def line.
type contextAssertion struct {
	path     string // as found under the project folder
	rel      string // relative to the project folder, slash-separated
	line     int    // the def line
	decoLine int    // the first decorator's line, or line when undecorated
	qual     string // "Class.method", "outer.inner"
	module   string // dotted module relative to the project folder
	contexts []Context
	// resolution is the asserted Resolution, "" when the marker has none.
	resolution EdgeKind
	// conditional: the marker says `conditional` (captured only under a
	// condition, GraphFunction.Condition); without it, unconditionally.
	conditional bool
}

func (a contextAssertion) String() string {
	return fmt.Sprintf("%s:%d (%s)", a.path, a.line, a.qual)
}

// name is the function's expected name when capguard runs inside the
// project folder.
func (a contextAssertion) name() string { return a.module + "." + a.qual }

// moduleOf is the dotted module name of a file relative to the project
// folder: a/b.py is "a.b", a/__init__.py is "a".
func moduleOf(rel string) string {
	mod := strings.ReplaceAll(strings.TrimSuffix(rel, ".py"), "/", ".")
	if mod == "__init__" {
		return ""
	}
	return strings.TrimSuffix(mod, ".__init__")
}

// contextAssertions reads every marker of a project. The qualified name of
// a def comes from the def and class lines enclosing it by indentation
// (the fixtures are plain code: no defs inside multi-line strings).
func contextAssertions(t *testing.T, dir string) []contextAssertion {
	t.Helper()
	var out []contextAssertion
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".py") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		type scope struct {
			indent int
			name   string
		}
		var stack []scope
		lines := strings.Split(string(data), "\n")
		for i, line := range lines {
			indent := len(line) - len(strings.TrimLeft(line, " \t"))
			code := strings.TrimSpace(line)
			if code != "" && !strings.HasPrefix(code, "#") && !strings.HasPrefix(code, "@") {
				for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
					stack = stack[:len(stack)-1]
				}
			}
			var prefix []string
			for _, s := range stack {
				prefix = append(prefix, s.name)
			}
			m := markerRE.FindStringSubmatch(line)
			def := defRE.FindStringSubmatch(line)
			if def == nil {
				if c := classRE.FindStringSubmatch(line); c != nil {
					stack = append(stack, scope{indent, c[2]})
				}
				if m != nil {
					t.Errorf("%s:%d: a context marker on a line that is not a def", p, i+1)
				}
				continue
			}
			qual := strings.Join(append(prefix, def[2]), ".")
			stack = append(stack, scope{indent, def[2]})
			if m == nil {
				continue
			}
			a := contextAssertion{path: p, rel: rel, line: i + 1, decoLine: i + 1, qual: qual, module: moduleOf(rel)}
			for j := i - 1; j >= 0; j-- {
				above := lines[j]
				if strings.HasPrefix(strings.TrimSpace(above), "@") && len(above)-len(strings.TrimLeft(above, " \t")) == indent {
					a.decoLine = j + 1
					continue
				}
				break
			}
			words := strings.FieldsFunc(m[1], func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
			eager := false
			for k := 0; k < len(words); k++ {
				w := words[k]
				switch {
				case w == "resolution:" && k+1 < len(words):
					a.resolution = EdgeKind(words[k+1])
					if a.resolution.Strength() == 0 || a.resolution == "" {
						t.Errorf("%s:%d: unknown edge kind %q", p, i+1, words[k+1])
					}
					k++
				case w == string(Eager):
					eager = true
				case w == "conditional":
					a.conditional = true
				case slices.Contains(knownContexts, Context(w)):
					a.contexts = append(a.contexts, Context(w))
				default:
					t.Errorf("%s:%d: unknown word %q in a context marker (contexts: captured replay-prep post-capture claimed launcher eager; conditional; resolution: KIND)", p, i+1, w)
				}
			}
			if eager == (len(a.contexts) > 0) {
				t.Errorf("%s:%d: a context marker names either eager or one or more contexts", p, i+1)
			}
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no context markers", dir)
	}
	return out
}

// graphIndex finds functions by absolute path and line, from the working
// directory the graph was built in.
type graphIndex map[string][]*GraphFunction

func indexGraph(t *testing.T, g *GraphResult) graphIndex {
	t.Helper()
	idx := graphIndex{}
	for i := range g.Functions {
		f := &g.Functions[i]
		abs, err := filepath.Abs(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%s:%d", abs, f.Line)
		idx[key] = append(idx[key], f)
	}
	return idx
}

// find returns the function a marker is on: at its def line, or its first
// decorator's line, and named like the def (module-level code may share
// line 1 with a def). path is the marker's file as seen from the current
// working directory.
func (idx graphIndex) find(t *testing.T, path string, a contextAssertion) *GraphFunction {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	last := a.qual[strings.LastIndexByte(a.qual, '.')+1:]
	for _, line := range []int{a.line, a.decoLine} {
		for _, f := range idx[fmt.Sprintf("%s:%d", abs, line)] {
			if f.Name == last || strings.HasSuffix(f.Name, "."+last) {
				return f
			}
		}
	}
	return nil
}

// checkGraphInvariants checks what the GraphResult contract says of every
// function: Context is the first of Contexts in capguard's order ("eager"
// when there are none), Contexts are in that order without repeats, a
// function with a context has a chain ending at itself and a resolution,
// every call names a function of the graph, and Edges are the calls with
// kinds and lines.
func checkGraphInvariants(g *GraphResult) []string {
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if g.Version != 1 {
		problem("graph version %d, want 1", g.Version)
	}
	names := map[string]int{}
	for _, f := range g.Functions {
		names[f.Name]++
	}
	for _, f := range g.Functions {
		where := fmt.Sprintf("%s (%s:%d)", f.Name, f.Path, f.Line)
		if names[f.Name] > 1 {
			problem("%s: %d functions have this name", where, names[f.Name])
		}
		last := -1
		for _, c := range f.Contexts {
			i := slices.Index(knownContexts, c)
			if i <= last {
				problem("%s: contexts %v are not distinct known contexts in capguard's order", where, f.Contexts)
				break
			}
			last = i
		}
		want := Eager
		if len(f.Contexts) > 0 {
			want = f.Contexts[0]
		}
		if f.Context != want {
			problem("%s: context %q with contexts %v, want %q", where, f.Context, f.Contexts, want)
		}
		if len(f.Contexts) > 0 {
			if len(f.Chain) == 0 || f.Chain[len(f.Chain)-1] != f.Name {
				problem("%s: context %s with chain %v: a chain ends at the function", where, f.Context, f.Chain)
			}
			if f.Resolution.Strength() == 0 {
				problem("%s: context %s with resolution %q", where, f.Context, f.Resolution)
			}
		}
		var edgeTo []string
		for _, e := range f.Edges {
			if e.Kind.Strength() == 0 {
				problem("%s: edge to %s has kind %q", where, e.To, e.Kind)
			}
			if e.Line < 1 {
				problem("%s: edge to %s at line %d", where, e.To, e.Line)
			}
			edgeTo = append(edgeTo, e.To)
		}
		calls := slices.Clone(f.Calls)
		for _, c := range calls {
			if names[c] == 0 {
				problem("%s: calls %s, which is no function of the graph", where, c)
			}
		}
		sort.Strings(calls)
		sort.Strings(edgeTo)
		if !slices.Equal(slices.Compact(calls), slices.Compact(edgeTo)) {
			problem("%s: calls %v but edges to %v", where, calls, edgeTo)
		}
	}
	return problems
}

// checkAssertion compares one marker with the function found for it.
func checkAssertion(a contextAssertion, f *GraphFunction) []string {
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if f == nil {
		problem("%s: no function of the graph at this def", a)
		return problems
	}
	got := slices.Clone(f.Contexts)
	if !slices.Equal(got, a.contexts) {
		want, have := "eager", "eager"
		if len(a.contexts) > 0 {
			want = fmt.Sprint(a.contexts)
		}
		if len(got) > 0 {
			have = fmt.Sprintf("%v, chain %v", got, f.Chain)
		}
		problem("%s: contexts %s, want %s", a, have, want)
	}
	if a.conditional != (f.Condition != "") {
		problem("%s: condition %q, want conditional=%v", a, f.Condition, a.conditional)
	}
	if a.resolution != "" && f.Resolution != a.resolution {
		problem("%s: resolution %q (chain %v), want %q", a, f.Resolution, f.Chain, a.resolution)
	}
	return problems
}

// report fails the test with each problem.
func report(t *testing.T, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
}

// TestFlowContexts builds the graph of each flow project, named as a folder
// (Paths [dir]), and checks every context marker.
func TestFlowContexts(t *testing.T) {
	for _, dir := range testenv.FlowProjects(t, "../testdata") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			asserts := contextAssertions(t, dir)
			g, err := BuildGraph(Options{Paths: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range g.Errors {
				t.Errorf("file error: %s: %s", e.Path, e.Message)
			}
			report(t, checkGraphInvariants(g))
			idx := indexGraph(t, g)
			for _, a := range asserts {
				report(t, checkAssertion(a, idx.find(t, a.path, a)))
			}
		})
	}
}

// TestFlowNames builds the graph of each flow project from inside it
// (Paths ["."]) and checks the names of the functions that carry context
// markers (and their contexts again: they must not depend on where capguard
// runs from).
func TestFlowNames(t *testing.T) {
	for _, dir := range testenv.FlowProjects(t, "../testdata") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			asserts := contextAssertions(t, dir)
			t.Chdir(dir)
			g, err := BuildGraph(Options{Paths: []string{"."}})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range g.Errors {
				t.Errorf("file error: %s: %s", e.Path, e.Message)
			}
			report(t, checkGraphInvariants(g))
			idx := indexGraph(t, g)
			for _, a := range asserts {
				f := idx.find(t, filepath.FromSlash(a.rel), a)
				report(t, checkAssertion(a, f))
				if f != nil && f.Name != a.name() {
					t.Errorf("%s: named %q, want %q", a, f.Name, a.name())
				}
			}
		})
	}
}

// TestFlowMarkers checks the markers themselves, today's code or not: the
// qualified names the test derives, and that every flow project has both
// kinds of assertion (a function that must be reached and one that must
// not).
func TestFlowMarkers(t *testing.T) {
	got := map[string]string{}
	for _, dir := range testenv.FlowProjects(t, "../testdata") {
		reached, eager := 0, 0
		for _, a := range contextAssertions(t, dir) {
			got[filepath.Base(dir)+":"+a.rel+":"+a.qual] = a.name()
			if len(a.contexts) > 0 {
				reached++
			} else {
				eager++
			}
		}
		if reached == 0 || eager == 0 {
			t.Errorf("%s: %d functions asserted reached and %d eager; want both", dir, reached, eager)
		}
	}
	for key, want := range map[string]string{
		"modules:engine/ops/norm.py:rms_norm":                     "engine.ops.norm.rms_norm",
		"modules:engine/layers/mlp.py:gated_mlp":                  "engine.layers.mlp.gated_mlp",
		"functions:decorators.py:traced.wrapper":                  "decorators.traced.wrapper",
		"functions:decorators.py:Sampler.temperature":             "decorators.Sampler.temperature",
		"functions:decode.py:make_decode.step":                    "decode.make_decode.step",
		"dispatch:backends/__init__.py:get_backend":               "backends.get_backend",
		"conventions:paged_attention.py:PagedAttnBackend.forward": "paged_attention.PagedAttnBackend.forward",
	} {
		if got[key] != want {
			t.Errorf("%s: derived name %q, want %q", key, got[key], want)
		}
	}
}

// oracleGraph is the graph a perfect BuildGraph gives for the markers of a
// project (the asserted functions only), built from inside the project
// folder when inside is set.
func oracleGraph(asserts []contextAssertion, inside bool) *GraphResult {
	g := &GraphResult{Version: 1}
	// Module-level code first, at line 1 (where a def may be too).
	modules := map[string]bool{}
	for _, a := range asserts {
		if !modules[a.path] {
			modules[a.path] = true
			path := a.path
			if inside {
				path = filepath.FromSlash(a.rel)
			}
			g.Functions = append(g.Functions, GraphFunction{Name: a.module, Path: path, Line: 1, Context: Eager, Calls: []string{}})
		}
	}
	for i, a := range asserts {
		path := a.path
		if inside {
			path = filepath.FromSlash(a.rel)
		}
		f := GraphFunction{Name: a.name(), Path: path, Line: a.line, Context: Eager, Contexts: a.contexts, Calls: []string{}}
		if i%2 == 1 {
			f.Line = a.decoLine // either line identifies a decorated def
		}
		if len(a.contexts) > 0 {
			f.Context = a.contexts[0]
			f.Chain = []string{"root", a.name()}
			f.Resolution = Resolved
			if a.resolution != "" {
				f.Resolution = a.resolution
			}
			if a.conditional {
				f.Condition = "a condition"
			}
		}
		g.Functions = append(g.Functions, f)
	}
	return g
}

// TestFlowHarness runs the checks of TestFlowContexts on the graph a
// perfect implementation would give, and on wrong ones: the harness must
// accept the first and reject each of the others, so that its failures
// today (BuildGraph is a stub) are the implementation's, not its own.
func TestFlowHarness(t *testing.T) {
	for _, dir := range testenv.FlowProjects(t, "../testdata") {
		asserts := contextAssertions(t, dir)
		g := oracleGraph(asserts, false)
		if p := checkGraphInvariants(g); len(p) > 0 {
			t.Errorf("%s: the oracle graph breaks the contract: %v", dir, p)
		}
		idx := indexGraph(t, g)
		for _, a := range asserts {
			f := idx.find(t, a.path, a)
			if p := checkAssertion(a, f); len(p) > 0 {
				t.Errorf("%s: the oracle fails: %v", a, p)
			}
			if f != nil && f.Name != a.name() {
				t.Errorf("%s: oracle name %q", a, f.Name)
			}
		}
		// Wrong graphs: a function moved to another line, a context
		// dropped or added, a wrong resolution, a broken Context.
		first := len(g.Functions) - len(asserts) // the asserted functions follow the modules
		for i, a := range asserts {
			bad := oracleGraph(asserts, false)
			f := &bad.Functions[first+i]
			var what string
			switch i % 4 {
			case 0:
				f.Line, f.Name = a.line+1000, f.Name+"_moved"
				what = "moved"
				if p := checkAssertion(a, indexGraph(t, bad).find(t, a.path, a)); len(p) == 0 {
					t.Errorf("%s: %s function not reported", a, what)
				}
				continue
			case 1:
				if len(f.Contexts) > 0 {
					f.Contexts, f.Context, f.Chain, f.Resolution = nil, Eager, nil, ""
				} else {
					f.Contexts, f.Context, f.Chain, f.Resolution = []Context{Captured}, Captured, []string{"root", f.Name}, Resolved
				}
				what = "context flipped"
			case 2:
				if len(f.Contexts) > 0 {
					f.Contexts = append(slices.Clone(f.Contexts), Launcher)
				} else {
					f.Contexts, f.Context, f.Chain, f.Resolution = []Context{PostCapture}, PostCapture, []string{"root", f.Name}, Resolved
				}
				what = "context added"
			case 3:
				switch {
				case a.conditional:
					f.Condition = ""
					what = "condition dropped"
				case a.resolution != "":
					f.Resolution = ByName
					if f.Resolution == a.resolution {
						f.Resolution = Resolved
					}
					what = "resolution"
				case len(a.contexts) > 0:
					f.Condition = "a condition"
					what = "condition added"
				default:
					continue
				}
			}
			if p := checkAssertion(a, indexGraph(t, bad).find(t, a.path, a)); len(p) == 0 {
				t.Errorf("%s: %s not reported", a, what)
			}
		}
		bad := oracleGraph(asserts, false)
		bad.Functions[first].Context = Claimed
		bad.Functions = append(bad.Functions, bad.Functions[len(bad.Functions)-1])
		bad.Functions[len(bad.Functions)-1].Calls = []string{"no.such.function"}
		if p := checkGraphInvariants(bad); len(p) < 3 {
			t.Errorf("%s: broken contract (wrong Context, a duplicate name, a call to nothing, calls without edges) gave only %v", dir, p)
		}
		// From inside the project, as TestFlowNames runs.
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Chdir(dir)
			idx := indexGraph(t, oracleGraph(asserts, true))
			for _, a := range asserts {
				f := idx.find(t, filepath.FromSlash(a.rel), a)
				if p := checkAssertion(a, f); len(p) > 0 {
					t.Errorf("%s: the oracle fails from inside the project: %v", a, p)
				}
			}
		})
	}
}
