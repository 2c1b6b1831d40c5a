package guard

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Options for Run.
type Options struct {
	Paths []string // files and folders as the user named them
	// Overlay maps a path (as it appears in Diagnostic.Path) to contents to
	// analyse instead of the disk's (the fixer re-checks its output so).
	Overlay map[string][]byte
	Select  []string // codes or prefixes, "ALL"; overrides the config's
	Ignore  []string // added to the config's
	// ConfigPath names a config file; "" discovers one upwards from the
	// first path.
	ConfigPath string
	// Config, when set, is used as it is (no discovery).
	Config *Config
	// Progress, when set, is called as the run goes: after each file read
	// and after each file analysed. It may be called from several
	// goroutines at once.
	Progress func(Progress)
	// MaxFileSize, when not 0, overrides the config's limit (bytes;
	// negative: no limit).
	MaxFileSize int64
}

// Progress is where a run stands.
type Progress struct {
	Phase    string // "reading" (and parsing), then "analysing"
	Done     int    // files done in this phase
	Total    int    // files in this phase
	Findings int    // findings so far (analysing), before suppressions
}

// Result of a run.
type Result struct {
	Diagnostics []*Diagnostic // suppressed findings removed; sorted by path, offset, rule
	Files       int           // Python files checked
	Parsed      int           // of those, files parsed (the others hold no token that matters)
	Errors      []FileError
	// Warnings are problems with the run itself that are not findings: an
	// entry point, replay-prep pattern or preset that matches nothing, no
	// Python file found, a capture root from which nothing is reached.
	Warnings []string
	Config   *Config
	sources  map[string][]byte // path -> the bytes analysed, for parsed files
}

// Source returns the bytes a parsed file was analysed from (the offsets of
// its findings and fixes point into them), or nil for a file that was not
// parsed.
func (r *Result) Source(path string) []byte { return r.sources[path] }

// prefilterTokens: a file holding none of these cannot start a capture
// (torch.cuda.graph, CUDAGraph.capture_begin, make_graphed_callables), run
// a replay, launch a Triton or torch.ops kernel, match a preset, hold a
// suppression or claim capture safety. Such a file is not parsed up front;
// it is parsed on demand when a call from an analysed file leads into it
// (a helper module with a `.item()` that captured code calls), so skipping
// it loses nothing. On the standard library this skips almost every file.
var prefilterTokens = [][]byte{
	[]byte("torch.cuda"), []byte("CUDAGraph"), []byte("capture_begin"), []byte("make_graphed_callables"),
	[]byte(".replay("), []byte("triton"), []byte("torch.ops"), []byte("capguard"),
	[]byte("apture-safe"), []byte("apture safe"), []byte("apture_safe"), []byte("raph-safe"),
	[]byte("raph safe"), []byte("raph_safe"), []byte("safe to capture"), []byte("raph capture"),
	// Preset entry points and replay-prep methods.
	[]byte("cuda_graph"), []byte("replay_prepare"), []byte("forward_decode"), []byte("MetadataBuilder"),
	[]byte("_prepare_inputs"), []byte("reload_weights"), []byte("update_weights_from"), []byte("AttentionImpl"),
	[]byte("sgl_kernel"), []byte("flashinfer"), []byte("_custom_ops"),
}

// relevant reports whether src must be parsed up front: it holds a
// prefilter token or one of the config's own names (entry-point modules
// and functions, kernel ops).
func relevant(src []byte, extra [][]byte) bool {
	for _, t := range prefilterTokens {
		if bytes.Contains(src, t) {
			return true
		}
	}
	for _, t := range extra {
		if bytes.Contains(src, t) {
			return true
		}
	}
	return false
}

// configTokens are the names from the config that make a file relevant.
func configTokens(cfg *Config) [][]byte {
	var out [][]byte
	for _, e := range append(append(append([]string{}, cfg.EntryPoints...), cfg.ReplayPrep...), cfg.KernelOps...) {
		for _, part := range strings.FieldsFunc(e, func(r rune) bool { return r == ':' || r == '.' || r == '*' }) {
			if len(part) >= 3 {
				out = append(out, []byte(part))
			}
		}
	}
	return out
}

