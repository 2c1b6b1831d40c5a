package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/cli/internal/cache"
	"github.com/cudagraph-capguard/capguard/cli/internal/report"
	"github.com/cudagraph-capguard/capguard/guard"
)

// selectionFlags are shared by check and fix.
func selectionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "select", Usage: "rule codes or prefixes to enable (CG1, CG301, ALL); replaces the config's"},
		&cli.StringSliceFlag{Name: "extend-select", Usage: "rule codes or prefixes to enable besides the selection (--select's or the config's)"},
		&cli.StringSliceFlag{Name: "ignore", Usage: "rule codes or prefixes to disable; added to the config's"},
		&cli.StringSliceFlag{Name: "exclude", Usage: "globs of files and folders to leave out of folder walks (relative to the working directory); replace the config's exclude"},
		&cli.StringSliceFlag{Name: "extend-exclude", Usage: "globs to leave out besides the exclude (relative to the working directory)"},
		&cli.StringFlag{Name: "config", Usage: "config file (pyproject.toml or capguard.toml); default: found upwards from the first path"},
		&cli.StringSliceFlag{Name: "preset", Usage: "framework preset to add (sglang, vllm)"},
		&cli.StringSliceFlag{Name: "entry-point", Usage: "captured entry point \"pkg.mod:Class.method\" to add"},
		&cli.StringSliceFlag{Name: "replay-prep", Usage: "replay-prep function \"pkg.mod:Class.method\" to add"},
		maxFileSizeFlag(),
		&cli.BoolFlag{Name: "no-progress", Usage: "never show progress on a terminal"},
		&cli.StringSliceFlag{Name: "context", Usage: "report only findings in these contexts (captured, replay-prep, post-capture, claimed, launcher, eager)"},
		&cli.StringFlag{Name: "stdin-filename", Usage: "the name of the file read from standard input (PATH -): for messages, the config and per-file-ignores"},
	}
}

