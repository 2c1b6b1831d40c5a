// Command pycg scores a call graph against the PyCG micro-benchmark: capguard's
// (`capguard graph --format json .`) or, for reference, PyCG's own.
//
//	go build -o /tmp/capguard ./cli/capguard
//	go run ./bench/pycg -capguard /tmp/capguard /path/to/PyCG      # capguard's graph
//	go run ./bench/pycg -pycg /path/to/PyCG                        # PyCG itself (python3 -m pycg)
//	go run ./bench/pycg -capguard /tmp/capguard -v -run 'lambdas/' /path/to/PyCG
//
// The argument is a PyCG checkout (or its micro-benchmark/snippets folder).
// Every snippet, micro-benchmark/snippets/<category>/<case>/, holds Python files
// and the ground truth callgraph.json, {"caller": ["callee", ...]}. The tool runs
// with its working directory set to the snippet folder: capguard as
// `capguard graph --format json .`, PyCG as `python3 -m pycg --package . main.py`
// with PYTHONPATH set to the checkout (main.py as the one entry point, as PyCG's
// own micro-benchmark test runs it). capguard's output is turned into a
// caller→callees map from each function's name and its calls.
//
// # What is scored
//
// Only edges between functions (and modules) the snippet defines: an edge is
// scored when both its caller and its callee are names of the snippet's own
// files. The snippet's modules come from its file paths, relative to the
// snippet folder: a/b.py is "a.b", a/__init__.py is "a". A name belongs to the
// snippet when it is one of those modules or starts with one and a dot
// ("nested.mod.func2", "main.A.B.bfunc", "main.func.<lambda1>"). Every other
// truth edge — to `<builtin>.len`, `<**PyStr**>.join`, `ext.Cls` (a module
// that is not in the snippet) — is out of scope: it is dropped from both sides,
// counted in the "not scored" column and listed with -v, never silently.
//
// Precision = |ours ∩ truth| / |ours| and recall = |ours ∩ truth| / |truth| over
// the scored edges of all snippets together (micro-averaged), then per category.
//
// # How names are matched
//
// Names are compared as strings, both in PyCG's scheme, which capguard's graph
// shares (DESIGN.md, "Context model (v2)", item 6): the dotted module path
// relative to the working directory plus the qualified name; module-level code
// is the module's own name ("main", "from_module"); nested functions and
// classes are dotted under their parent ("main.func.inner", "main.A.B.bfunc").
// The differences, and what the scorer does with each:
//
//   - Lambdas. PyCG names a lambda `<lambdaN>`, N counting the lambdas of the
//     enclosing scope (module, class or function) from 1 in source order:
//     `func1(lambda: 1, lambda: 2)` at module level defines "main.<lambda1>" and
//     "main.<lambda2>". A capguard name in that form is matched as it is. A
//     lambda named otherwise ("<lambda>", "<lambda@12>": any path component
//     starting with "<lambda" and not `<lambdaN>`) is renumbered by its line
//     among the lambdas of the same parent when its name is unique and no two
//     of them share a line; one that cannot be numbered (same-line lambdas,
//     duplicate names) makes the tool's edges to and from it unscoreable:
//     counted in the "unscoreable" column and listed with -v, never counted
//     as hits (the truth's edges to that lambda stay in the recall's
//     denominator, as misses). Naming lambdas PyCG's way avoids this.
//   - Constructors. A call of a class is an edge to the `__init__` that Python
//     runs: the class's own, or the first one in its MRO ("main.B()" with
//     `class B(A)` and only A defining `__init__` is "main -> main.A.__init__").
//     A class with no `__init__` in the snippet has no constructor edge. A
//     capguard edge to the class name itself is not rewritten: it is an extra.
//   - Modules. PyCG lists module nodes (`"from_module": []`) but never an edge
//     *to* a module: an import is not a call. capguard edges to module names are
//     extras like any other.
//   - Implicit protocol calls. PyCG's truth has `for x in Cls()` calling
//     `Cls.__iter__` and `Cls.__next__` (generators/*), `super()` and
//     `StopIteration` as `<builtin>` callees, and a decorator application as a
//     call from the scope holding the decorated def ("main -> main.dec"). The
//     edges between snippet functions among these are scored as they are.
//   - The snippet root's own __init__.py (imports/parent_import,
//     imports/relative_import) has no name in PyCG's scheme (PyCG is given the
//     folder as the package). Edges from or to it on either side are
//     unscoreable and listed.
//   - A name in capguard's output that belongs to none of the snippet's modules
//     (capguard lists project functions only, so such a name means a naming
//     difference, e.g. a package prefix) is unscoreable, counted and listed.
//
// # Where the ground truth is not plain Python semantics
//
// Scored as they are (nothing is excluded), but worth knowing when reading a
// score:
//
//   - Flow sensitivity. decorators/assigned (`a = dec1; a = dec2; @a`),
//     dicts/assign, dicts/nested and dicts/update (an entry overwritten
//     before the call) expect only the last binding. A flow-insensitive
//     analysis reports the overwritten one too: four extra edges, which
//     alone put precision near 98.4% on an otherwise perfect graph. PyCG
//     makes the same four.
//   - mro/self_assignment expects "main -> main.B.func", but `self` in
//     B.funcb is the A instance `a`, so `self.func` is A.func on both calls:
//     an analysis that follows the instance misses that edge.
//   - builtins/map calls `map([1, 2, 3], func)`, arguments reversed (it would
//     raise TypeError when iterated); the truth still has main calling func,
//     func2, func3 and func3.func (through the loop over the result).
//   - dynamic/eval expects `eval("func()")` to call func.
//
// PyCG itself, scored by this program (`-pycg`, saved in pycg-self.txt):
// precision 97.9% (229/234), recall 94.2% (229/243).
//
// The exit status is 1 when a tool run fails (no JSON output) or when
// -min-precision / -min-recall are not met, 2 on a usage error.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	capguard := flag.String("capguard", "", "the capguard binary to score (runs `capguard graph --format json .` in each snippet)")
	pycgSelf := flag.Bool("pycg", false, "score PyCG itself (python3 -m pycg --package . main.py, PYTHONPATH=the checkout)")
	python := flag.String("python", "python3", "the Python interpreter for -pycg")
	verbose := flag.Bool("v", false, "list every missed, extra, unscoreable and not-scored edge per snippet")
	run := flag.String("run", "", "score only the snippets whose category/case matches this regular expression")
	minP := flag.Float64("min-precision", 0, "exit 1 when precision is below this (0..1)")
	minR := flag.Float64("min-recall", 0, "exit 1 when recall is below this (0..1)")
	timeout := flag.Duration("timeout", 2*time.Minute, "limit for one tool run")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: pycg (-capguard BINARY | -pycg) [-v] [-run REGEXP] PYCG_CHECKOUT\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || (*capguard == "") == !*pycgSelf {
		flag.Usage()
		os.Exit(2)
	}
	root := flag.Arg(0)
	snippets, err := SnippetsDir(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pycg:", err)
		os.Exit(2)
	}
	var tool Tool
	if *pycgSelf {
		checkout, _ := filepath.Abs(filepath.Dir(filepath.Dir(snippets)))
		tool = PyCGTool(*python, checkout, *timeout)
	} else {
		bin, err := filepath.Abs(*capguard)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pycg:", err)
			os.Exit(2)
		}
		tool = CapguardTool(bin, *timeout)
	}
	var filter *regexp.Regexp
	if *run != "" {
		if filter, err = regexp.Compile(*run); err != nil {
			fmt.Fprintln(os.Stderr, "pycg: -run:", err)
			os.Exit(2)
		}
	}
	rep, err := Score(snippets, tool, filter)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pycg:", err)
		os.Exit(2)
	}
	rep.Print(os.Stdout, *verbose)
	code := 0
	if rep.Failed > 0 {
		code = 1
	}
	if p, r := rep.Total.Precision(), rep.Total.Recall(); p < *minP || r < *minR {
		fmt.Printf("below the bar: precision %.1f%% (min %.1f%%), recall %.1f%% (min %.1f%%)\n", 100*p, 100**minP, 100*r, 100**minR)
		code = 1
	}
	os.Exit(code)
}

