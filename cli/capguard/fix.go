package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/cli/internal/cache"
	"github.com/cudagraph-capguard/capguard/cli/internal/report"
	"github.com/cudagraph-capguard/capguard/guard"
	"github.com/cudagraph-capguard/capguard/patcher"
)

func fixCommand() *cli.Command {
	return &cli.Command{
		Name:      "fix",
		Usage:     "print (or --write) the fixes of the findings as a unified diff",
		ArgsUsage: "[PATH...] (default: .; - reads standard input)",
		Description: `Runs the checks of "capguard check", applies the fixes of the findings in
memory, re-checks and repeats until no fix is left, then prints a unified diff
(apply it with "patch -p1" or "git apply") on stdout and a summary on stderr.
--write writes the same bytes in place instead (atomically, mode kept).

Safe fixes apply by default, unsafe ones with --unsafe-fixes, display-only ones
never. Suppressed findings are never fixed. Files with a syntax error or that
cannot be decoded are left alone, and so is a fix whose result would not parse.
A file in a PEP 263 encoding is written back in it.

"capguard fix -" reads standard input and prints the fixed source (--diff: the
diff); --stdin-filename names it.

Exit status: with --write, 0 when no finding remains, 1 when findings remain
(as "ruff check --fix"; --exit-non-zero-on-fix: also when something was
fixed); without it (--diff, the default), 0 nothing to fix, 1 a diff was
printed. A syntax error or a file that cannot be decoded counts as a finding
that remains (1); 2 an error (a file that could not be read or written, a
usage error).`,
		Flags: append(append(append(selectionFlags(), displayFlags()...), cacheFlags()...),
			&cli.BoolFlag{Name: "diff", Usage: "print the fixes as a unified diff and write nothing (the default without --write)"},
			&cli.BoolFlag{Name: "write", Aliases: []string{"w"}, Usage: "write the fixes in place instead of printing them"},
			&cli.BoolFlag{Name: "unsafe-fixes", Usage: "apply unsafe fixes too"},
			&cli.BoolFlag{Name: "exit-non-zero-on-fix", Usage: "with --write, exit 1 when something was fixed, even if no finding remains"},
			&cli.StringFlag{Name: "helper-module", Usage: "import persistent_buffer from this module instead of inserting it (see capguard helper)"},
		),
		Action: func(c *cli.Context) error {
			return runFix(c, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runFix(c *cli.Context, stdout, stderr io.Writer) error {
	write, diffOnly := c.Bool("write"), c.Bool("diff")
	if write && diffOnly {
		return usageError("--diff prints the fixes and writes nothing: give --diff or --write, not both")
	}
	errColor, err := colorOn(c, stderr)
	if err != nil {
		return err
	}
	g, err := guardOptions(c)
	if err != nil {
		return err
	}
	prog, clear := progress(!c.Bool("no-progress"))
	ctxs, err := contextSet(c)
	if err != nil {
		return err
	}
	wide, scope := projectScope(g) // the files' projects analysed, the files fixed
	// Each analysis of the fix loop (the first, then one a round with the
	// fixed files as buffers) reads the syntax trees of the files whose
	// bytes a run before it parsed from the cache's pack: only the fixed
	// files are parsed again. The findings are guard.Run's, from the
	// files' bytes (a tree is keyed by the bytes it was parsed from).
	//
	// The first analysis, of the files as they are, goes through the
	// results cache as check's does: after a check of the same tree it
	// is a hit (or the stored result moved past inert edits), with the
	// text of each file to fix read again and checked against the hash it
	// was served for (cache.Options.Sources). The later rounds analyse
	// the fixed buffers and are not stored: an entry keyed by bytes that
	// --diff never writes would only displace the tree's own.
	treeFile := ""
	first := !c.Bool("no-cache")
	if first {
		treeFile = cache.TreeFile(cacheOptions(c, g.Config))
	}
	res, err := patcher.Fix(patcher.Options{
		Analyze: func(o guard.Options) (*guard.Result, error) {
			var r *guard.Result
			var err error
			if first {
				first = false
				co := cacheOptions(c, o.Config)
				co.Sources = cache.FixSources
				r, err = analyzeScoped(c, o, scope, co)
			} else {
				o.TreeFile = treeFile
				r, err = guard.Run(scope.only(o)) // the files fixed: what scope.filter keeps
			}
			scope.filter(r, o.Config)
			filterContexts(r, ctxs)
			return r, err
		},
		Progress:     prog,
		MaxFileSize:  g.MaxFileSize,
		Paths:        wide.Paths,
		Overlay:      g.Overlay,
		Select:       g.Select,
		Ignore:       g.Ignore,
		Config:       g.Config,
		UnsafeFixes:  c.Bool("unsafe-fixes"),
		HelperModule: c.String("helper-module"),
		// Standard input prints one file: the helper goes into it, as no
		// shared module could be written beside it.
		InlineHelper: stdinInput(g),
	})
	clear()
	if err != nil {
		return exitCode(2, fmt.Errorf("fix: %w", err))
	}
	probe := &guard.Result{Files: res.Checked, Errors: res.Errors, Warnings: res.Warnings}
	noPythonWarning(probe, g)
	res.Warnings = probe.Warnings
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "%s %s\n", paint(errColor, "1;33", "warning:"), w)
	}
	if stdinInput(g) {
		return fixStdin(c, res, g, stdout, stderr, diffOnly)
	}
	if !write {
		io.WriteString(stdout, res.Diff())
	}
	var writeErr error
	if write {
		writeErr = res.Write()
	}
	fmt.Fprint(stderr, fixSummary(res, write, c.Bool("show-fixes"), c.Bool("quiet"), errColor))
	soft, hard := errorKinds(res.Errors)
	fixed := 0
	for _, f := range res.Changed() {
		if f.Written {
			fixed++
		}
	}
	switch {
	case writeErr != nil, hard:
		return exitCode(2, nil) // each file's error is in the summary
	case !write && (len(res.Changed()) > 0 || soft):
		return exitCode(1, nil)
	case write && (len(res.Remaining) > 0 || soft):
		return exitCode(1, nil)
	case write && fixed > 0 && c.Bool("exit-non-zero-on-fix"):
		return exitCode(1, nil)
	}
	return nil
}

// fixStdin prints the fixed source of standard input (or, with --diff, its
// diff) and the summary.
func fixStdin(c *cli.Context, res *patcher.Result, g guard.Options, stdout, stderr io.Writer, diffOnly bool) error {
	name := g.Paths[0]
	fixed := g.Overlay[name]
	if f := res.File(name); f != nil {
		fixed = f.Fixed
	}
	if diffOnly {
		if f := res.File(name); f != nil {
			io.WriteString(stdout, f.Diff)
		}
	} else {
		stdout.Write(fixed)
	}
	errColor, _ := colorOn(c, stderr)
	fmt.Fprint(stderr, fixSummary(res, false, c.Bool("show-fixes"), c.Bool("quiet"), errColor))
	soft, hard := errorKinds(res.Errors)
	switch {
	case hard:
		return exitCode(2, nil)
	case diffOnly && (len(res.Changed()) > 0 || soft):
		return exitCode(1, nil)
	case !diffOnly && (len(res.Remaining) > 0 || soft):
		return exitCode(1, nil)
	case !diffOnly && len(res.Changed()) > 0 && c.Bool("exit-non-zero-on-fix"):
		return exitCode(1, nil)
	}
	return nil
}

// paint wraps s in an ANSI style when on.
func paint(on bool, code, s string) string {
	if !on {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

// splitCodes accepts "--select CG301,CG201" as well as repeated flags.
func splitCodes(in []string) []string {
	var out []string
	for _, s := range in {
		for _, c := range strings.Split(s, ",") {
			if c = strings.TrimSpace(c); c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// fixSummary describes what was (or would be) fixed and what remains, as
// ruff does; --show-fixes lists the fixes per file first. The counts are
// check's: "N fixable with capguard fix" there is "Would fix N" here.
func fixSummary(res *patcher.Result, wrote, showFixes, quiet, color bool) string {
	var b strings.Builder
	for _, e := range res.Errors {
		fmt.Fprintf(&b, "%s: %s %s\n", report.TextPath(e.Path), paint(color, "1;31", "error:"), e.Message)
	}
	for _, f := range res.Files {
		if len(f.Applied) > 0 && showFixes {
			counts := map[string]int{}
			for _, a := range f.Applied {
				counts[a.Code]++
			}
			codes := make([]string, 0, len(counts))
			for code, n := range counts {
				codes = append(codes, fmt.Sprintf("%s x%d", code, n))
			}
			sort.Strings(codes)
			helper := ""
			switch f.Helper {
			case "inserted":
				helper = "; persistent_buffer helper inserted"
			case "imported":
				helper = "; persistent_buffer imported"
			}
			fmt.Fprintf(&b, "%s: %s%s\n", report.TextPath(f.Path), strings.Join(codes, ", "), helper)
			if showFixes {
				for _, a := range f.Applied {
					fmt.Fprintf(&b, "    %d:%d %s (%s): %s\n", a.Line, a.Column, a.Code, a.Applicability, a.Fix)
				}
			}
		}
		for _, s := range f.Skipped {
			fmt.Fprintf(&b, "%s:%d:%d: %s fix not applied: %s\n", report.TextPath(s.Path), s.Line, s.Column, s.Code, s.Reason)
		}
	}
	changed, n := len(res.Changed()), res.Applied()
	verb := "Would fix"
	if wrote {
		// Only what reached the disk counts as fixed.
		verb, changed, n = "Fixed", 0, 0
		for _, f := range res.Changed() {
			if f.WriteErr != nil {
				fmt.Fprintf(&b, "%s %v (%s not applied)\n", paint(color, "1;31", "error:"), f.WriteErr, plural(len(f.Applied), "fix", "fixes"))
			}
			if f.Written {
				changed++
				n += len(f.Applied)
			}
		}
	}
	if quiet {
		return b.String()
	}
	if n == 0 && (!wrote || res.Applied() == 0) {
		b.WriteString("No fixes to apply")
	} else {
		fmt.Fprintf(&b, "%s %s in %s", verb, plural(n, "finding"), plural(changed, "file"))
		if res.Rounds > 1 {
			fmt.Fprintf(&b, " (%d rounds)", res.Rounds)
		}
	}
	if n := len(res.Remaining); n > 0 {
		fmt.Fprintf(&b, "; %d remaining", n)
	}
	b.WriteString(".\n")
	if res.UnsafeHidden > 0 {
		fmt.Fprintf(&b, "%s can be enabled with `--unsafe-fixes`.\n", plural(res.UnsafeHidden, "hidden fix", "hidden fixes"))
	}
	if !res.Converged {
		fmt.Fprintf(&b, "warning: fixes were still offered after %d rounds; run capguard fix again and report the rule\n", patcher.DefaultMaxRounds)
	}
	return b.String()
}

func plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}
