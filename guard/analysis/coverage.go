package analysis

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/capmap"
	"github.com/cudagraph-capguard/capguard/guard/index"
)

// Line coverage under capture (capture map version 2): the lines the traced
// run executed while a stream captured, and in the replay-prep windows.
// A static finding in captured (or replay-prep) context is then
//
//   - proved, on a line the run executed there: resolution traced, "ran
//     under capture in the traced run";
//   - a warning, on a line it did not execute in a function it entered: the
//     branch the line is under was not taken ("not executed under capture in
//     the traced run: under `if adapter_data is not None`");
//   - a warning, in a function the run never entered there.
//
// Options.CoverageRequired drops the last two. A map without line coverage
// (version 1) changes nothing. Code run by a torch.compile'd call is neither
// proved nor demoted: Dynamo runs transformed code, so the tracer sees the
// compiled function entered but none of its lines, and never sees the
// functions Dynamo inlined into it. A finding in a function the map records
// as compiled, or in one such a function calls (by the static call graph),
// keeps its severity and says why.

// coverageNote is what applyCoverage did to a finding.
type coverageNote int

const (
	coverNone coverageNote = iota
	coverProved
	coverBranch
	coverNotEntered
)

// ApplyCoverage marks, demotes or (required) drops the static findings by
// the map's line coverage.
func (t *TracedInput) ApplyCoverage(proj *Project, diags []*Diagnostic, required bool) []*Diagnostic {
	cov := t.M.Coverage(t.Cwd)
	if cov == nil {
		return diags
	}
	byPath, byAbs := map[string]*File{}, map[string]*File{}
	for _, f := range proj.Files {
		byPath[f.Path] = f
		byAbs[f.Abs] = f
	}
	entered := map[string]bool{} // ctx, abs path, qual
	compiled := map[string]map[*Function]bool{}
	for _, recs := range [][]capmap.Record{t.M.Captured(t.Cwd), t.M.ReplayPrep(t.Cwd)} {
		for _, r := range recs {
			if r.External() {
				continue
			}
			entered[r.Context+"\x00"+r.Path+"\x00"+r.Qual] = true
			if f := byAbs[r.Path]; r.Compiled && f != nil && f.ByQual[r.Qual] != nil {
				if compiled[r.Context] == nil {
					compiled[r.Context] = map[*Function]bool{}
				}
				compiled[r.Context][f.ByQual[r.Qual]] = true
			}
		}
	}
	for ctx, roots := range compiled {
		compiled[ctx] = compiledReach(proj, roots)
	}
	out := diags[:0]
	for _, d := range diags {
		note := t.cover(d, byPath[d.Path], cov, entered, compiled)
		if required && (note == coverBranch || note == coverNotEntered) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// compiledReach is roots and every project function they call, transitively
// (the static call graph): what a torch.compile'd call may run as compiled
// code.
func compiledReach(proj *Project, roots map[*Function]bool) map[*Function]bool {
	seen := map[*Function]bool{}
	var work []*Function
	for fn := range roots {
		seen[fn] = true
		work = append(work, fn)
	}
	for len(work) > 0 {
		fn := work[len(work)-1]
		work = work[:len(work)-1]
		if proj.G == nil || fn.Body == nil {
			continue
		}
		for _, call := range callsIn(BodyStmts(fn)) {
			for _, e := range proj.G.Callees(call) {
				if e.Callee != nil && !seen[e.Callee] {
					seen[e.Callee] = true
					work = append(work, e.Callee)
				}
			}
		}
	}
	return seen
}

func (t *TracedInput) cover(d *Diagnostic, f *File, cov *capmap.Lines, entered map[string]bool, compiled map[string]map[*Function]bool) coverageNote {
	if f == nil || (d.Context != Captured && d.Context != ReplayPrep) {
		return coverNone
	}
	ctx := capmap.Captured
	where := "under capture"
	if d.Context == ReplayPrep {
		ctx, where = capmap.ReplayPrep, "in replay prep"
	}
	last := d.End.Line
	if last < d.Start.Line {
		last = d.Start.Line
	}
	if cov.Ran(ctx, f.Abs, d.Start.Line, last) {
		d.Resolution = Traced
		d.Message += "; ran " + where + " in the traced run"
		return coverProved
	}
	fn := f.ByQual[d.Function]
	named := fn
	for named != nil && named.Kind == index.Lambda && named.Outer != nil {
		named = named.Outer
	}
	if named != nil && compiled[ctx][named] {
		d.Message += "; in the traced run it ran " + where + " as torch.compile'd code, whose lines the trace does not see"
		return coverNone
	}
	ran := false
	if named != nil {
		ran = entered[ctx+"\x00"+f.Abs+"\x00"+named.Qual]
		if !ran && named.Def != nil {
			ran = cov.Ran(ctx, f.Abs, f.Line(named.Def), lineOf(f, int(named.Def.End)))
		}
	}
	d.Severity = SeverityWarning
	if ran {
		d.Message += "; not executed " + where + " in the traced run"
		if h := blockHeader(f, d.Start.Line, named); h != "" {
			d.Message += ": under `" + h + "`"
		} else {
			d.Message += fmt.Sprintf(" (`%s` ran %s, this line did not)", d.Function, where)
		}
		return coverBranch
	}
	what := "this code"
	if d.Function != "" {
		what = "`" + d.Function + "`"
	}
	d.Message += "; the traced run never ran " + what + " " + where
	return coverNotEntered
}

// lineOf is the 1-based line of a byte offset of f.
func lineOf(f *File, off int) int {
	l, _ := f.Pos(off)
	return l
}

// blockHeader is the header of the innermost block statement (if, elif,
// else, for, while, with, try, except) that holds line, inside fn: the
// nearest line above it indented less than it that opens a block, as
// Python's indentation makes blocks. "" when there is none.
func blockHeader(f *File, line int, fn *Function) string {
	lines := bytes.Split(f.Src, []byte("\n"))
	if line < 1 || line > len(lines) {
		return ""
	}
	indent := func(s []byte) int {
		n := 0
		for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
			n++
		}
		return n
	}
	first := 1
	if fn != nil && fn.Def != nil {
		first = fn.File.Line(fn.Def)
	}
	want := indent(lines[line-1])
	for i := line - 1; i >= first; i-- {
		s := lines[i-1]
		text := strings.TrimSpace(string(s))
		if text == "" || strings.HasPrefix(text, "#") || indent(s) >= want {
			continue
		}
		want = indent(s)
		for _, kw := range []string{"if ", "elif ", "else:", "for ", "while ", "with ", "try:", "except", "async for ", "async with "} {
			if strings.HasPrefix(text, kw) {
				if i := strings.Index(text, " #"); i > 0 {
					text = strings.TrimSpace(text[:i])
				}
				return strings.TrimSuffix(text, ":")
			}
		}
		if strings.HasPrefix(text, "def ") || strings.HasPrefix(text, "async def ") || strings.HasPrefix(text, "class ") {
			return ""
		}
	}
	return ""
}

// FunctionCoverage is a function's share of lines executed in the traced
// run (capguard graph --capture-map, with a map that holds lines).
type FunctionCoverage struct {
	// Lines are the lines of its own statements (nested defs and lambdas
	// left out, and docstrings, which run no code).
	Lines int `json:"lines"`
	// Captured and ReplayPrep are how many of them ran under capture and
	// in replay prep.
	Captured   int `json:"captured"`
	ReplayPrep int `json:"replay_prep"`
	// The listing the HTML capture map shows (not in the graph's JSON):
	// Source is the function's text by line from its def line First to
	// its last; Statements are the lines Lines counts; RanCaptured and
	// RanPrep the lines of First.. the traced run executed under capture
	// and in replay prep (nested code's included: those lines ran too).
	First                            int      `json:"-"`
	Source                           []string `json:"-"`
	Statements, RanCaptured, RanPrep []int    `json:"-"`
}

// functionCoverage is fn's coverage, or nil when the map has no lines or
// none of fn's lines ran.
func CoverageOf(cov *capmap.Lines, fn *Function) *FunctionCoverage {
	if cov == nil || fn.Body == nil || fn.Kind == index.TopLevel {
		return nil
	}
	rows := map[int]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		switch n.Kind() {
		case "function_definition", "lambda", "decorated_definition", "class_definition":
			if n != fn.Def {
				rows[fn.File.Line(n)] = true
				return
			}
		}
		if strings.HasSuffix(n.Kind(), "_statement") && n.Kind() != "try_statement" && n.Kind() != "global_statement" &&
			n.Kind() != "nonlocal_statement" && (fn.Docstring == nil || !(fn.Docstring.Start <= n.Start && n.End <= fn.Docstring.End)) {
			rows[fn.File.Line(n)] = true
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(fn.Body)
	c := &FunctionCoverage{Lines: len(rows)}
	for r := range rows {
		if cov.Captured[fn.File.Abs][r] {
			c.Captured++
		}
		if cov.ReplayPrep[fn.File.Abs][r] {
			c.ReplayPrep++
		}
	}
	if c.Captured == 0 && c.ReplayPrep == 0 {
		return nil
	}
	src := fn.File.Src
	c.First = fn.File.Line(fn.Def)
	text := string(src[fn.File.LineStart(c.First):fn.Def.End])
	c.Source = strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := range c.Source {
		n := c.First + i
		if rows[n] {
			c.Statements = append(c.Statements, n)
		}
		if cov.Captured[fn.File.Abs][n] {
			c.RanCaptured = append(c.RanCaptured, n)
		}
		if cov.ReplayPrep[fn.File.Abs][n] {
			c.RanPrep = append(c.RanPrep, n)
		}
	}
	return c
}
