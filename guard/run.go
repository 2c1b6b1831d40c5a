package guard

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/config"
	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/flow"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/internal/par"
	"github.com/cudagraph-capguard/capguard/guard/rules"
	"github.com/cudagraph-capguard/capguard/guard/suppress"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
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
	// and after each file analysed, one call at a time, and never with a
	// lower Done than a call before it of the same phase (inOrder).
	Progress func(Progress)
	// MaxFileSize, when not 0, overrides the config's limit (bytes;
	// negative: no limit).
	MaxFileSize int64
	// CaptureMap names a capture map recorded by `capguard trace` to merge
	// (overrides the config's capture-map).
	CaptureMap string
	// Trees, when set, keeps the syntax trees between runs that do not
	// overlap (TreeCache in api.go): `capguard server` re-parses only the files
	// that changed.
	Trees *TreeCache `json:"-"`
	// TreeFile, when set, keeps parsed syntax trees in that file between
	// runs, by the hash of what the parser read (treeStore): a run after an
	// edit parses only the files that changed. The results cache sets it.
	TreeFile string
	// Digests asks for Result.Digests (the results cache stores them).
	Digests bool
	// PriorDigests are digests an earlier run with this configuration
	// made (its Result.Digests, as the results cache stored them), by
	// path, of files whose bytes have not changed since: the caller
	// vouches for that. PriorRelevance is that run's Result.Relevance. A
	// digest is made from a file's bytes, its tree, its relevance and the
	// configuration's tokens only (cachekey.go), so a run with Digests
	// whose Relevance is PriorRelevance takes each parsed file's prior
	// digest instead of making it again: after a code edit to one file of
	// FlagGems' src/ the digests cost the run about 0.2-0.3 s, beside
	// the solve. A prior digest kept without its lines
	// (FileDigest.Trimmed) is made again, whole, for a file with findings
	// or roots, as the cache keeps those whole. A run with Trees and no
	// PriorDigests takes the digests the TreeCache kept from its last run
	// (capguard server), when that run read the same tokens.
	PriorDigests   map[string]*FileDigest `json:"-"`
	PriorRelevance *Relevance             `json:"-"`
	// Context, when set, cancels the run: once it is done, Run stops at
	// its next look (between stages, between files, every few thousand
	// steps of the points-to solve) and returns its error, never a part
	// of a result. capguard server cancels a run that a newer edit made
	// stale, so that the run for the edit starts at once.
	Context context.Context `json:"-"`
	// CoverageRequired drops the static findings in captured or
	// replay-prep context that the capture map's line coverage says did
	// not run there (guard/analysis/coverage.go); without it they are warnings.
	CoverageRequired bool
	// First names files (as findings name them, Diagnostic.Path) whose
	// rules run before the other files', and Early, when set too, is
	// called once in the run, as soon as those are done, with a Result
	// that holds their findings and file errors only: what the whole
	// result will hold for them (the suppression filter and CG302 work a
	// file at a time), sooner by the other files' rules. capguard server
	// publishes the open buffers' diagnostics from it. Not called for a
	// run that merges a capture map (its coverage is the project's), nor
	// for one that fails or is canceled before.
	First []string      `json:"-"`
	Early func(*Result) `json:"-"`
	// FirstOnly checks the files First names and no others: the result's
	// findings are theirs alone (Early's, as the whole run would give
	// them), the other files' rules do not run, and its file errors are
	// the run's load errors and theirs. A run over files named in their
	// project (check FILE, check --stdin-filename) reports on those files
	// only, and about a fifth of a run on FlagGems' src/ is the other
	// files' rules. A run that merges a capture map checks every file.
	FirstOnly bool
}

// inOrder serializes a run's progress reports and drops one whose Done,
// in the phase of the report before it, is lower: the files are read and
// analysed on every core, and a worker's count, taken before another's,
// could reach the callback after it (a progress bar's "80/100" after
// "100/100"; an LSP progress that went back). nil stays nil.
func inOrder(progress func(Progress)) func(Progress) {
	if progress == nil {
		return nil
	}
	var mu sync.Mutex
	var last Progress
	return func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Phase == last.Phase && p.Done < last.Done {
			return
		}
		last = p
		progress(p)
	}
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
	// TreesRead is how many of the parsed files' trees were read from
	// Options.TreeFile instead (their bytes had not changed).
	TreesRead int
	Errors    []FileError
	// Warnings are problems with the run itself that are not findings: an
	// entry point, replay-prep pattern or preset that matches nothing, no
	// Python file found, a capture root from which nothing is reached.
	Warnings []string
	// Presets are the framework presets in effect: the config's and the
	// flags', and those detected from the project's own package and its
	// imports (unless presets has "none").
	Presets []string
	Config  *Config
	sources map[string][]byte // path -> the bytes analysed, for parsed files

	// Digests are the parsed files' digests by path (cachekey.go), for
	// the results cache, when Options.Digests asks; from a cache entry,
	// the stored ones (a file without findings or roots keeps no lines:
	// FileDigest.Trimmed).
	Digests map[string]*FileDigest
	// Relevance is what beside the configuration the prefilter read
	// (cachekey.go): a digest made apart from the run needs it.
	Relevance Relevance
	// redigest makes a parsed file's digest as the run made the others
	// (Options.PriorDigests: a trimmed one made whole); nil when the run
	// made none.
	redigest func(*File) *FileDigest
	// digestTokens are the tokens the digests' relevance was read with
	// (the configuration's and the extension modules'), joined.
	digestTokens string

	// Settings say what the run assumed (settings.go); nil from a cache
	// entry that did not keep them.
	Settings *Settings
}

