package capmap

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Record is one function of the map in one context, resolved against the
// working directory of the merge.
type Record struct {
	// Context is Captured or ReplayPrep.
	Context string
	// GraphID is the graph it ran under or prepared.
	GraphID int
	// Name is the `capguard graph` name of the named function the code
	// belongs to ("pkg.mod.Class.method"); Qual its qualified part, Module
	// its module; Anon the anonymous code inside it that ran ("<lambda>"),
	// if that is what ran.
	Name, Module, Qual, Anon string
	// Path is the file in this checkout ("" when the function lies outside
	// both the working directory and the traced run's); RecordedPath the
	// absolute path the tracer saw.
	Path, RecordedPath string
	// Line is the function's first line as recorded.
	Line int
	// Stack is the recorded stack, root (the capture site, or for
	// replay-prep the outermost frame) first, ending with this function.
	Stack []Frame
	// Names are Stack's names, as Name is this record's: the traced chain
	// ("" for a frame outside the project).
	Names []string
	// Reason says why replay-prep ("writes", or "rebind").
	Reason string
	// Writes are a replay-prep function's writes into the graph's storage.
	Writes []Write
	// Compiled: entered inside a torch.compile'd call (Function.Compiled).
	Compiled bool
}

// External reports whether the function lies outside the project (the
// standard library, site-packages elsewhere, a pseudo-file).
func (r Record) External() bool { return r.Path == "" }

// Resolver maps recorded paths onto this checkout: a path under Dir (the
// merge's working directory) is itself; a path under the traced run's
// working directory is the same relative path under Dir (a map recorded on
// another machine or checkout); anything else is outside the project.
type Resolver struct {
	Dir      string // the merge's working directory (absolute)
	TraceDir string // the traced run's working directory, Map.Cwd
}

// NewResolver returns the resolver of m for the working directory dir.
func (m *Map) NewResolver(dir string) Resolver {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return Resolver{Dir: dir, TraceDir: m.Cwd}
}

// Rel is the recorded path relative to the project, with `/`.
func (r Resolver) Rel(recorded string) (string, bool) {
	if rel, ok := relPath(r.Dir, recorded); ok {
		return rel, true
	}
	if r.TraceDir != "" {
		if rel, ok := relPath(r.TraceDir, recorded); ok {
			return rel, true
		}
	}
	return "", false
}

// Local is the file in this checkout for a recorded path ("" outside).
func (r Resolver) Local(recorded string) string {
	rel, ok := r.Rel(recorded)
	if !ok {
		return ""
	}
	return filepath.Join(r.Dir, filepath.FromSlash(rel))
}

// Name is the name of recorded code (path, co_qualname) and its parts.
func (r Resolver) Name(recorded, qual string) (name, module, named, anon string, ok bool) {
	rel, ok := r.Rel(recorded)
	if !ok || !strings.HasSuffix(rel, ".py") {
		return "", "", "", "", false
	}
	module = moduleOfRel(rel)
	named, anon = NamedQual(qual)
	return joinName(module, named), module, named, anon, true
}

func (r Resolver) record(ctx string, graph int, f Function) Record {
	rec := Record{Context: ctx, GraphID: graph, RecordedPath: f.Path, Line: f.FirstLine, Stack: f.Stack, Compiled: f.Compiled}
	name, mod, named, anon, ok := r.Name(f.Path, f.Qual)
	if ok {
		rec.Name, rec.Module, rec.Qual, rec.Anon = name, mod, named, anon
		rec.Path = r.Local(f.Path)
	} else {
		rec.Qual, rec.Anon = NamedQual(f.Qual)
	}
	for _, fr := range f.Stack {
		q := fr.Qual
		if q == "" {
			q = fr.Name
		}
		n, _, _, _, _ := r.Name(fr.Path, q)
		rec.Names = append(rec.Names, n)
	}
	return rec
}

// Captured lists the functions that ran under capture, one record per
// (graph, function); anonymous code is folded into its named function.
func (m *Map) Captured(dir string) []Record {
	r := m.NewResolver(dir)
	var out []Record
	for _, g := range m.Graphs {
		seen := map[string]int{}
		for _, f := range g.Functions {
			rec := r.record(Captured, g.ID, f)
			k := rec.key()
			if i, ok := seen[k]; ok {
				out[i].Compiled = out[i].Compiled || rec.Compiled
				continue
			}
			seen[k] = len(out)
			out = append(out, rec)
		}
	}
	return out
}