// guardOptions builds guard.Options from the shared flags; config errors
// are usage errors (exit 2). No path means "."; "-" reads standard input
// (named by --stdin-filename) into the overlay.
func guardOptions(c *cli.Context) (guard.Options, error) {
	paths := c.Args().Slice()
	stdinName := c.String("stdin-filename")
	if len(paths) == 0 && stdinName != "" {
		paths = []string{"-"}
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var overlay map[string][]byte
	configStart := paths[0]
	for _, p := range paths {
		if p == "-" && len(paths) > 1 {
			return guard.Options{}, usageError("- (standard input) cannot be mixed with other paths")
		}
	}
	if paths[0] == "-" {
		r := c.App.Reader
		if r == nil {
			r = os.Stdin
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return guard.Options{}, exitCode(2, fmt.Errorf("reading standard input: %w", err))
		}
		name := stdinName
		if name == "" {
			name = "-"
			configStart = "."
		} else {
			configStart = name
		}
		overlay = map[string][]byte{name: data}
		paths = []string{name}
	} else if stdinName != "" {
		return guard.Options{}, usageError("--stdin-filename names standard input: give - as the path (capguard %s --stdin-filename %s -)", c.Command.Name, stdinName)
	}
	var cfg *guard.Config
	var err error
	if p := c.String("config"); p != "" {
		cfg, err = guard.LoadConfig(p)
		if err == nil && cfg == nil {
			err = fmt.Errorf("%s: has no [tool.capguard] table", p)
		}
	} else {
		cfg, err = guard.FindConfig(configStart)
	}
	if err != nil {
		return guard.Options{}, exitCode(2, fmt.Errorf("config: %w", oneLineErr(err)))
	}
	for _, p := range splitCodes(c.StringSlice("preset")) {
		if _, ok := guard.Presets[p]; !ok && p != "none" {
			names := sortedPresets()
			return guard.Options{}, usageError("unknown preset %q%s (known: %s)", p, didYouMean(p, names, ""), strings.Join(names, ", "))
		}
		cfg.Presets = append(cfg.Presets, p)
	}
	cfg.EntryPoints = append(cfg.EntryPoints, c.StringSlice("entry-point")...)
	cfg.ReplayPrep = append(cfg.ReplayPrep, c.StringSlice("replay-prep")...)
	if err := cfg.Validate(); err != nil { // the flags' presets and entry points too
		return guard.Options{}, usageError("%v", oneLineErr(err))
	}
	if c.IsSet("exclude") {
		cfg.Exclude = cliGlobs(cfg, splitCodes(c.StringSlice("exclude")))
	}
	cfg.Exclude = append(cfg.Exclude, cliGlobs(cfg, splitCodes(c.StringSlice("extend-exclude")))...)
	sel, ign := splitCodes(c.StringSlice("select")), splitCodes(c.StringSlice("ignore"))
	// The command line's extend-select adds to a selection here; the
	// config's is added by guard (Run's prepare), as on every route, so
	// that a run with the config alone passes no selection of its own and
	// shares its results cache entry with capguard server's.
	ext := splitCodes(c.StringSlice("extend-select"))
	if len(ext) > 0 {
		base := sel
		if len(base) == 0 {
			base = cfg.Select
		}
		if len(base) > 0 { // an empty selection is every rule already
			sel = append(append([]string{}, base...), ext...)
		}
	}
	if bad := guard.ValidateCodes(append(append(append([]string{}, sel...), ign...), ext...)); len(bad) > 0 {
		var ids []string
		for _, r := range guard.Rules() {
			ids = append(ids, r.ID)
		}
		return guard.Options{}, usageError("unknown rule code %s%s (see capguard rule --all)", strings.Join(bad, ", "), didYouMean(strings.ToUpper(bad[0]), ids, ""))
	}
	limit, err := maxFileSize(c)
	if err != nil {
		return guard.Options{}, err
	}
	return guard.Options{Paths: paths, Overlay: overlay, Config: cfg, Select: sel, Ignore: ign, MaxFileSize: limit}, nil
}

// cliGlobs anchors the command line's exclude globs, relative to the
// working directory, at the config's folder (where the config's globs are
// relative to); a glob without a slash matches any path element anywhere.
func cliGlobs(cfg *guard.Config, globs []string) []string {
	wd, err := os.Getwd()
	base, err2 := filepath.Abs(cfg.Dir())
	var out []string
	for _, g := range globs {
		g = filepath.ToSlash(strings.TrimPrefix(g, "./"))
		if err == nil && err2 == nil && strings.Contains(strings.TrimSuffix(g, "/"), "/") {
			if rel, e := filepath.Rel(base, filepath.Join(wd, filepath.FromSlash(g))); e == nil {
				g = filepath.ToSlash(rel)
			}
		}
		out = append(out, g)
	}
	return out
}

// stdinInput reports whether opts read standard input.
func stdinInput(opts guard.Options) bool { return len(opts.Overlay) > 0 }

func sortedPresets() []string {
	names := make([]string, 0, len(guard.Presets))
	for n := range guard.Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func oneLineErr(err error) error { return errors.New(oneLine(err.Error())) }

func maxFileSizeFlag() cli.Flag {
	return &cli.IntFlag{Name: "max-file-size", Usage: "skip files over this many MiB, 0 for no limit",
		DefaultText: fmt.Sprintf("the config's max-file-size, else %d", guard.DefaultMaxFileSize)}
}

// maxFileSize turns --max-file-size into guard.Options.MaxFileSize: 0 when
// not given (the config decides), -1 for no limit, else bytes.
func maxFileSize(c *cli.Context) (int64, error) {
	if !c.IsSet("max-file-size") {
		return 0, nil
	}
	switch v := c.Int("max-file-size"); {
	case v < 0:
		return 0, usageError("--max-file-size %d: give MiB, 0 for no limit", v)
	case v == 0:
		return -1, nil
	default:
		return int64(v) << 20, nil
	}
}

// progress shows on a terminal's stderr where a long run stands: files
// read, then files analysed and findings so far, on one line rewritten at
// most ten times a second. It prints nothing when stderr is not a terminal
// or the run is small.
func progress(enabled bool) (func(guard.Progress), func()) {
	if !enabled || !isatty.IsTerminal(os.Stderr.Fd()) {
		return nil, func() {}
	}
	return progressTo(os.Stderr, 200, 100*time.Millisecond)
}

// progressTo is progress writing to w, for runs of at least minFiles files.
func progressTo(w io.Writer, minFiles int, every time.Duration) (func(guard.Progress), func()) {
	var mu sync.Mutex
	last := time.Time{}
	shown, big := false, false
	return func(p guard.Progress) {
			mu.Lock()
			defer mu.Unlock()
			// The run is big by the files it reads; fewer are analysed.
			big = big || p.Phase == "reading" && p.Total >= minFiles
			if !big || p.Total == 0 || (time.Since(last) < every && p.Done != p.Total) {
				return
			}
			last = time.Now()
			shown = true
			if p.Phase == "reading" {
				fmt.Fprintf(w, "\r\033[Kcapguard: read %d/%d files", p.Done, p.Total)
			} else {
				fmt.Fprintf(w, "\r\033[Kcapguard: analysed %d/%d files, %d findings so far", p.Done, p.Total, p.Findings)
			}
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			if shown {
				fmt.Fprint(w, "\r\033[K")
			}
		}
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "report CUDA-graph capture hazards in Python files and folders",
		ArgsUsage: "[PATH...] (default: .; - reads standard input)",
		Description: `Walks folders for *.py (honouring .gitignore and the config's exclude), follows calls
from capture regions (with torch.cuda.graph, capture_begin..capture_end, make_graphed_callables,
configured entry points, presets) and replay-prep code, and reports hazards with the call chain
that proves where the code runs. Results are cached in .capguard_cache (--no-cache to skip it).

Exit codes: 0 no finding, 1 findings (a syntax error or a file that cannot be decoded counts as
one), 2 usage error, unreadable or missing path, or internal error (the other files are still
checked and reported).`,
		Flags: append(append(append(append(selectionFlags(), outputFlags()...), displayFlags()...), cacheFlags()...),
			&cli.BoolFlag{Name: "exit-zero", Usage: "exit 0 even when there are findings"},
			&cli.BoolFlag{Name: "add-noqa", Usage: "append `# noqa: CGnnn` to each reported line (keeping its other codes) and exit 0"},
			&cli.BoolFlag{Name: "show-settings", Usage: "print what the run assumed (the resolved configuration, each preset and what turned it on, the capture roots found, the conventions matched) and exit 0"},
			&cli.StringFlag{Name: "capture-map", Usage: "merge a capture map recorded by `capguard trace` (`FILE`; overrides the config's capture-map)"},
			&cli.BoolFlag{Name: "coverage-required", Usage: "with a capture map that holds executed lines: drop the captured and replay-prep findings on lines the traced run did not execute there (else warnings)"},
		),
		Action: runCheck,
	}
}

func runCheck(c *cli.Context) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	color, err := colorOn(c, c.App.Writer)
	if err != nil {
		return err
	}
	errColor, _ := colorOn(c, c.App.ErrWriter)
	opts, err := guardOptions(c)
	if err != nil {
		return err
	}
	ctxs, err := contextSet(c)
	if err != nil {
		return err
	}
	if c.Bool("add-noqa") && stdinInput(opts) {
		return usageError("--add-noqa writes files: it cannot take standard input")
	}
	opts.CaptureMap = c.String("capture-map")
	opts.CoverageRequired = c.Bool("coverage-required")
	prog, clear := progress(!c.Bool("no-progress"))
	opts.Progress = prog
	wide, scope := projectScope(opts)
	res, err := analyzeScoped(c, wide, scope, cacheOptions(c, wide.Config))
	clear()
	if err != nil {
		return exitCode(2, err)
	}
	scope.filter(res, opts.Config)
	filterContexts(res, ctxs)
	labelPresets(c, res)
	if c.Bool("add-noqa") {
		n, files, skipped, err := addNoqa(res)
		for _, s := range skipped {
			fmt.Fprintf(c.App.ErrWriter, "%s %s\n", paint(errColor, "1;33", "warning:"), s)
		}
		if err != nil {
			return exitCode(2, fmt.Errorf("--add-noqa: %w", err))
		}
		fmt.Fprintf(c.App.ErrWriter, "Added %s to %s.\n", pluralize(n, "noqa directive"), pluralize(files, "file"))
		return nil
	}
	if c.Bool("show-settings") {
		if err := writeSettings(c.App.Writer, res.Settings, format); err != nil {
			return exitCode(2, err)
		}
		return nil
	}
	noPythonWarning(res, opts)
	report.Warnings(c.App.ErrWriter, res, errColor)
	o := report.Options{Format: format, Version: versionString(), Color: color, Width: termWidth(c.App.Writer),
		ShowFixes: c.Bool("show-fixes"), UnsafeFixes: c.Bool("unsafe-fixes"), Quiet: c.Bool("quiet"),
		Root: projectRoot(opts.Paths, opts.Config)}
	switch format {
	case "full", "concise", "json-lines":
		report.FileErrors(c.App.ErrWriter, res, errColor)
	}
	if c.Bool("statistics") {
		err = writeStatistics(c.App.Writer, res, o)
	} else {
		err = report.Write(c.App.Writer, res, o)
	}
	if err != nil {
		return exitCode(2, err)
	}
	return checkExit(res, c.Bool("exit-zero"))
}