// Source returns the bytes a parsed file was analysed from (the offsets of
// its findings and fixes point into them), or nil for a file that was not
// parsed.
func (r *Result) Source(path string) []byte { return r.sources[path] }

// SetSource gives a result the bytes a file was analysed from, for a
// result rebuilt from the results cache (which keeps no sources): the
// caller vouches that they are the ones the stored run read.
func (r *Result) SetSource(path string, src []byte) {
	if r.sources == nil {
		r.sources = map[string][]byte{}
	}
	r.sources[path] = src
}

// The configuration checks rule codes against the rule list.
func init() { config.UnknownCodes = ValidateCodes }

// Run checks the paths and returns the findings.
func Run(opts Options) (res *Result, err error) {
	defer func() {
		// A panic in a stage over the whole project (the call graph, the
		// contexts) cannot be one file's error; the run fails with a
		// message instead of a crash (the per-file stages recover their
		// own).
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("internal error (a capguard bug: please report it): %v%s", v, panicSite())
		}
	}()
	opts.Progress = inOrder(opts.Progress)
	proj, res, sel, err := prepare(opts, false)
	if err != nil {
		return nil, err
	}
	tm := newTimer()
	if lift := boundRulesGarbage(); lift != nil {
		defer lift()
	}
	first := firstFiles(proj, opts.First)
	var early func([]*Diagnostic, []FileError)
	var part *Result
	only := opts.FirstOnly && proj.Traced == nil
	if only || opts.Early != nil && len(opts.First) > 0 && proj.Traced == nil {
		early = func(ds []*Diagnostic, errs []FileError) {
			part = earlyResult(proj, res, ds, errs, sel, first)
			if opts.Early != nil {
				opts.Early(part)
			}
		}
	}
	diags, err := analyze(proj, sel, opts.Progress, &res.Errors, opts.Context, first, early, only)
	if err != nil {
		return nil, err
	}
	if proj.Traced != nil {
		// A capture map's findings go through the one suppression filter
		// (finish) as every other finding does.
		diags = proj.Traced.ApplyCoverage(proj, diags, opts.CoverageRequired)
		diags = append(diags, proj.Traced.Findings(proj, sel)...)
	}
	if only {
		res.Diagnostics = part.Diagnostics // the first files' alone, filtered (earlyResult)
	} else {
		res.Diagnostics = suppress.Finish(proj, diags, sel)
	}
	files := map[string]*File{}
	for _, f := range proj.Files {
		files[f.Path] = f
	}
	for _, d := range res.Diagnostics {
		d.Normalize(files[d.Path]) // the form the JSON report and the cache show
	}
	wholeDigests(res, files)
	if opts.Trees != nil && res.Digests != nil {
		opts.Trees.keepDigests(proj.Files, res.Digests, res.Relevance, res.digestTokens)
	}
	tm.mark("rules")
	sort.SliceStable(res.Errors, func(i, j int) bool { return res.Errors[i].Path < res.Errors[j].Path })
	return res, nil
}

// prepare loads the config, finds and loads the files, and builds the
// project's index, call graph and contexts.
//
// all parses every file (capguard graph); otherwise the prefilter
// (prefilter.go) leaves out the import-connected groups of files with no
// capture-related token.
func prepare(opts Options, all bool) (*Project, *Result, Selector, error) {
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
			return nil, nil, Selector{}, err
		}
	}
	sel := Selector{Select: cfg.Select, Ignore: append(append([]string{}, cfg.Ignore...), opts.Ignore...)}
	if len(opts.Select) > 0 {
		sel.Select = opts.Select
	}
	if len(sel.Select) > 0 && len(cfg.ExtendSelect) > 0 {
		// The config's extend-select adds to a selection (ruff's), the
		// config's or the caller's; an empty one is every rule already.
		// Every route comes here (capguard check leaves the config's to
		// this fold), so check and server report the same rules and share
		// one results cache entry.
		sel.Select = append(append([]string{}, sel.Select...), cfg.ExtendSelect...)
	}
	if bad := ValidateCodes(append(append([]string{}, opts.Select...), opts.Ignore...)); len(bad) > 0 {
		return nil, nil, Selector{}, fmt.Errorf("unknown rule code %v (see capguard rule --all)", bad)
	}
	res := &Result{Config: cfg}
	files := discover(opts.Paths, cfg, opts.Overlay, &res.Errors)
	res.Files = len(files)
	if len(opts.Paths) > 0 && len(files) == 0 && len(res.Errors) == 0 {
		res.Warnings = append(res.Warnings, "no Python file found")
	}
	proj, err := load(files, opts, cfg, res, all)
	if err != nil {
		return nil, nil, Selector{}, err
	}
	res.Parsed = len(proj.Files)
	res.Settings = settingsOf(cfg, proj, sel)
	res.Warnings = append(res.Warnings, proj.Ctx.Warnings...)
	res.sources = map[string][]byte{}
	for _, f := range proj.Files {
		res.sources[f.Path] = f.Src
	}
	return proj, res, sel, nil
}

