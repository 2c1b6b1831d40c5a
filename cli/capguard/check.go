package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/capguard/capguard/guard"
	"github.com/capguard/capguard/guard/report"
)

// selectionFlags are shared by check and fix.
func selectionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "select", Usage: "rule codes or prefixes to enable (CG1, CG301, ALL); replaces the config's"},
		&cli.StringSliceFlag{Name: "ignore", Usage: "rule codes or prefixes to disable; added to the config's"},
		&cli.StringFlag{Name: "config", Usage: "config file (pyproject.toml or capguard.toml); default: found upwards from the first path"},
		&cli.StringSliceFlag{Name: "preset", Usage: "framework preset to add (sglang, vllm)"},
		&cli.StringSliceFlag{Name: "entry-point", Usage: "captured entry point \"pkg.mod:Class.method\" to add"},
		&cli.StringSliceFlag{Name: "replay-prep", Usage: "replay-prep function \"pkg.mod:Class.method\" to add"},
		maxFileSizeFlag(),
		&cli.BoolFlag{Name: "no-progress", Usage: "never show progress on a terminal"},
	}
}

// guardOptions builds guard.Options from the shared flags; config errors
// are usage errors (exit 2).
func guardOptions(c *cli.Context) (guard.Options, error) {
	paths := c.Args().Slice()
	if len(paths) == 0 {
		return guard.Options{}, usageError("no path given: capguard %s PATH... (files or folders)", c.Command.Name)
	}
	var cfg *guard.Config
	var err error
	if p := c.String("config"); p != "" {
		cfg, err = guard.LoadConfig(p)
		if err == nil && cfg == nil {
			err = fmt.Errorf("%s: has no [tool.capguard] table", p)
		}
	} else {
		cfg, err = guard.FindConfig(paths[0])
	}
	if err != nil {
		return guard.Options{}, exitCode(2, fmt.Errorf("config: %w", err))
	}
	cfg.Presets = append(cfg.Presets, splitCodes(c.StringSlice("preset"))...)
	cfg.EntryPoints = append(cfg.EntryPoints, c.StringSlice("entry-point")...)
	cfg.ReplayPrep = append(cfg.ReplayPrep, c.StringSlice("replay-prep")...)
	if err := cfg.Validate(); err != nil { // the flags' presets and entry points too
		return guard.Options{}, usageError("%v", err)
	}
	sel, ign := splitCodes(c.StringSlice("select")), splitCodes(c.StringSlice("ignore"))
	if bad := guard.ValidateCodes(append(append([]string{}, sel...), ign...)); len(bad) > 0 {
		return guard.Options{}, usageError("unknown rule code %s (see capguard rule --all)", strings.Join(bad, ", "))
	}
	limit, err := maxFileSize(c)
	if err != nil {
		return guard.Options{}, err
	}
	return guard.Options{Paths: paths, Config: cfg, Select: sel, Ignore: ign, MaxFileSize: limit}, nil
}

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
		ArgsUsage: "PATH...",
		Description: `Walks folders for *.py (honouring .gitignore and the config's exclude), follows calls
from capture regions (with torch.cuda.graph, capture_begin..capture_end, make_graphed_callables,
configured entry points, presets) and replay-prep code, and reports hazards with the call chain
that proves where the code runs.

Exit codes: 0 no finding, 1 findings, 2 usage error, unreadable or missing path, or internal
error (the other files are still checked and reported).`,
		Flags: append(selectionFlags(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output format: text, json, sarif, github"},
			&cli.BoolFlag{Name: "exit-zero", Usage: "exit 0 even when there are findings"},
			&cli.StringFlag{Name: "capture-map", Usage: "merge a capture map recorded by `capguard trace` (`FILE`; overrides the config's capture-map)"},
		),
		Action: func(c *cli.Context) error {
			format := c.String("format")
			switch format {
			case "text", "json", "sarif", "github":
			default:
				return usageError("unknown --format %q (want text, json, sarif or github)", format)
			}
			opts, err := guardOptions(c)
			if err != nil {
				return err
			}
			opts.CaptureMap = c.String("capture-map")
			prog, clear := progress(!c.Bool("no-progress"))
			opts.Progress = prog
			res, err := guard.Run(opts)
			clear()
			if err != nil {
				return exitCode(2, err)
			}
			if format == "text" {
				for _, w := range res.Warnings {
					fmt.Fprintf(c.App.ErrWriter, "capguard: warning: %s\n", w)
				}
				for _, e := range res.Errors {
					fmt.Fprintf(c.App.ErrWriter, "%s: error: %s\n", report.TextPath(e.Path), e.Message)
				}
			}
			if err := report.Write(c.App.Writer, format, res, version); err != nil {
				return exitCode(2, err)
			}
			return checkExit(res, c.Bool("exit-zero"))
		},
	}
}

// checkExit: 2 when a file could not be read (or did not exist), else 1 for
// findings, else 0. A syntax error is reported but is not an exit-2 error
// (the rest of the file was analysed).
func checkExit(res *guard.Result, exitZero bool) error {
	hard := false
	for _, e := range res.Errors {
		if !e.Syntax {
			hard = true
		}
	}
	if hard {
		return exitCode(2, nil)
	}
	if len(res.Diagnostics) > 0 && !exitZero {
		return exitCode(1, nil)
	}
	return nil
}