// SnippetsDir finds the snippets folder from a PyCG checkout, its
// micro-benchmark folder, or the snippets folder itself.
func SnippetsDir(root string) (string, error) {
	for _, c := range []string{filepath.Join(root, "micro-benchmark", "snippets"), filepath.Join(root, "snippets"), root} {
		if m, _ := filepath.Glob(filepath.Join(c, "*", "*", "callgraph.json")); len(m) > 0 {
			return c, nil
		}
	}
	return "", fmt.Errorf("%s: no PyCG micro-benchmark snippets (<category>/<case>/callgraph.json) found", root)
}

// Graph is a call graph: caller -> callees (a set).
type Graph map[string]map[string]bool

func (g Graph) add(from, to string) {
	if g[from] == nil {
		g[from] = map[string]bool{}
	}
	g[from][to] = true
}

// Edge is one call edge.
type Edge struct{ From, To string }

func (e Edge) String() string { return e.From + " -> " + e.To }

// ToolOutput is one tool run's graph, with what it said besides.
type ToolOutput struct {
	Graph Graph
	// Unscoreable are edges of the output whose names cannot be compared
	// (a lambda that cannot be numbered), with the reason.
	Unscoreable map[Edge]string
	Notes       []string // file errors and the like, shown with -v
	// ProjectOnly: the tool lists project functions only (capguard), so a
	// name outside the snippet's modules is a naming difference
	// (unscoreable), not an external callee (not scored).
	ProjectOnly bool
}