// testFactBudget replaces the points-to fact budget when not 0 (tests: a
// solve that passes it on a small project).
var testFactBudget int

// load reads every file, picks the ones to parse (the prefilter, unless
// all), parses and indexes them in parallel (one parser per worker), and
// builds the project's call graph and contexts. File errors go to
// res.Errors; a file with a syntax error is still analysed.
func load(files []string, opts Options, cfg *Config, res *Result, all bool) (*Project, error) {
	limit := cfg.MaxFileBytes()
	if opts.MaxFileSize != 0 {
		limit = max(opts.MaxFileSize, 0)
	}
	cwd, _ := os.Getwd()
	tm := newTimer()
	type read struct {
		src     []byte
		abs     string
		err     *FileError
		rel     bool
		imports []importRef
	}
	reads := make([]read, len(files))
	extra := configTokens(cfg)
	var done atomic.Int64
	par.Do(len(files), func(i int) {
		src, err := readSource(files[i], opts.Overlay, limit)
		r := read{src: src, err: err}
		if err == nil {
			abs, e := filepath.Abs(files[i])
			if e != nil {
				abs = files[i]
			}
			r.abs = filepath.Clean(abs)
			if !all {
				r.rel = relevant(src, extra)
			}
		}
		reads[i] = r
		if opts.Progress != nil {
			opts.Progress(Progress{Phase: "reading", Done: int(done.Add(1)), Total: len(files)})
		}
	})
	var okIdx []int
	for i := range reads {
		if reads[i].err != nil {
			res.Errors = append(res.Errors, *reads[i].err)
		} else {
			okIdx = append(okIdx, i)
		}
	}
	// The project's declared CUDA extension modules are kernel ops
	// (torchapi.CUDAExtensionBuilders).
	extSet := map[string]bool{}
	for _, i := range okIdx {
		if bytes.Contains(reads[i].src, []byte("CUDAExtension")) {
			for _, g := range extensionGlobs(files[i], reads[i].abs, reads[i].src) {
				extSet[g] = true
			}
		}
	}
	extOps := sortedSet(extSet)
	var lexPresets []string // presets the imports of every file read turn on
	if !all {
		par.Do(len(okIdx), func(k int) {
			i := okIdx[k]
			reads[i].imports = lexImports(reads[i].src)
		})
		imps := make([][]importRef, len(okIdx))
		for k, i := range okIdx {
			imps[k] = reads[i].imports
		}
		lexPresets = importedPresets(imps, cfg.Presets)
		res.Relevance = Relevance{ExtensionOps: extOps, ImportPresets: lexPresets}
		// Both are known only now: a file that holds an extension
		// module's name, or every literal part of a detected preset's
		// pattern, is relevant too (and its digest says so: extra).
		extTokens := extensionTokens(extOps)
		extra = append(extra, extTokens...)
		if groups := presetTokens(lexPresets); len(groups) > 0 || len(extTokens) > 0 {
			par.Do(len(okIdx), func(k int) {
				if i := okIdx[k]; !reads[i].rel {
					reads[i].rel = relevantBeyond(reads[i].src, extTokens, groups)
				}
			})
		}
	}
	parse := make([]bool, len(okIdx))
	if all {
		for k := range parse {
			parse[k] = true
		}
	} else if anyRelevant := func() bool {
		for _, i := range okIdx {
			if reads[i].rel {
				return true
			}
		}
		return false
	}(); anyRelevant {
		bare := make([]*index.File, len(okIdx))
		rel := make([]bool, len(okIdx))
		imps := make([][]importRef, len(okIdx))
		for k, i := range okIdx {
			bare[k] = index.NewFile(files[i], reads[i].abs, "", nil, nil)
			rel[k], imps[k] = reads[i].rel, reads[i].imports
		}
		parse = selectFiles(bare, rel, imps)
	}
	// A file named on the command line is always parsed (its syntax
	// errors reported): by itself it changes no finding, since what it
	// could reach or be reached from is its group's.
	named := map[string]bool{}
	for _, p := range opts.Paths {
		named[p] = true
	}
	for k, i := range okIdx {
		if named[files[i]] {
			parse[k] = true
		}
	}
	tm.mark(fmt.Sprintf("read and select files (%d of %d to parse)", countTrue(parse), len(parse)))
	if err := canceled(opts.Context); err != nil {
		return nil, err
	}
	var todo, skipped []int
	for k, i := range okIdx {
		if parse[k] {
			todo = append(todo, i)
		} else {
			skipped = append(skipped, i)
		}
	}
	serrs := make([]*FileError, len(skipped))
	par.Do(len(skipped), func(k int) { serrs[k] = unparsedSyntax(files[skipped[k]], reads[skipped[k]].src) })
	for _, e := range serrs {
		if e != nil {
			res.Errors = append(res.Errors, *e)
		}
	}
	root := ModuleRoot(opts.Paths, cfg) // module names are relative to it
	parsed := make([]*File, len(todo))
	perrs := make([]*FileError, len(todo))
	if opts.Trees != nil {
		opts.Trees.begin()
		defer opts.Trees.end()
	}
	var store *treeStore
	if opts.TreeFile != "" {
		store = newTreeStore(opts.TreeFile)
	}
	par.Do(len(todo), func(k int) {
		i := todo[k]
		if opts.Trees != nil {
			if parsed[k] = opts.Trees.file(files[i], reads[i].abs, root, reads[i].src); parsed[k] != nil {
				return
			}
		}
		parsed[k], perrs[k] = parseFile(files[i], reads[i].abs, root, reads[i].src, store)
		if opts.Trees != nil && perrs[k] == nil {
			opts.Trees.put(reads[i].abs, reads[i].src, parsed[k].Tree)
		}
	})
	if store != nil {
		// The pack is encoded and written while the solve runs on one
		// core; the run waits for it at the end of loading.
		res.TreesRead = int(store.loaded.Load())
		done := make(chan int, 1)
		go func() { done <- store.finish() }()
		defer func() {
			kept := <-done
			tm.note(fmt.Sprintf("syntax trees: %d read from %s, %d kept", res.TreesRead, opts.TreeFile, kept))
		}()
	}
	var ifiles []*File
	for k := range todo {
		if perrs[k] != nil {
			res.Errors = append(res.Errors, *perrs[k])
			continue
		}
		ifiles = append(ifiles, parsed[k])
		if parsed[k].Tree.Syntax != "" {
			res.Errors = append(res.Errors, FileError{Path: parsed[k].Path, Message: parsed[k].Tree.Syntax, Syntax: true})
		}
	}
	tm.mark("parse and index files")
	if err := canceled(opts.Context); err != nil {
		return nil, err
	}
	if !all && opts.Digests {
		// Per-file digests let the results cache serve a stored result
		// after an edit to comments, docstrings and blank lines only
		// (cachekey.go). They read the trees' shape and text, nothing the
		// solve writes (syntax.Node.Aux), and the solve runs on one core:
		// they are made on the other while it runs, and the run waits for
		// them at the end of loading.
		rel := map[string]bool{}
		for _, i := range todo {
			rel[files[i]] = reads[i].rel
		}
		prior, priorRel := opts.PriorDigests, opts.PriorRelevance
		res.digestTokens = string(bytes.Join(extra, []byte{0}))
		if prior == nil && opts.Trees != nil {
			prior, priorRel = opts.Trees.digests(ifiles, res.digestTokens)
		}
		if priorRel == nil || !priorRel.equal(res.Relevance) {
			prior = nil // another relevance: another Sum, maybe
		}
		fresh, reused := ifiles, map[string]*FileDigest{}
		if len(prior) > 0 {
			fresh = nil
			for _, f := range ifiles {
				if d := prior[f.Path]; d != nil && f.Tree.Syntax == "" {
					reused[f.Path] = d
				} else {
					fresh = append(fresh, f)
				}
			}
		}
		res.redigest = func(f *File) *FileDigest { return digestOf(f, rel[f.Path], extra) }
		digs := make(chan map[string]*FileDigest, 1)
		go func() {
			made := fileDigests(fresh, rel, extra)
			maps.Copy(made, reused)
			digs <- made
		}()
		defer func() {
			res.Digests = <-digs
			tm.note(fmt.Sprintf("file digests (results cache): %d made while the solve ran, %d taken from the run before", len(fresh), len(reused)))
		}()
	}
	idx := index.NewProject(ifiles)
	tm.mark("module tree")
	cfg = withDetectedPresets(cfg, ifiles, lexPresets)
	res.Presets = cfg.Presets
	idx.ModuleBases = cfg.ModuleBases()
	defer paceSolve()() // after the contexts
	// CAPGUARD_BUILD_ORDER=reverse is a developer's measure of how much
	// the graph depends on the files' order (bench/order.sh), and
	// CAPGUARD_RESUME_LAST=PATH (a checked file's path as findings name
	// it) of what a solve resumed after adding that file gives
	// (bench/resume.sh); the results cache keys on neither, so measure
	// with --no-cache.
	resume := os.Getenv("CAPGUARD_RESUME_LAST")
	var stop func() bool
	if ctx := opts.Context; ctx != nil {
		stop = func() bool { return ctx.Err() != nil }
	}
	g := flow.Analyze(idx, flow.Options{Device: cfg.DeviceType(), FactBudget: testFactBudget,
		ReverseBuild: os.Getenv("CAPGUARD_BUILD_ORDER") == "reverse", ResumeLast: resume, Canceled: stop, FactDump: os.Getenv("CAPGUARD_FACTS")})
	if g.Canceled {
		return nil, canceled(opts.Context)
	}
	if g.Resumed > 0 {
		tm.note(fmt.Sprintf("resumed solve after adding %s: %.3f s", resume, g.Resumed.Seconds()))
		if g.ResumeBroken != "" {
			tm.note("resumed solve may differ from the whole one: " + g.ResumeBroken)
		} else {
			tm.note("resumed solve made the whole solve's decisions")
		}
	}
	// The solve's garbage and the tables it dropped (flow.Analyze) are
	// collected now: the collector runs at 4x (cli's tuneGC), so without
	// this the contexts and rules grow the heap on top of them (FlagGems'
	// src/: peak 1.15 GiB, 0.86 with it, for about 0.3 s of CPU). A small
	// heap, whose peak does not matter, is left to the collector's pace.
	if largeHeap() {
		runtime.GC()
	}
	tm.mark(fmt.Sprintf("points-to and call graph (%d nodes, %d facts)", g.Nodes(), g.Facts))
	if g.Saturated > 0 {
		res.Warnings = append(res.Warnings, budgetWarning(g, ifiles))
	}
	proj := &Project{Files: ifiles, Idx: idx, G: g, Cfg: cfg, KernelOps: append(cfg.KernelOpGlobs(), extOps...)}
	ccfg := cfg.ContextsConfig(cwd)
	ccfg.KernelOps = append(ccfg.KernelOps, extOps...)
	if file := captureMapFile(opts, cfg); file != "" {
		t, err := loadTraced(file, cwd)
		if err != nil {
			return nil, err
		}
		// The folder the traced run's working directory stands for: the
		// working directory when the map's paths name the run's files
		// there, else the configuration's folder, the module root or the
		// project's root (a run from another folder).
		abs := make(map[string]bool, len(ifiles))
		for _, f := range ifiles {
			abs[filepath.Clean(f.Abs)] = true
		}
		var first string
		if len(opts.Paths) > 0 {
			first = ProjectRoot(opts.Paths[0], cfg)
		}
		var cfgDir string
		if cfg != nil && cfg.Path != "" {
			cfgDir, _ = filepath.Abs(cfg.Dir())
		}
		t.Anchor([]string{cwd, cfgDir, root, first}, func(p string) bool { return abs[p] })
		proj.Traced = t
		ccfg.Traced = t.Records()
	}
	ccfg.Canceled = stop
	proj.Ctx = contexts.Compute(idx, g, ccfg)
	tm.mark("contexts")
	if err := canceled(opts.Context); err != nil { // proj.Ctx.Canceled implies it
		return nil, err
	}
	return proj, nil
}