// writeStatistics prints --statistics: a JSON array for the JSON formats,
// else a table and the summary.
func writeStatistics(w io.Writer, res *guard.Result, o report.Options) error {
	switch o.Format {
	case "json", "json-lines":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(report.Stats(res, o.UnsafeFixes))
	}
	report.Statistics(w, res, o)
	if !o.Quiet {
		report.Summary(w, res, o)
	}
	return nil
}

// noPythonWarning says which paths held no Python file, and what the walk
// skips (guard's own warning, "no Python file found", is replaced).
func noPythonWarning(res *guard.Result, opts guard.Options) {
	kept := res.Warnings[:0]
	for _, w := range res.Warnings {
		if w != "no Python file found" {
			kept = append(kept, w)
		}
	}
	res.Warnings = kept
	if res.Files > 0 {
		return
	}
	for _, e := range res.Errors {
		if e.Message != "" && len(opts.Paths) == 1 && e.Path == opts.Paths[0] {
			return // the path itself is missing or unreadable: its error says so
		}
	}
	res.Warnings = append(res.Warnings, fmt.Sprintf("no Python file found in %s (folders are walked for *.py, skipping hidden folders, virtual environments, .gitignore'd files and the config's exclude)",
		strings.Join(opts.Paths, ", ")))
}