// Run checks the paths and returns the findings.
func Run(opts Options) (*Result, error) {
	cfg := opts.Config
	if cfg == nil {
		var err error
		switch {
		case opts.ConfigPath != "":
			cfg, err = LoadConfig(opts.ConfigPath)
			if err == nil && cfg == nil {
				err = fmt.Errorf("%s: no [tool.capguard] table", opts.ConfigPath)
			}
		case len(opts.Paths) > 0:
			cfg, err = FindConfig(opts.Paths[0])
		default:
			cfg = &Config{}
		}
		if err != nil {
			return nil, err
		}
	}
	sel := Selector{Select: cfg.Select, Ignore: append(append([]string{}, cfg.Ignore...), opts.Ignore...)}
	if len(opts.Select) > 0 {
		sel.Select = opts.Select
	}
	if bad := ValidateCodes(append(append([]string{}, opts.Select...), opts.Ignore...)); len(bad) > 0 {
		return nil, fmt.Errorf("unknown rule code %v (see capguard rule --all)", bad)
	}
	res := &Result{Config: cfg}
	files := discover(opts.Paths, cfg, opts.Overlay, &res.Errors)
	res.Files = len(files)

	// Read and parse in parallel, one parser per goroutine.
	slots := make([]loaded, len(files))
	namer := &moduleNamer{}
	modules := make([]string, len(files))
	for i, p := range files {
		modules[i] = namer.module(p)
	}
	extra := configTokens(cfg)
	limit := cfg.MaxFileBytes()
	if opts.MaxFileSize != 0 {
		limit = max(opts.MaxFileSize, 0)
	}
	// Files the user named are always parsed (and their syntax errors
	// reported); the prefilter applies to files found by walking folders.
	named := map[string]bool{}
	for _, p := range opts.Paths {
		named[p] = true
	}
	var next, done atomic.Int64
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				slots[i] = loadFile(files[i], modules[i], opts.Overlay, extra, named[files[i]], limit)
				if opts.Progress != nil {
					opts.Progress(Progress{Phase: "reading", Done: int(done.Add(1)), Total: len(files)})
				}
			}
		}()
	}
	wg.Wait()

	proj := newProject(cfg)
	skipped := map[string]int{}
	for i := range slots {
		s := &slots[i]
		switch {
		case s.err != nil:
			res.Errors = append(res.Errors, *s.err)
		case s.skip:
			if _, dup := skipped[modules[i]]; !dup {
				skipped[modules[i]] = i
			}
		default:
			proj.add(s.file)
			if s.file.Tree.Syntax != "" {
				res.Errors = append(res.Errors, FileError{Path: s.file.Path, Message: s.file.Tree.Syntax, Syntax: true})
			}
		}
	}
	proj.load = func(module string) *File {
		i, ok := skipped[module]
		if !ok {
			return nil
		}
		delete(skipped, module)
		s := loadFile(files[i], module, opts.Overlay, nil, true, limit)
		if s.err != nil {
			res.Errors = append(res.Errors, *s.err)
		}
		if s.file == nil {
			return nil
		}
		proj.add(s.file)
		if s.file.Tree.Syntax != "" {
			res.Errors = append(res.Errors, FileError{Path: s.file.Path, Message: s.file.Tree.Syntax, Syntax: true})
		}
		return s.file
	}
	diags, err := analyze(proj, sel, opts.Progress)
	if err != nil {
		return nil, err
	}
	res.Parsed = len(proj.Files)
	res.Diagnostics = finish(proj, diags, sel)
	res.sources = map[string][]byte{}
	for _, f := range proj.Files {
		res.sources[f.Path] = f.Src
	}
	sort.SliceStable(res.Errors, func(i, j int) bool { return res.Errors[i].Path < res.Errors[j].Path })
	return res, nil
}

// loaded is one file after reading: parsed, skipped by the prefilter, or an error.
type loaded struct {
	file *File
	err  *FileError
	skip bool
}

// loadFile reads and (unless the prefilter says it cannot matter) parses one
// file. force parses regardless of the prefilter; a file over limit bytes
// (0: no limit) is not read.
func loadFile(path, module string, overlay map[string][]byte, extra [][]byte, force bool, limit int64) (s loaded) {
	fail := func(format string, a ...any) loaded {
		return loaded{err: &FileError{Path: path, Message: fmt.Sprintf(format, a...)}}
	}
	src, ok := overlay[path]
	size := int64(len(src))
	if !ok {
		st, err := os.Stat(path)
		if err != nil {
			return fail("%s", describeOSError(err))
		}
		if !st.Mode().IsRegular() {
			// A named pipe or a device would block the read or never end.
			return fail("not a regular file (%s); skipped", describeMode(st.Mode()))
		}
		size = st.Size()
	}
	if limit > 0 && size > limit {
		return fail("%.1f MiB, over the %d MiB file size limit; not checked (raise max-file-size in the config or --max-file-size, 0 for no limit)",
			float64(size)/(1<<20), limit>>20)
	}
	if !ok {
		var err error
		src, err = os.ReadFile(path)
		if err != nil {
			return fail("%s", describeOSError(err))
		}
	}
	if i := bytes.IndexByte(src, 0); i >= 0 {
		return loaded{err: &FileError{Path: path, Message: fmt.Sprintf("binary file (NUL byte at offset %d); skipped", i), Decode: true}}
	}
	src, _, derr := DecodeSource(src) // PEP 263 (encoding.go): positions are in the decoded text
	if derr != nil {
		return loaded{err: &FileError{Path: path, Message: derr.Error(), Decode: true}}
	}
	if bytes.IndexByte(src, '\n') < 0 && bytes.IndexByte(src, '\r') >= 0 {
		// Python reads a lone CR as a line end; tree-sitter's grammar does not.
		return fail("CR-only line endings (classic Mac OS); capguard reads LF or CRLF files only; skipped")
	}
	if !force && !relevant(src, extra) {
		return loaded{skip: true}
	}
	tree, err := Parse(src)
	if err != nil {
		return fail("%s", err)
	}
	if tree.Syntax == "" {
		tree.Syntax = python2Syntax(tree.Root, src) // py2.go
	}
	return loaded{file: newFile(path, module, src, tree)}
}