// Tool runs a call-graph generator in one snippet folder.
type Tool func(dir string) (*ToolOutput, error)

// CapguardTool runs `capguard graph --format json .` in the snippet folder.
func CapguardTool(bin string, timeout time.Duration) Tool {
	return func(dir string) (*ToolOutput, error) {
		stdout, stderr, err := runIn(dir, timeout, nil, bin, "graph", "--format", "json", ".")
		out, perr := ParseCapguard(stdout)
		if perr != nil {
			return nil, fmt.Errorf("capguard graph: %v (%v); stderr: %s", perr, err, firstLines(stderr, 5))
		}
		if err != nil {
			// Exit status 2 with a document: file errors, listed in it.
			out.Notes = append(out.Notes, fmt.Sprintf("capguard graph: %v", err))
		}
		return out, nil
	}
}

// PyCGTool runs PyCG from a checkout on the snippet's main.py.
func PyCGTool(python, checkout string, timeout time.Duration) Tool {
	return func(dir string) (*ToolOutput, error) {
		env := append(os.Environ(), "PYTHONPATH="+checkout)
		stdout, stderr, err := runIn(dir, timeout, env, python, "-m", "pycg", "--package", ".", "main.py")
		if err != nil {
			return nil, fmt.Errorf("pycg: %v; stderr: %s", err, firstLines(stderr, 5))
		}
		var m map[string][]string
		if err := json.Unmarshal(stdout, &m); err != nil {
			return nil, fmt.Errorf("pycg: output is not a call graph: %v", err)
		}
		g := Graph{}
		for from, tos := range m {
			for _, to := range tos {
				g.add(from, to)
			}
		}
		return &ToolOutput{Graph: g, Unscoreable: map[Edge]string{}}, nil
	}
}

func runIn(dir string, timeout time.Duration, env []string, name string, args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v", timeout)
	}
	return o.Bytes(), e.Bytes(), err
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, " | ")
}

// capguardDoc is the part of `capguard graph --format json` the scorer reads.
type capguardDoc struct {
	Version   int `json:"version"`
	Functions []struct {
		Name  string   `json:"name"`
		Path  string   `json:"path"`
		Line  int      `json:"line"`
		Calls []string `json:"calls"`
	} `json:"functions"`
	Errors []struct {
		Path    string `json:"path"`
		Message string `json:"message"`
	} `json:"errors"`
}

var (
	pycgLambda = regexp.MustCompile(`^<lambda[0-9]+>$`)
	anyLambda  = regexp.MustCompile(`^<lambda`)
)

