package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/patcher"
	"github.com/cudagraph-capguard/capguard/runtime/pyverify"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "prove a Python reader capture-safe on the GPU (capture, force reallocation, replay, compare with eager)",
		ArgsUsage: "path/to/file.py:function | path/to/file.py:Class.method",
		Description: `Runs the target with PyTorch on this machine's GPU, one interpreter process per
batch size (a CUDA fault is sticky): warm up on a side stream, capture with
torch.cuda.graph (sync debug mode "error" inside the capture), then for each
replay copy a new batch into the static inputs, run the replay-prep callable,
churn the caching allocator and poison the blocks it hands out, replay, and
compare bitwise with an eager run on the same inputs.

Verdicts per batch size: clean, stale-read (a replay differed from eager),
fault (the replay raised a CUDA error, crashed or hung), capture-error (capture
failed; mapped to a rule: CG101 host sync, CG103 copy from a host temporary,
CG104 data-dependent shape), error (could not run).

--fixed also runs the version of the target's files that "capguard fix" would
write (in a temporary folder; your files are not touched) and prints both side
by side.

The spec (--inputs, TOML or JSON) names every argument in call order:

  batch_sizes = [1, 4, 32]          # top-level keys first (TOML)
  replays = 5
  [[arg]]
  name = "q"
  shape = ["B", 1, 128]             # "B" is the batch size; "B*4" works too
  dtype = "bfloat16"
  init = "randn"                    # randn | rand LO..HI | randint LO..HI | arange | zeros | ones | full
  role = "static"                   # static (new contents each replay) | fixed (weights, caches)
                                    # | output (written by the target) | mirror | const
  [[arg]]
  name = "seq_lens_cpu"
  role = "mirror"                   # a CPU copy of another argument, refreshed after it
  mirror_of = "seq_lens"
  [prep]                            # replay-prep: before capture, each replay and each eager run
  call = "prepare"                  # in the target's file, or "file.py:fn" (relative to the spec), "pkg.mod:fn"
  args = ["seq_lens", "page_table"]
  [construct]                       # for Class.method: Class(*args, **kwargs)
  args = ["weights"]
  kwargs = { page_size = 16 }

Other keys: per arg device ("cuda" | "cpu"), pin, kwarg, pass = false (not
passed to the target), low/high/mean/std/start/step/value; top level warmup,
seed, sync_debug, empty_cache, timeout, [tolerance] atol/rtol.

Exit status: 0 every case clean, 1 a hazard shown (in either version with
--fixed), 2 could not run (no python, no torch, no GPU, a bad target or spec).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "inputs", Aliases: []string{"i"}, Usage: "the spec of the target's arguments (`SPEC`.toml or .json)"},
			&cli.StringFlag{Name: "python", Value: "python3", Usage: "the interpreter that has torch (a venv's bin/python)"},
			&cli.StringFlag{Name: "batch-sizes", Usage: "comma-separated batch sizes (default: the spec's, else 1,4,32)"},
			&cli.IntFlag{Name: "replays", Usage: "replays per batch size (default: the spec's, else 5)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text or json"},
			&cli.BoolFlag{Name: "fixed", Usage: "also verify what `capguard fix` would write, side by side"},
			&cli.BoolFlag{Name: "unsafe-fixes", Usage: "with --fixed: apply unsafe fixes too, as `capguard fix --unsafe-fixes`"},
			&cli.DurationFlag{Name: "timeout", Usage: "per case (default: the spec's, else 3m)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "cases run at once, each in its own process (timings are cleanest at 1)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "no GPU: run the harness on the CPU without capture, to check the spec and target (verdicts prove nothing)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines on stderr"},
		},
		Action: func(c *cli.Context) error {
			return runVerify(c, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runVerify(c *cli.Context, stdout, stderr io.Writer) error {
	pos, err := interspersedFlags(c)
	if err != nil {
		return usageError("verify: %v (see capguard verify --help)", err)
	}
	if len(pos) != 1 {
		return usageError("verify: want one TARGET (path/to/file.py:function or path/to/file.py:Class.method), got %d: %s", len(pos), strings.Join(pos, " "))
	}
	target, err := pyverify.ParseTarget(pos[0])
	if err != nil {
		return usageError("verify: %v", err)
	}
	if err := target.Check(); err != nil {
		return exitCode(2, fmt.Errorf("verify: %v", err))
	}
	specPath := c.String("inputs")
	if specPath == "" {
		return usageError("verify: --inputs SPEC is required: a TOML or JSON file naming each argument (see capguard verify --help)")
	}
	spec, err := pyverify.LoadSpec(specPath)
	if err != nil {
		return exitCode(2, fmt.Errorf("verify: %v", err))
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return usageError("verify: --format %q: want text or json", format)
	}
	if c.Bool("unsafe-fixes") && !c.Bool("fixed") {
		return usageError("verify: --unsafe-fixes only makes sense with --fixed")
	}
	batches, err := parseBatchSizes(c.String("batch-sizes"))
	if err != nil {
		return usageError("verify: --batch-sizes: %v", err)
	}
	opts := pyverify.Options{
		Python:     c.String("python"),
		BatchSizes: batches,
		Replays:    c.Int("replays"),
		Timeout:    c.Duration("timeout"),
		Jobs:       c.Int("jobs"),
		DryRun:     c.Bool("dry-run"),
	}
	if !c.Bool("quiet") {
		opts.Log = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	if !c.Bool("fixed") {
		rep, err := pyverify.Verify(ctx, target, spec, opts)
		if err != nil {
			return verifyRunError(err)
		}
		if format == "json" {
			if err := writeJSON(stdout, rep); err != nil {
				return exitCode(2, err)
			}
		} else {
			rep.WriteText(stdout)
		}
		return verifyExit(pyverify.ExitCode(rep), rep)
	}
	cmp, err := pyverify.VerifyFixed(ctx, target, spec, opts, patcherFixer(c.Bool("unsafe-fixes")))
	if err != nil {
		return verifyRunError(err)
	}
	if format == "json" {
		if err := writeJSON(stdout, cmp); err != nil {
			return exitCode(2, err)
		}
	} else {
		pyverify.WriteSideBySide(stdout, cmp.Original, cmp.Fixed, cmp.Patch)
	}
	return verifyExit(cmp.ExitCode(), cmp.Original, cmp.Fixed)
}

// interspersedFlags parses the flags that follow TARGET (urfave/cli stops at
// the first argument; `capguard verify TARGET --inputs SPEC` is the documented
// order) into c, and returns the positional arguments.
func interspersedFlags(c *cli.Context) ([]string, error) {
	args := c.Args().Slice()
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	canonical := map[string]string{}
	for _, f := range c.Command.Flags {
		if err := f.Apply(fs); err != nil {
			return nil, err
		}
		for _, n := range f.Names() {
			canonical[n] = f.Names()[0]
		}
	}
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...) // everything after "--" is an argument
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if e := c.Set(canonical[f.Name], f.Value.String()); e != nil && err == nil {
			err = e
		}
	})
	return pos, err
}

func verifyRunError(err error) error {
	var se *pyverify.SpecError
	switch {
	case errors.As(err, &se), errors.Is(err, pyverify.ErrNoPython):
		return exitCode(2, fmt.Errorf("verify: %v", err))
	}
	return exitCode(2, fmt.Errorf("verify: %w", err))
}

// verifyExit returns the exit status with a one-line reason on stderr for 2.
func verifyExit(code int, reps ...*pyverify.Report) error {
	if code != 2 {
		if code == 0 {
			return nil
		}
		return exitCode(code, nil)
	}
	for _, r := range reps {
		for _, c := range r.Cases {
			if c.Verdict == pyverify.Error && c.Error != nil {
				return exitCode(2, fmt.Errorf("verify: could not run %s at batch %d: %s%s", r.Target, c.BatchSize, firstLineOf(c.Error.Message), hint(c.Error.Kind)))
			}
		}
	}
	return exitCode(2, nil)
}

func hint(kind string) string {
	switch kind {
	case "no-torch":
		return " (pass --python with the interpreter of the environment that has torch)"
	case "no-gpu":
		return " (run on a machine with an NVIDIA GPU and a CUDA build of torch; --dry-run checks the spec on the CPU)"
	case "bad-target":
		return " (check the TARGET and that its module imports on its own)"
	case "timeout":
		return " (raise --timeout)"
	}
	return ""
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func parseBatchSizes(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a batch size", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// patcherFixer is what `capguard fix` would write, in memory: patcher.Fix
// with the command line's defaults (safe fixes, or unsafe ones too).
func patcherFixer(unsafe bool) pyverify.Fixer {
	return func(paths []string) (map[string][]byte, string, error) {
		res, err := patcher.Fix(patcher.Options{Paths: paths, UnsafeFixes: unsafe, InlineHelper: true}) // the fixed copy is the target's files alone
		if err != nil {
			return nil, "", err
		}
		for _, fe := range res.Errors {
			for _, p := range paths {
				if sameFile(fe.Path, p) {
					return nil, "", fe
				}
			}
		}
		fixed := map[string][]byte{}
		for _, f := range res.Changed() {
			for _, p := range paths {
				if sameFile(f.Path, p) {
					fixed[p] = f.Fixed
				}
			}
		}
		return fixed, res.Diff(), nil
	}
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}
