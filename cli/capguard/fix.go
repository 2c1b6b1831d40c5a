package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/capguard/capguard/guard/report"
	"github.com/capguard/capguard/patcher"
)

func fixCommand() *cli.Command {
	return &cli.Command{
		Name:      "fix",
		Usage:     "print (or --write) the fixes of the findings as a unified diff",
		ArgsUsage: "PATH...",
		Description: `Runs the checks of "capguard check", applies the fixes of the findings in
memory, re-checks and repeats until no fix is left, then prints a unified diff
(apply it with "patch -p1" or "git apply") on stdout and a summary on stderr.
--write writes the same bytes in place instead (atomically, mode kept).

Safe fixes apply by default, unsafe ones with --unsafe-fixes, display-only ones
never. Suppressed findings are never fixed. Files with a syntax error or not
in UTF-8 are left alone, and so is a fix whose result would not parse.

Exit status: 0 nothing to fix (or --write wrote the fixes), 1 a diff was
printed, 2 an error (a file that could not be read, parsed or written).`,
		Flags: append(selectionFlags(),
			&cli.BoolFlag{Name: "diff", Value: true, Usage: "print the fixes as a unified diff (the default)"},
			&cli.BoolFlag{Name: "write", Aliases: []string{"w"}, Usage: "write the fixes in place instead of printing them"},
			&cli.BoolFlag{Name: "unsafe-fixes", Usage: "apply unsafe fixes too"},
			&cli.StringFlag{Name: "helper-module", Usage: "import persistent_buffer from this module instead of inserting it"},
		),
		Action: func(c *cli.Context) error {
			return runFix(c, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runFix(c *cli.Context, stdout, stderr io.Writer) error {
	g, err := guardOptions(c)
	if err != nil {
		return err
	}
	prog, clear := progress(!c.Bool("no-progress"))
	res, err := patcher.Fix(patcher.Options{
		Progress:     prog,
		MaxFileSize:  g.MaxFileSize,
		Paths:        g.Paths,
		Select:       g.Select,
		Ignore:       g.Ignore,
		Config:       g.Config,
		UnsafeFixes:  c.Bool("unsafe-fixes"),
		HelperModule: c.String("helper-module"),
	})
	clear()
	if err != nil {
		return exitCode(2, fmt.Errorf("fix: %w", err))
	}
	write := c.Bool("write")
	printDiff := !write || (c.IsSet("diff") && c.Bool("diff"))
	if printDiff {
		io.WriteString(stdout, res.Diff())
	}
	var writeErr error
	if write {
		writeErr = res.Write()
	}
	fmt.Fprint(stderr, fixSummary(res, write))
	switch {
	case writeErr != nil:
		return exitCode(2, nil) // each file's write error is in the summary
	case len(res.Errors) > 0:
		return exitCode(2, nil)
	case printDiff && len(res.Changed()) > 0:
		return exitCode(1, nil)
	}
	return nil
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

// fixSummary describes what was (or would be) fixed, what was skipped and
// what remains, as ruff does.
func fixSummary(res *patcher.Result, wrote bool) string {
	var b strings.Builder
	for _, e := range res.Errors {
		fmt.Fprintf(&b, "%s: error: %s\n", report.TextPath(e.Path), e.Message)
	}
	for _, f := range res.Files {
		if len(f.Applied) > 0 {
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
				fmt.Fprintf(&b, "error: %v (%s not applied)\n", f.WriteErr, plural(len(f.Applied), "fix", "fixes"))
			}
			if f.Written {
				changed++
				n += len(f.Applied)
			}
		}
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
		if res.UnsafeHidden > 0 {
			fmt.Fprintf(&b, " (%s enabled with --unsafe-fixes)", plural(res.UnsafeHidden, "more fix can be", "more fixes can be"))
		}
	}
	b.WriteString(".\n")
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