// ParseCapguard turns capguard's graph document into a caller→callees map,
// numbering lambdas PyCG's way where capguard names them otherwise (see the
// package documentation).
func ParseCapguard(data []byte) (*ToolOutput, error) {
	var doc capguardDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("output is not a graph document: %v", err)
	}
	if doc.Version != 1 {
		return nil, fmt.Errorf("graph document version %d, want 1", doc.Version)
	}
	out := &ToolOutput{Graph: Graph{}, Unscoreable: map[Edge]string{}, ProjectOnly: true}
	for _, e := range doc.Errors {
		out.Notes = append(out.Notes, "file error: "+e.Path+": "+e.Message)
	}
	// Lambdas not in PyCG's form: number them by line within their parent.
	count := map[string]int{}
	for _, f := range doc.Functions {
		count[f.Name]++
	}
	type lam struct {
		name, parent, last string
		line               int
	}
	byParent := map[string][]lam{}
	for _, f := range doc.Functions {
		parts := splitName(f.Name)
		last := parts[len(parts)-1]
		if anyLambda.MatchString(last) && !pycgLambda.MatchString(last) {
			parent := strings.Join(parts[:len(parts)-1], ".")
			byParent[parent] = append(byParent[parent], lam{f.Name, parent, last, f.Line})
		}
	}
	rename := map[string]string{}  // capguard's lambda name -> PyCG's
	unnamed := map[string]string{} // a lambda that cannot be numbered -> why
	for parent, ls := range byParent {
		sort.SliceStable(ls, func(i, j int) bool { return ls[i].line < ls[j].line })
		// PyCG numbers every lambda of the scope; already PyCG-named ones
		// take their own numbers, so mixing the two forms is not numbered.
		mixed := false
		for _, f := range doc.Functions {
			if strings.HasPrefix(f.Name, parent+".<lambda") && pycgLambda.MatchString(strings.TrimPrefix(f.Name, parent+".")) {
				mixed = true
			}
		}
		for i, l := range ls {
			switch {
			case count[l.name] > 1:
				unnamed[l.name] = "lambda name not unique in capguard's output"
			case mixed:
				unnamed[l.name] = "lambda named " + l.last + " beside PyCG-numbered lambdas of the same scope"
			case l.line == 0 || (i > 0 && ls[i-1].line == l.line) || (i+1 < len(ls) && ls[i+1].line == l.line):
				unnamed[l.name] = "lambdas of one scope share a line: cannot number " + l.last + " as PyCG does"
			default:
				rename[l.name] = parent + ".<lambda" + strconv.Itoa(i+1) + ">"
			}
		}
	}
	for _, f := range doc.Functions {
		from := f.Name
		if r, ok := rename[from]; ok {
			from = r
		}
		if out.Graph[from] == nil {
			out.Graph[from] = map[string]bool{}
		}
		for _, to := range f.Calls {
			if why, ok := unnamed[f.Name]; ok {
				out.Unscoreable[Edge{f.Name, to}] = why
				continue
			}
			if why, ok := unnamed[to]; ok {
				out.Unscoreable[Edge{from, to}] = why
				continue
			}
			if r, ok := rename[to]; ok {
				to = r
			}
			out.Graph.add(from, to)
		}
	}
	return out, nil
}