// checkExit: 2 when a file could not be read (or did not exist), else 1 for
// findings or a file with a syntax error or that cannot be decoded (each a
// finding about its file, as ruff's E902 and syntax errors are), else 0.
// --exit-zero makes findings exit 0; a file not read is still 2.
func checkExit(res *guard.Result, exitZero bool) error {
	soft, hard := errorKinds(res.Errors)
	switch {
	case hard:
		return exitCode(2, nil)
	case exitZero:
		return nil
	case len(res.Diagnostics) > 0 || soft:
		return exitCode(1, nil)
	}
	return nil
}

// cacheFlags are check's and fix's: the results cache (check) and the
// syntax trees' pack (both).
func cacheFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "no-cache", EnvVars: []string{"CAPGUARD_NO_CACHE"}, Usage: "do not read or write the cache"},
		&cli.StringFlag{Name: "cache-dir", EnvVars: []string{"CAPGUARD_CACHE_DIR"}, Usage: "the cache folder", DefaultText: "the config's cache-dir, else .capguard_cache beside the config, else in the working directory"},
	}
}

// cacheOptions are the results cache's options for a run under cfg.
func cacheOptions(c *cli.Context, cfg *guard.Config) cache.Options {
	dir := c.String("cache-dir")
	if dir == "" {
		dir = cache.DefaultDir(cfg)
	}
	return cache.Options{Dir: dir, Version: versionString()}
}