// ReplayPrep lists the replay-prep functions, one record per (graph, function).
func (m *Map) ReplayPrep(dir string) []Record {
	r := m.NewResolver(dir)
	var out []Record
	for _, g := range m.Graphs {
		seen := map[string]int{}
		for _, p := range g.ReplayPrep {
			rec := r.record(ReplayPrep, g.ID, p.Function)
			rec.Reason, rec.Writes = p.Reason, p.Writes
			k := rec.key()
			if i, ok := seen[k]; ok {
				out[i].Writes = append(out[i].Writes, p.Writes...)
				continue
			}
			seen[k] = len(out)
			out = append(out, rec)
		}
	}
	return out
}

func (r Record) key() string {
	if r.Name != "" {
		return r.Name
	}
	return r.RecordedPath + ":" + r.Qual
}

// ByContext groups Captured and ReplayPrep by context.
func (m *Map) ByContext(dir string) map[string][]Record {
	return map[string][]Record{Captured: m.Captured(dir), ReplayPrep: m.ReplayPrep(dir)}
}

// Names is the sorted set of project names in records (external ones left out).
func Names(recs []Record) []string {
	set := map[string]bool{}
	for _, r := range recs {
		if !r.External() {
			set[r.Name] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Stale is a record of the map whose function no longer resolves in this
// checkout: its file is gone, or the file no longer defines the name.
type Stale struct {
	Record
	Why string
}

// FindStale returns the project records (external ones are not stale: they
// were never the project's) whose names resolves reports false, and those
// whose file is missing. resolves is the analysis's question "does this
// name exist"; nil checks only that the files exist.
func FindStale(recs []Record, resolves func(name string) bool) []Stale {
	var out []Stale
	seen := map[string]bool{}
	for _, r := range recs {
		if r.External() || seen[r.Context+" "+r.Name] {
			continue
		}
		seen[r.Context+" "+r.Name] = true
		if _, err := os.Stat(r.Path); err != nil {
			out = append(out, Stale{r, "file " + r.Path + " is missing"})
			continue
		}
		if resolves != nil && !resolves(r.Name) {
			out = append(out, Stale{r, "no function " + r.Name + " in " + r.Path})
		}
	}
	return out
}

// RuntimeFinding is a finding of the map resolved against this checkout.
type RuntimeFinding struct {
	Finding
	// LocalPath is Path in this checkout ("" outside the project); Name the
	// function it lies in, in `capguard graph` naming.
	LocalPath, Name string
	// Chain is the recorded stack's names, root first (project frames only).
	Chain []string
	// AllocSite and DropSite are the innermost project frames of the
	// allocation and free stacks ("path:line"), when recorded.
	AllocSite, DropSite string
}

// RuntimeFindings resolves the map's findings against dir.
func (m *Map) RuntimeFindings(dir string) []RuntimeFinding {
	r := m.NewResolver(dir)
	var out []RuntimeFinding
	for _, f := range m.Findings {
		rf := RuntimeFinding{Finding: f, LocalPath: r.Local(f.Path)}
		q := f.Qual
		if n, _, _, _, ok := r.Name(f.Path, q); ok && q != "" {
			rf.Name = n
		}
		stack := f.Stack
		if len(stack) == 0 {
			stack = f.ReaderStack
		}
		for _, fr := range stack {
			q := fr.Qual
			if q == "" {
				q = fr.Name
			}
			if n, _, _, _, ok := r.Name(fr.Path, q); ok {
				rf.Chain = append(rf.Chain, n)
			}
		}
		rf.AllocSite = r.site(f.Alloc)
		rf.DropSite = r.site(f.Dropped)
		out = append(out, rf)
	}
	return out
}

func (r Resolver) site(frames []Frame) string {
	for i := len(frames) - 1; i >= 0; i-- {
		if rel, ok := r.Rel(frames[i].Path); ok {
			return rel + ":" + strconv.Itoa(frames[i].Line)
		}
	}
	return ""
}

// EntryPoints turns records into guard configuration patterns
// ("module:Qual.name", module by package chain) for today's analysis, which
// takes captured roots and replay-prep functions as entry-points and
// replay-prep settings. Module-level code and external records give none.
func EntryPoints(recs []Record) []string {
	set := map[string]bool{}
	for _, r := range recs {
		if r.External() || r.Qual == "" {
			continue
		}
		set[PackageModule(r.Path)+":"+r.Qual] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