// earlyResult is what Options.Early is given: the first files' findings
// (ds, which analyze found) through the suppression filter and in the
// form Run gives them, and the first files' errors (those of the run so
// far, then errs, analyze's). Everything else in it is empty.
func earlyResult(proj *Project, res *Result, ds []*Diagnostic, errs []FileError, sel Selector, keep map[string]bool) *Result {
	sub := &Project{Idx: proj.Idx, G: proj.G, Ctx: proj.Ctx, Cfg: proj.Cfg, KernelOps: proj.KernelOps}
	files := map[string]*File{}
	for _, f := range proj.Files {
		if keep[f.Path] {
			sub.Files = append(sub.Files, f)
			files[f.Path] = f
		}
	}
	out := &Result{Config: res.Config, Presets: res.Presets, Settings: res.Settings, sources: res.sources}
	out.Diagnostics = suppress.Finish(sub, ds, sel)
	for _, d := range out.Diagnostics {
		d.Normalize(files[d.Path])
	}
	for _, e := range res.Errors {
		if keep[e.Path] {
			out.Errors = append(out.Errors, e)
		}
	}
	out.Errors = append(out.Errors, errs...)
	sort.SliceStable(out.Errors, func(i, j int) bool { return out.Errors[i].Path < out.Errors[j].Path })
	return out
}