// describeMode names a non-regular file's kind.
func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "mode " + m.String()
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// analyze builds the call graph and contexts and runs the rules.
func analyze(proj *Project, sel Selector, progress func(Progress)) ([]*Diagnostic, error) {
	a := &analysis{proj: proj, edges: map[*Function][]edge{}, calleeOf: map[*Node]*Function{}, callers: map[*Function]int{},
		reached: map[*Function]map[Context]*reach{}, claims: map[*Function]*Node{}}
	a.buildGraph()
	a.propagate()
	var out []*Diagnostic
	// The rules that run in each context, worked out once.
	rulesIn := map[Context][]*Rule{}
	for _, rule := range Rules() {
		for _, c := range contextOrder { // regions are Captured or ReplayPrep
			if rule.Run != nil && rule.runsIn(c) && sel.Enabled(rule.ID) {
				rulesIn[c] = append(rulesIn[c], rule)
			}
		}
	}
	for i := 0; i < len(proj.Files); i++ { // files loaded on demand join the end
		f := proj.Files[i]
		if progress != nil && i > 0 {
			progress(Progress{Phase: "analysing", Done: i, Total: len(proj.Files), Findings: len(out)})
		}
		for _, fn := range f.allFuncs() {
			ctxs := a.reached[fn]
			if len(ctxs) == 0 {
				continue
			}
			stmts := bodyStmts(fn)
			for _, c := range contextOrder {
				r := ctxs[c]
				if r == nil {
					continue
				}
				for _, rule := range rulesIn[c] {
					rule.Run(&Pass{Rule: rule, Proj: proj, File: f, Fn: fn, Ctx: c, Stmts: stmts,
						Chain: r.chain, a: a, out: &out})
				}
			}
		}
	}
	for _, reg := range a.regions {
		for _, rule := range rulesIn[reg.Ctx] {
			rule.Run(&Pass{Rule: rule, Proj: proj, File: reg.Fn.File, Fn: reg.Fn, Ctx: reg.Ctx, Stmts: reg.Stmts,
				Chain: []string{reg.Fn.Label()}, Region: reg, a: a, out: &out})
		}
	}
	out = dedup(out)
	out = append(out, claimFindings(a, out)...)
	if progress != nil {
		progress(Progress{Phase: "analysing", Done: len(proj.Files), Total: len(proj.Files), Findings: len(out)})
	}
	return out, nil
}

// dedup keeps one finding per (path, rule, range): the one whose context
// comes first in contextOrder, with the highest severity seen.
func dedup(in []*Diagnostic) []*Diagnostic {
	rank := map[Context]int{}
	for i, c := range contextOrder {
		rank[c] = i
	}
	type key struct {
		path, rule string
		s, e       int
	}
	best := map[key]*Diagnostic{}
	var order []key
	for _, d := range in {
		k := key{d.Path, d.Rule.ID, d.Start.Offset, d.End.Offset}
		b, ok := best[k]
		if !ok {
			best[k] = d
			order = append(order, k)
			continue
		}
		sev := b.Severity
		if d.Severity == SeverityError {
			sev = SeverityError
		}
		if rank[d.Context] < rank[b.Context] {
			best[k] = d
		}
		best[k].Severity = sev
	}
	out := make([]*Diagnostic, 0, len(order))
	for _, k := range order {
		out = append(out, best[k])
	}
	return out
}

func sortDiagnostics(ds []*Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Start.Offset != b.Start.Offset {
			return a.Start.Offset < b.Start.Offset
		}
		return a.Rule.ID < b.Rule.ID
	})
}