// splitName splits a dotted name on the dots outside <...> (a PyCG name
// such as "<**PyStr**>.join" or "main.<lambda1>" keeps its brackets whole).
func splitName(name string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range name {
		switch r {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case '.':
			if depth == 0 {
				parts = append(parts, name[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, name[start:])
}

// Snippet is one scored snippet.
type Snippet struct {
	Name     string // category/case
	Category string
	Modules  []string
	Truth    []Edge // scored truth edges
	Ours     []Edge // scored edges of the tool
	Hits     []Edge
	Missed   []Edge // in truth, not in ours
	Extra    []Edge // in ours, not in truth
	// NotScored are truth edges with an end outside the snippet (builtins,
	// external modules), with the reason; OursNotScored the same of the
	// tool's edges, for a tool that names external callees (PyCG).
	NotScored, OursNotScored map[Edge]string
	// Unscoreable are edges (of the truth or of the tool) whose names the
	// scorer cannot compare, with the reason.
	Unscoreable map[Edge]string
	Notes       []string
	Err         error // the tool failed: Ours is empty
}

// Counts are the edge counts of a set of snippets.
type Counts struct {
	Snippets, Truth, Ours, Hits, NotScored, Unscoreable, Failed int
}

func (c *Counts) add(s *Snippet) {
	c.Snippets++
	c.Truth += len(s.Truth)
	c.Ours += len(s.Ours)
	c.Hits += len(s.Hits)
	c.NotScored += len(s.NotScored)
	c.Unscoreable += len(s.Unscoreable)
	if s.Err != nil {
		c.Failed++
	}
}

// Precision is hits over the tool's scored edges (1 when it has none).
func (c Counts) Precision() float64 {
	if c.Ours == 0 {
		return 1
	}
	return float64(c.Hits) / float64(c.Ours)
}

// Recall is hits over the truth's scored edges (1 when there are none).
func (c Counts) Recall() float64 {
	if c.Truth == 0 {
		return 1
	}
	return float64(c.Hits) / float64(c.Truth)
}

// Report is the whole benchmark's score.
type Report struct {
	Snippets   []*Snippet
	Categories []string
	ByCategory map[string]*Counts
	Total      Counts
	Failed     int // snippets whose tool run failed
}

// Score runs the tool on every snippet under the snippets folder (those
// whose category/case matches filter, when given) and scores it.
func Score(snippetsDir string, tool Tool, filter *regexp.Regexp) (*Report, error) {
	truthFiles, err := filepath.Glob(filepath.Join(snippetsDir, "*", "*", "callgraph.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(truthFiles)
	var dirs []string
	for _, t := range truthFiles {
		dir := filepath.Dir(t)
		name := filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(dir)), filepath.Base(dir)))
		if filter == nil || filter.MatchString(name) {
			dirs = append(dirs, dir)
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no snippet matches", snippetsDir)
	}
	snips := make([]*Snippet, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	sem := make(chan bool, runtime.GOMAXPROCS(0))
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- true
			defer func() { <-sem }()
			snips[i], errs[i] = ScoreSnippet(dir, tool)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	rep := &Report{Snippets: snips, ByCategory: map[string]*Counts{}}
	for _, s := range snips {
		c := rep.ByCategory[s.Category]
		if c == nil {
			c = &Counts{}
			rep.ByCategory[s.Category] = c
			rep.Categories = append(rep.Categories, s.Category)
		}
		c.add(s)
		rep.Total.add(s)
		if s.Err != nil {
			rep.Failed++
		}
	}
	return rep, nil
}

// ScoreSnippet runs the tool in one snippet folder and scores its output. An
// error is returned only for a broken snippet (no readable truth); a tool
// failure is recorded in the snippet (Err) and scores as an empty graph.
func ScoreSnippet(dir string, tool Tool) (*Snippet, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s := &Snippet{
		Name:          filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(abs)), filepath.Base(abs))),
		Category:      filepath.Base(filepath.Dir(abs)),
		NotScored:     map[Edge]string{},
		OursNotScored: map[Edge]string{},
		Unscoreable:   map[Edge]string{},
	}
	mods, rootInit, err := snippetModules(abs)
	if err != nil {
		return nil, err
	}
	s.Modules = mods
	data, err := os.ReadFile(filepath.Join(abs, "callgraph.json"))
	if err != nil {
		return nil, err
	}
	var truthMap map[string][]string
	if err := json.Unmarshal(data, &truthMap); err != nil {
		return nil, fmt.Errorf("%s: callgraph.json: %v", s.Name, err)
	}
	truth := Graph{}
	for from, tos := range truthMap {
		for _, to := range tos {
			truth.add(from, to)
		}
	}
	var ours Graph
	projectOnly := false
	out, err := tool(abs)
	if err != nil {
		s.Err = err
		ours = Graph{}
	} else {
		ours = out.Graph
		s.Notes = out.Notes
		projectOnly = out.ProjectOnly
		for e, why := range out.Unscoreable {
			s.Unscoreable[e] = "ours: " + why
		}
	}
	inSnippet := func(name string) bool { return belongs(name, mods) }
	rootName := func(name string) bool {
		return rootInit && (name == "" || name == "__init__" || strings.HasPrefix(name, "__init__.") || strings.HasPrefix(name, "."))
	}

	truthSet := map[Edge]bool{}
	for _, e := range edges(truth) {
		switch {
		case inSnippet(e.From) && inSnippet(e.To):
			truthSet[e] = true
			s.Truth = append(s.Truth, e)
		default:
			s.NotScored[e] = "truth: " + outside(e, inSnippet)
		}
	}
	oursSet := map[Edge]bool{}
	for _, e := range edges(ours) {
		switch {
		case inSnippet(e.From) && inSnippet(e.To):
			oursSet[e] = true
			s.Ours = append(s.Ours, e)
		case rootName(e.From) || rootName(e.To):
			s.Unscoreable[e] = "ours: the snippet root's __init__.py has no name in PyCG's scheme"
		case !projectOnly:
			s.OursNotScored[e] = "ours: " + outside(e, inSnippet)
		default:
			s.Unscoreable[e] = "ours: " + outside(e, inSnippet) + " (not one of the snippet's modules: a naming difference?)"
		}
	}
	for _, e := range s.Truth {
		if oursSet[e] {
			s.Hits = append(s.Hits, e)
		} else {
			s.Missed = append(s.Missed, e)
		}
	}
	for _, e := range s.Ours {
		if !truthSet[e] {
			s.Extra = append(s.Extra, e)
		}
	}
	return s, nil
}

func outside(e Edge, in func(string) bool) string {
	var names []string
	for _, n := range []string{e.From, e.To} {
		if !in(n) {
			names = append(names, n)
		}
	}
	if len(names) == 2 && names[0] == names[1] {
		names = names[:1]
	}
	return strings.Join(names, ", ") + " outside the snippet"
}

// belongs reports whether name is one of the modules or is under one.
func belongs(name string, mods []string) bool {
	for _, m := range mods {
		if name == m || strings.HasPrefix(name, m+".") {
			return true
		}
	}
	return false
}

// edges lists a graph's edges, sorted.
func edges(g Graph) []Edge {
	var out []Edge
	for from, tos := range g {
		for to := range tos {
			out = append(out, Edge{from, to})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

// snippetModules lists the module names of a snippet's Python files,
// relative to its folder, and whether the folder has an __init__.py of its
// own (a module PyCG's scheme cannot name).
func snippetModules(dir string) (mods []string, rootInit bool, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".py") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		mod := strings.ReplaceAll(filepath.ToSlash(strings.TrimSuffix(rel, ".py")), "/", ".")
		switch {
		case mod == "__init__":
			rootInit = true
			return nil
		case strings.HasSuffix(mod, ".__init__"):
			mod = strings.TrimSuffix(mod, ".__init__")
		}
		mods = append(mods, mod)
		return nil
	})
	sort.Strings(mods)
	return mods, rootInit, err
}

// Print writes the per-category table and the total, and with verbose
// every snippet's missed, extra, unscoreable and not-scored edges.
func (r *Report) Print(w io.Writer, verbose bool) {
	if verbose {
		for _, s := range r.Snippets {
			s.print(w)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-14s %8s %6s %6s %6s %10s %8s %10s %12s\n", "category", "snippets", "truth", "ours", "hits", "precision", "recall", "not-scored", "unscoreable")
	row := func(name string, c *Counts) {
		fail := ""
		if c.Failed > 0 {
			fail = fmt.Sprintf("  (%d tool runs failed)", c.Failed)
		}
		fmt.Fprintf(w, "%-14s %8d %6d %6d %6d %9.1f%% %7.1f%% %10d %12d%s\n", name, c.Snippets, c.Truth, c.Ours, c.Hits,
			100*c.Precision(), 100*c.Recall(), c.NotScored, c.Unscoreable, fail)
	}
	for _, cat := range r.Categories {
		row(cat, r.ByCategory[cat])
	}
	row("all", &r.Total)
	fmt.Fprintln(w, "(micro-averaged over edges between functions the snippets define; not-scored: truth edges to builtins and")
	fmt.Fprintln(w, " external names; unscoreable: edges whose names cannot be compared, listed with -v)")
}

func (s *Snippet) print(w io.Writer) {
	clean := len(s.Missed) == 0 && len(s.Extra) == 0 && len(s.Unscoreable) == 0 && s.Err == nil && len(s.Notes) == 0
	if clean && len(s.NotScored) == 0 {
		fmt.Fprintf(w, "%s: ok (%d edges)\n", s.Name, len(s.Hits))
		return
	}
	fmt.Fprintf(w, "%s: %d/%d truth edges found, %d extra\n", s.Name, len(s.Hits), len(s.Truth), len(s.Extra))
	if s.Err != nil {
		fmt.Fprintf(w, "  ! tool failed: %v\n", s.Err)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  ! %s\n", n)
	}
	for _, e := range s.Missed {
		fmt.Fprintf(w, "  - missed      %s\n", e)
	}
	for _, e := range s.Extra {
		fmt.Fprintf(w, "  + extra       %s\n", e)
	}
	for _, e := range sortedKeys(s.Unscoreable) {
		fmt.Fprintf(w, "  ? unscoreable %s  (%s)\n", e, s.Unscoreable[e])
	}
	for _, m := range []map[Edge]string{s.NotScored, s.OursNotScored} {
		for _, e := range sortedKeys(m) {
			fmt.Fprintf(w, "  . not scored  %s  (%s)\n", e, m[e])
		}
	}
}

func sortedKeys(m map[Edge]string) []Edge {
	out := make([]Edge, 0, len(m))
	for e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