// analyzeScoped runs the checks of wide (a run over named files widened
// to their projects, scope being what it reports on: projectScope; nil
// for a run over folders), through the cache (its options co) unless
// --no-cache says otherwise.
//
// Standard input named by --stdin-filename (the editor's route) goes
// through the cache as the file it names. A buffer that is the file on
// disk (an editor that checks on save) is the run of the file; one with
// unsaved edits is keyed by its own bytes in the entry of its file's run
// (which leaves the project's entry to the files on disk): the same buffer
// again is a hit, an inert edit moves the stored findings, and else the
// run parses only the buffer (the other files' trees from the cache's
// pack). Before, every such run analysed the whole project from its parse
// (2.3 s on lmdeploy's package where a hit takes 0.03 s).
//
// A run over named files on disk takes the result of their projects' run
// alone (projectOnly) where its walk holds each file, spelled as the user
// did (respell): after `check .`, `check FILE` and a check on save are a
// hit, and after an edit the project's one entry is analysed again
// instead of one entry a file. Else it is the files' own run.
func analyzeScoped(c *cli.Context, wide guard.Options, scope *reportScope, co cache.Options) (*guard.Result, error) {
	if c.Bool("no-cache") {
		return guard.Run(scope.only(wide))
	}
	if stdinInput(wide) {
		if _, unnamed := wide.Overlay["-"]; unnamed {
			return guard.Run(wide)
		}
		if onDisk(wide.Overlay) {
			wide.Overlay = nil
		}
	}
	if proj, ok := projectOnly(wide, scope); ok && len(wide.Overlay) == 0 {
		var spell map[string]string
		pc := co
		pc.Covers = func(files []string) bool {
			var ok bool
			spell, ok = scope.walkSpellings(files)
			return ok
		}
		res, st, err := cache.Run(proj, pc)
		// A result not stored (cache.Failed: err says why) is respelled too.
		if st != cache.NotCovered && (res == nil || respell(res, spell)) {
			return cacheOutcome(res, st, err)
		}
	}
	return cacheOutcome(cache.Run(scope.only(wide), co))
}

// only checks the named files of a run over files named in their
// projects, and no others (guard.Options.FirstOnly: the other files'
// rules would find what the report leaves out). A run that names a folder
// too, or standard input with no name, is left as it is.
func (s *reportScope) only(wide guard.Options) guard.Options {
	if s == nil || len(s.dirs) > 0 {
		return wide
	}
	var first []string
	for _, p := range s.named {
		if p == "-" {
			return wide
		}
		first = append(first, p)
	}
	wide.First, wide.FirstOnly = first, true
	return wide
}

// cacheOutcome is a cached run's result: its status printed under
// CAPGUARD_TIMING, a result not stored kept with a warning.
func cacheOutcome(res *guard.Result, st cache.Status, err error) (*guard.Result, error) {
	if os.Getenv("CAPGUARD_TIMING") != "" {
		fmt.Fprintf(os.Stderr, "capguard: cache %s\n", st)
	}
	if st == cache.Failed && res != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("results not cached (%v); --no-cache skips the cache", err))
		return res, nil
	}
	return res, err
}

// pluralize is "1 thing" or "n things".
func pluralize(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// errorKinds sorts a run's file errors: soft ones (a syntax error, a file
// that cannot be decoded) are findings about their file and exit 1, as
// ruff's E902 is; hard ones (a file not read) exit 2.
func errorKinds(errs []guard.FileError) (soft, hard bool) {
	for _, e := range errs {
		if e.Syntax || e.Decode {
			soft = true
		} else {
			hard = true
		}
	}
	return soft, hard
}