// firstFiles are the paths, as findings name them, of the project's files
// that names (Options.First) names, spelled so or by their absolute path.
func firstFiles(proj *Project, names []string) map[string]bool {
	want := map[string]bool{}
	for _, p := range names {
		want[p] = true
		if abs, err := filepath.Abs(p); err == nil {
			want[abs] = true
		}
	}
	keep := map[string]bool{}
	for _, f := range proj.Files {
		if want[f.Path] || want[f.Abs] {
			keep[f.Path] = true
		}
	}
	return keep
}

// canceled is the error of a done context (Options.Context), else nil.
func canceled(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}

// readSource reads one file's bytes (the overlay's when it has them) and
// refuses what capguard cannot check: not a regular file, over limit
// bytes (0: no limit), binary, undecodable (PEP 263 coding, else UTF-8),
// CR-only line endings. The source it returns is UTF-8.
func readSource(path string, overlay map[string][]byte, limit int64) ([]byte, *FileError) {
	fail := func(format string, a ...any) ([]byte, *FileError) {
		return nil, &FileError{Path: path, Message: fmt.Sprintf(format, a...)}
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
		return nil, &FileError{Path: path, Message: fmt.Sprintf("binary file (NUL byte at offset %d); skipped", i), Decode: true}
	}
	src, _, derr := DecodeSource(src) // PEP 263 (guard/source/encoding.go): positions are in the decoded text
	if derr != nil {
		return nil, &FileError{Path: path, Message: derr.Error(), Decode: true}
	}
	if bytes.IndexByte(src, '\n') < 0 && bytes.IndexByte(src, '\r') >= 0 {
		// Python reads a lone CR as a line end; tree-sitter's grammar does not.
		return fail("CR-only line endings (classic Mac OS); capguard reads LF or CRLF files only; skipped")
	}
	return src, nil
}

// internalError is the file error for a panic while analysing one file:
// the file's findings are left out, the other files' are reported.
func internalError(path, stage string, v any) *FileError {
	return &FileError{Path: path, Message: fmt.Sprintf("internal error while %s this file (a capguard bug: please report it with the file): %v%s; its findings are left out", stage, v, panicSite())}
}

// panicSite is where the panic being recovered was raised (" at
// guard/flow/solver.go:120"), asked from the deferred function that
// recovers it (the panicking frames are still on the stack then).
func panicSite() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	past := false
	for {
		f, more := frames.Next()
		if past && !strings.HasPrefix(f.Function, "runtime.") {
			file := f.File
			if i := strings.LastIndex(file, "/guard/"); i >= 0 {
				file = file[i+1:]
			}
			return fmt.Sprintf(" at %s:%d", file, f.Line)
		}
		if f.Function == "runtime.gopanic" {
			past = true
		}
		if !more {
			return ""
		}
	}
}

// parseFile parses and indexes one file's source; its module name is
// relative to the project root.
func parseFile(path, abs, root string, src []byte, store *treeStore) (f *File, ferr *FileError) {
	defer func() {
		if v := recover(); v != nil {
			f, ferr = nil, internalError(path, "parsing", v)
		}
	}()
	// Triton kernel bodies are device code: parsed as `...` (syntax.BlankKernels).
	psrc, _ := syntax.BlankKernels(src)
	var tree *syntax.Tree
	var key [32]byte
	if store != nil {
		key = treeKey(psrc)
		tree = store.load(key, len(psrc))
	}
	if tree == nil {
		var err error
		if tree, err = Parse(psrc); err != nil {
			return nil, &FileError{Path: path, Message: err.Error()}
		}
		if store != nil {
			store.store(key, tree)
		}
	}
	if tree.Syntax == "" {
		tree.Syntax = syntax.Python2Syntax(tree.Root, src) // py2.go
	}
	return index.NewFile(path, abs, index.ModuleName(abs, root), src, tree), nil
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

// analyze runs the rules in every context of every function, one file at
// a time on every core (the rules only read the project; the lazily built
// facts some rules share are built before).
//
// A panic while checking one file (or one region) is that file's error in
// errs: the other files' findings are still reported.
//
// The files keep holds are checked first, their regions with them, and
// early (when set) is called with their findings, deduplicated and
// given CG302 as the whole run's are, and their internal errors, before
// the other files are checked (with only, they are not, and errs gets
// those internal errors alone).
func analyze(proj *Project, sel Selector, progress func(Progress), errs *[]FileError, ctx context.Context, keep map[string]bool, early func([]*Diagnostic, []FileError), only bool) ([]*Diagnostic, error) {
	a := newAnalysis(proj)
	rules.Prime(a)
	// The rules below run on every core and resolve names through the
	// index; sealed, it answers them from its memo without writing.
	proj.Idx.Seal()
	// The rules that run in each context, worked out once.
	rulesIn := map[Context][]*Rule{}
	for _, rule := range Rules() {
		for _, c := range contexts.Order {
			if rule.Run != nil && rule.RunsIn(c) && sel.Enabled(rule.ID) {
				rulesIn[c] = append(rulesIn[c], rule)
			}
		}
	}
	perFile := make([][]*Diagnostic, len(proj.Files))
	failed := make([]*FileError, len(proj.Files))
	var done, found atomic.Int64
	total := len(proj.Files) // the files to check (only: the first ones)
	checkFile := func(i int) {
		f := proj.Files[i]
		if canceled(ctx) != nil {
			return
		}
		defer func() {
			if v := recover(); v != nil {
				perFile[i], failed[i] = nil, internalError(f.Path, "checking", v)
			}
		}()
		facts := newFileFacts()
		var out []*Diagnostic
		for _, fn := range append([]*Function{f.Top}, f.Funcs...) {
			ctxs := a.Reached[fn]
			if len(ctxs) == 0 || fn.Kind == index.Lambda {
				continue
			}
			stmts := bodyStmts(fn)
			for _, c := range contexts.Order {
				r := ctxs[c]
				if r == nil {
					continue
				}
				var skip map[*Node]bool
				for _, x := range proj.Ctx.ExcludedIn(fn, c) {
					if skip == nil {
						skip = map[*Node]bool{}
					}
					skip[x] = true
				}
				for _, rule := range rulesIn[c] {
					rule.Run(&Pass{Rule: rule, Proj: proj, File: f, Fn: fn, Ctx: c, Stmts: stmts,
						Chain: r.Names(), Resolution: r.Weakest, Reach: r, Cond: r.Cond, Skip: skip, Facts: facts, A: a, Out: &out})
				}
			}
		}
		perFile[i] = out
		n := found.Add(int64(len(out)))
		if progress != nil {
			progress(Progress{Phase: "analysing", Done: int(done.Add(1)), Total: total, Findings: int(n)})
		}
	}
	// The regions are checked on every core too, then merged in their
	// order: one internal error a file, the first region's.
	regOut := make([][]*Diagnostic, len(a.Regions))
	regPanic := make([]*FileError, len(a.Regions))
	checkRegion := func(i int) {
		reg := a.Regions[i]
		defer func() {
			if v := recover(); v != nil {
				regOut[i], regPanic[i] = nil, internalError(reg.Fn.File.Path, "checking a region of", v)
			}
		}()
		var ds []*Diagnostic
		for _, rule := range rulesIn[reg.Ctx] {
			rule.Run(&Pass{Rule: rule, Proj: proj, File: reg.Fn.File, Fn: reg.Fn, Ctx: reg.Ctx, Stmts: reg.Stmts,
				Chain: []string{reg.Fn.FullName()}, Resolution: Resolved, Region: reg, A: a, Out: &ds})
		}
		regOut[i] = ds
	}
	// merge gathers what the files keep says to (nil: every file) found,
	// in the files' order and then the regions', and their internal
	// errors: one a file, its own first, else its first region's.
	merge := func(keep map[string]bool) ([]*Diagnostic, []FileError) {
		var out []*Diagnostic
		var errs []FileError
		broken := map[string]bool{}
		for i, ds := range perFile {
			if keep != nil && !keep[proj.Files[i].Path] {
				continue
			}
			out = append(out, ds...)
			if failed[i] != nil {
				errs = append(errs, *failed[i])
				broken[failed[i].Path] = true
			}
		}
		for i, reg := range a.Regions {
			path := reg.Fn.File.Path
			if keep != nil && !keep[path] {
				continue
			}
			if e := regPanic[i]; e != nil {
				if !broken[path] {
					errs = append(errs, *e)
					broken[path] = true
				}
				continue
			}
			out = append(out, regOut[i]...)
		}
		out = dedupAfter(a, out)
		if keep != nil {
			// A project-wide rule (CG205) reports on every file: the
			// files keep names get their part.
			kept := out[:0]
			for _, d := range out {
				if keep[d.Path] {
					kept = append(kept, d)
				}
			}
			out = kept
		}
		return out, errs
	}
	// The first files (and their regions), then the others.
	var firstFiles, otherFiles, firstRegs, otherRegs []int
	if early == nil {
		keep = nil
	}
	for i, f := range proj.Files {
		if keep[f.Path] {
			firstFiles = append(firstFiles, i)
		} else {
			otherFiles = append(otherFiles, i)
		}
	}
	for i, reg := range a.Regions {
		if keep[reg.Fn.File.Path] {
			firstRegs = append(firstRegs, i)
		} else {
			otherRegs = append(otherRegs, i)
		}
	}
	if only && early != nil {
		total = len(firstFiles)
	}
	if early != nil {
		par.Do(len(firstFiles), func(k int) { checkFile(firstFiles[k]) })
		if err := canceled(ctx); err != nil {
			return nil, err
		}
		par.Do(len(firstRegs), func(k int) { checkRegion(firstRegs[k]) })
		out, ferrs := merge(keep)
		early(out, ferrs)
		if only {
			*errs = append(*errs, ferrs...)
			if progress != nil {
				progress(Progress{Phase: "analysing", Done: total, Total: total, Findings: len(out)})
			}
			return nil, nil
		}
	}
	par.Do(len(otherFiles), func(k int) { checkFile(otherFiles[k]) })
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	par.Do(len(otherRegs), func(k int) { checkRegion(otherRegs[k]) })
	out, ferrs := merge(nil)
	*errs = append(*errs, ferrs...)
	if progress != nil {
		progress(Progress{Phase: "analysing", Done: len(proj.Files), Total: len(proj.Files), Findings: len(out)})
	}
	return out, nil
}

// dedupAfter is dedup's findings and the After rules' (CG302) on them.
func dedupAfter(a *analysis.Analysis, in []*Diagnostic) []*Diagnostic {
	out := dedup(in)
	for _, rule := range Rules() {
		if rule.After != nil {
			out = append(out, rule.After(a, out)...)
		}
	}
	return out
}

// dedup keeps one finding per (path, rule, range): an error (proved) over
// a warning, then the one whose context comes first in contexts.Order.
func dedup(in []*Diagnostic) []*Diagnostic {
	rank := map[Context]int{}
	for i, c := range contexts.Order {
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
		// A proved finding (an error) wins over an unproved one, so that
		// its message, context and chain are the ones that prove it.
		if d.Severity == SeverityError && b.Severity != SeverityError ||
			d.Severity == b.Severity && (rank[d.Context] < rank[b.Context] || d.Context == b.Context && d.Resolution.Strength() > b.Resolution.Strength()) {
			best[k] = d
		}
	}
	out := make([]*Diagnostic, 0, len(order))
	for _, k := range order {
		out = append(out, best[k])
	}
	return out
}

// timer prints phase times on stderr when CAPGUARD_TIMING is set.
type timer struct {
	on   bool
	last time.Time
}

func newTimer() *timer { return &timer{on: os.Getenv("CAPGUARD_TIMING") != "", last: time.Now()} }

// note prints a line without a time (CAPGUARD_TIMING).
func (t *timer) note(what string) {
	if t.on {
		fmt.Fprintf(os.Stderr, "capguard: %s\n", what)
	}
}

func (t *timer) mark(what string) {
	if !t.on {
		return
	}
	now := time.Now()
	// CAPGUARD_TIMING=mem also prints the live heap after a collection.
	heap := ""
	if os.Getenv("CAPGUARD_TIMING") == "mem" {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = fmt.Sprintf(" (live heap %d MiB, %s)", ms.HeapAlloc>>20, peakRSS())
	}
	fmt.Fprintf(os.Stderr, "capguard: %-45s %7.3f s%s\n", what, now.Sub(t.last).Seconds(), heap)
	t.last = now
}

// peakRSS is the process' peak resident set so far (Linux), for
// CAPGUARD_TIMING=mem.
func peakRSS() string {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return "peak RSS " + strings.Join(strings.Fields(line)[1:], " ")
		}
	}
	return "peak RSS unknown"
}

// withDetectedPresets returns cfg with the presets detected from the
// project: its own top-level packages and what its files import
// (DetectPresets), and the presets the imports of files the prefilter left
// out turn on (imported: importedPresets); "none" among the presets turns
// detection off.
func withDetectedPresets(cfg *Config, files []*File, imported []string) *Config {
	var have []string
	seen := map[string]bool{}
	for _, p := range cfg.Presets {
		if p == "none" {
			out := *cfg
			out.Presets = nil
			for _, q := range cfg.Presets {
				if q != "none" {
					out.Presets = append(out.Presets, q)
				}
			}
			return &out
		}
		if !seen[p] {
			seen[p] = true
			have = append(have, p)
		}
	}
	tops, imports := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		m := f.Module
		for m != nil && m.Parent != nil && m.Parent.File != nil {
			m = m.Parent
		}
		if m != nil && m.Name != "" {
			tops[m.Name] = true
		}
		for _, q := range f.Imports {
			imports[q] = true
		}
	}
	for _, q := range imported {
		for _, d := range Presets[q].Detect {
			imports[d] = true // an import in a file the prefilter left out
		}
	}
	detected := DetectPresets(sortedSet(tops), sortedSet(imports))
	if len(detected) == 0 {
		return cfg
	}
	own := map[string]bool{} // the presets of the project's own packages
	for _, p := range DetectPresets(sortedSet(tops), nil) {
		own[p] = true
	}
	out := *cfg
	for _, p := range detected {
		if !seen[p] {
			seen[p] = true
			have = append(have, p)
			if !own[p] {
				if out.Imported == nil {
					out.Imported = map[string]bool{}
				}
				out.Imported[p] = true
			}
		}
	}
	out.Presets = have
	return &out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
