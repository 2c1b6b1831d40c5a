package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/guard/capmap"
	"github.com/cudagraph-capguard/capguard/runtime/pyverify"
	"github.com/cudagraph-capguard/capguard/templates"
)

func traceCommand() *cli.Command {
	return &cli.Command{
		Name:      "trace",
		Usage:     "record which code runs under CUDA-graph capture in a real run (the capture map)",
		ArgsUsage: "[--out capture-map.json] -- COMMAND ARGS... | path/to/file.py:function --inputs SPEC",
		Description: `Runs your program unchanged with capguard's tracer injected at interpreter start
(a generated sitecustomize first on PYTHONPATH; your own sitecustomize still runs after
it, your PYTHONPATH is kept). Once torch is imported the tracer hooks the graph APIs
(CUDAGraph.capture_begin/capture_end/replay, torch.cuda.graph, make_graphed_callables,
torch.npu's NPUGraph where importable) and records into the capture map:

  - every Python function entered while the stream captures, with its stack from the
    capture site (sys.monitoring on Python >= 3.12, sys.setprofile before), and every
    line of project code executed then and in replay prep (check --capture-map proves
    or demotes static findings by them);
  - every storage a captured op or Triton launch reads: private pool or external, and
    for external inputs the allocation stack (--alloc-stacks) and holders;
  - the functions that run between a capture's end and its first replays, and those
    that write into storage the graph reads (replay-prep);
  - runtime findings: an external input freed (CG301) or rebound (CG201) before one of
    the first --prep-replays replays, with its allocation site and the line that dropped
    it; a host sync (CG101), a host value read from tensor data (CG102), a host-to-device
    copy (CG103) or a data-dependent shape (CG104) while capturing, with the Python line;
    a Triton launch under capture taking a value read from tensor data just before the
    capture (CG102 host-value-arg); replay prep leaving the tail of a padded buffer the
    graph reads from an earlier, larger batch (CG203 stale-tail); captured code storing a
    tensor of the graph's pool in program state read after another graph's replay
    (CG201 stored-under-capture).

The tracer never changes the program: after each of its modes is closed it checks the
thread's dispatch state against the state before tracing (a mismatch is a loud tracer
error, and the state is put back).

Processes the program starts are traced too; their maps are merged into --out. Then
capguard prints a summary on stderr and exits with the program's exit status.

  capguard trace --out capture-map.json -- python serve.py --model tiny
  capguard check --capture-map capture-map.json src/

With path/to/file.py:function --inputs SPEC (capguard verify's spec), it traces one
function instead: the verify harness captures and replays it, once per batch size,
with the tracer on (no server to start; needs a GPU).

The tracer costs time only while a stream captures and during the first
--prep-replays (N) replays of each graph, which it checks (inputs freed or rebound)
and whose replay-prep it records; once every graph has had its N replays it puts the
original replay back, so later replays run no tracer code (and are not checked).
--alloc-stacks records every allocation's Python stack until then.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "capture-map.json", Usage: "the capture map to write"},
			&cli.BoolFlag{Name: "alloc-stacks", Value: true, Usage: "record allocation stacks (torch.cuda.memory._record_memory_history) for allocation and drop sites"},
			&cli.IntFlag{Name: "prep-replays", Value: 3, Usage: "N: replays per graph that are checked and whose replay-prep is recorded; later replays run untraced (0: replay is never wrapped)"},
			&cli.BoolFlag{Name: "all-functions", Usage: "record torch's, triton's and the standard library's functions too"},
			&cli.BoolFlag{Name: "capture-ops", Value: true, Usage: "watch the ops under capture through a dispatch mode (inputs, host reads, dynamic shapes; torch.compile'd calls run with it off); =false pushes no mode under capture (functions, lines and capture errors are still recorded)"},
			&cli.StringFlag{Name: "inputs", Aliases: []string{"i"}, Usage: "with file.py:function: capguard verify's `SPEC` of its arguments"},
			&cli.StringFlag{Name: "python", Value: "python3", Usage: "with file.py:function: the interpreter that has torch"},
			&cli.StringFlag{Name: "batch-sizes", Usage: "with file.py:function: comma-separated batch sizes (default: the spec's, else 1,4,32)"},
			&cli.IntFlag{Name: "replays", Usage: "with file.py:function: replays per batch size"},
			&cli.DurationFlag{Name: "timeout", Usage: "with file.py:function: per batch size (default 3m)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "with file.py:function: no GPU: run the harness on the CPU with a stand-in graph and CPU tensors taken for device ones (checks the spec, the target and the tracer; proves nothing about capture)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no summary on stderr"},
		},
		Action: func(c *cli.Context) error {
			return runTrace(c, c.App.ErrWriter)
		},
	}
}

// traceEnv is the environment the tracer reads.
type traceEnv struct {
	dir, out    string
	allocStacks bool
	prepReplays int
	allFuncs    bool
	noOps       bool // --capture-ops=false
}

// setupTracer writes the tracer and its sitecustomize into a new temporary
// folder and returns it.
func setupTracer() (string, error) {
	dir, err := os.MkdirTemp("", "capguard-trace-")
	if err != nil {
		return "", err
	}
	for name, data := range map[string][]byte{
		templates.TraceTracerName:        templates.TraceTracer,
		templates.TraceSiteCustomizeName: templates.TraceSiteCustomize,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// environ is base with the tracer's variables set: its folder first on
// PYTHONPATH (the user's PYTHONPATH kept after it) and the CAPGUARD_TRACE_*
// settings; rootPID "" lets the first traced process claim the main map.
func (t traceEnv) environ(base []string, rootPID string) []string {
	var out []string
	pp := ""
	for _, kv := range base {
		switch {
		case strings.HasPrefix(kv, "PYTHONPATH="):
			pp = strings.TrimPrefix(kv, "PYTHONPATH=")
			continue
		case strings.HasPrefix(kv, "CAPGUARD_TRACE_OUT="), strings.HasPrefix(kv, "CAPGUARD_TRACE_PID="),
			strings.HasPrefix(kv, "CAPGUARD_TRACE_ALLOC_STACKS="), strings.HasPrefix(kv, "CAPGUARD_TRACE_PREP_REPLAYS="),
			strings.HasPrefix(kv, "CAPGUARD_TRACE_ALL_FUNCTIONS="), strings.HasPrefix(kv, "CAPGUARD_TRACE_CAPTURE_OPS="):
			continue // set below; the tracer's other settings (CAPGUARD_TRACE_SKIP, ...) pass through
		}
		out = append(out, kv)
	}
	if pp != "" {
		pp = t.dir + string(os.PathListSeparator) + pp
	} else {
		pp = t.dir
	}
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	out = append(out, "PYTHONPATH="+pp, "CAPGUARD_TRACE_OUT="+t.out,
		"CAPGUARD_TRACE_ALLOC_STACKS="+b(t.allocStacks),
		"CAPGUARD_TRACE_PREP_REPLAYS="+strconv.Itoa(t.prepReplays),
		"CAPGUARD_TRACE_ALL_FUNCTIONS="+b(t.allFuncs), "CAPGUARD_TRACE_CAPTURE_OPS="+b(!t.noOps))
	if rootPID != "" {
		out = append(out, "CAPGUARD_TRACE_PID="+rootPID)
	}
	return out
}

// clearMaps removes a previous run's map and child maps, so that nothing
// stale is merged.
func clearMaps(out string) error {
	children, err := capmap.ChildFiles(out)
	if err != nil {
		return err
	}
	for _, f := range append([]string{out}, children...) {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// collectMaps merges the run's maps into out (child maps removed once
// merged) and returns the merged map.
func collectMaps(out string) (*capmap.Map, error) {
	m, err := capmap.LoadAll(out)
	if err != nil {
		return nil, err
	}
	children, _ := capmap.ChildFiles(out)
	if err := m.Write(out); err != nil {
		return nil, err
	}
	for _, c := range children {
		os.Remove(c)
	}
	return m, nil
}

func runTrace(c *cli.Context, stderr io.Writer) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("trace: give the command to run after --: capguard trace [--out FILE] -- python serve.py ... (or file.py:function --inputs SPEC)")
	}
	out, err := filepath.Abs(c.String("out"))
	if err != nil {
		return exitCode(2, err)
	}
	if c.Int("prep-replays") < 0 {
		return usageError("trace: --prep-replays %d: want 0 or more", c.Int("prep-replays"))
	}
	dir, err := setupTracer()
	if err != nil {
		return exitCode(2, fmt.Errorf("trace: %v", err))
	}
	defer os.RemoveAll(dir)
	te := traceEnv{dir: dir, out: out, allocStacks: c.Bool("alloc-stacks"), prepReplays: c.Int("prep-replays"), allFuncs: c.Bool("all-functions"), noOps: !c.Bool("capture-ops")}
	if err := clearMaps(out); err != nil {
		return exitCode(2, fmt.Errorf("trace: %v", err))
	}
	if len(args) == 1 && strings.Contains(args[0], ".py:") && c.String("inputs") != "" {
		return traceFunction(c, args[0], te, stderr)
	}
	if c.IsSet("inputs") {
		return usageError("trace: --inputs goes with a path/to/file.py:function target, not a command")
	}
	if c.Bool("dry-run") {
		return usageError("trace: --dry-run goes with a path/to/file.py:function target and --inputs")
	}
	code, err := runTraced(args, te)
	if err != nil {
		return exitCode(2, fmt.Errorf("trace: %v", err))
	}
	m, merr := collectMaps(out)
	if merr != nil {
		fmt.Fprintf(stderr, "capguard trace: %v\n", merr)
		if code == 0 {
			code = 2
		}
		return exitCode(code, nil)
	}
	if !c.Bool("quiet") {
		wd, _ := os.Getwd()
		m.WriteText(stderr, wd)
		fmt.Fprintf(stderr, "capguard trace: capture map written to %s\n", c.String("out"))
	}
	return exitCode(code, nil)
}

// runTraced runs the command with the tracer injected, standard streams
// passed through and signals forwarded, and returns its exit status (128+N
// when a signal N ended it).
func runTraced(args []string, te traceEnv) (int, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = te.environ(os.Environ(), "")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...) // platform_unix.go, platform_other.go
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	// A terminal sends SIGINT and SIGQUIT to the whole foreground process
	// group, the child included: forwarding them too would deliver two.
	tty := isatty.IsTerminal(os.Stdin.Fd())
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if tty && (s == syscall.SIGINT || s == syscall.SIGQUIT) {
					continue
				}
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	return childStatus(cmd, err)
}

func childStatus(cmd *exec.Cmd, err error) (int, error) {
	if cmd.ProcessState == nil {
		return 0, err
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, err
	}
	return cmd.ProcessState.ExitCode(), nil
}

// traceFunction traces one function through capguard verify's harness: one
// interpreter per batch size, each writing its own map, merged into out.
func traceFunction(c *cli.Context, targetArg string, te traceEnv, stderr io.Writer) error {
	target, err := pyverify.ParseTarget(targetArg)
	if err != nil {
		return usageError("trace: %v", err)
	}
	if err := target.Check(); err != nil {
		return exitCode(2, fmt.Errorf("trace: %v", err))
	}
	spec, err := pyverify.LoadSpec(c.String("inputs"))
	if err != nil {
		return exitCode(2, fmt.Errorf("trace: %v", err))
	}
	batches, err := parseBatchSizes(c.String("batch-sizes"))
	if err != nil {
		return usageError("trace: --batch-sizes: %v", err)
	}
	py, err := exec.LookPath(c.String("python"))
	if err != nil {
		return exitCode(2, fmt.Errorf("trace: python interpreter %q not found: %v", c.String("python"), err))
	}
	dry := c.Bool("dry-run")
	harness, cases, err := pyverify.HarnessCases(target, spec, pyverify.Options{Python: py, BatchSizes: batches, Replays: c.Int("replays"), DryRun: dry}, te.dir)
	if err != nil {
		return exitCode(2, fmt.Errorf("trace: %v", err))
	}
	timeout := c.Duration("timeout")
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	failed := 0
	for _, cs := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		cmd := exec.CommandContext(ctx, py, "-u", harness, cs)
		// Every harness process writes OUT.PID.json (no process claims OUT).
		cmd.Env = append(te.environ(os.Environ(), "0"), "PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1")
		if dry && os.Getenv("CAPGUARD_TRACE_DEVICE_TYPES") == "" {
			cmd.Env = append(cmd.Env, "CAPGUARD_TRACE_DEVICE_TYPES=cpu") // the dry run's "device" tensors are CPU tensors
		}
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		cmd.Stderr = stderr
		err := cmd.Run()
		cancel()
		phase, res, perr := pyverify.ParseHarnessOutput(stdout.Bytes())
		switch {
		case perr != nil:
			fmt.Fprintf(stderr, "capguard trace: %s: %v\n", filepath.Base(cs), perr)
			failed++
		case res == nil:
			fmt.Fprintf(stderr, "capguard trace: %s: the harness printed no result (phase %q, %v)\n", filepath.Base(cs), phase, err)
			failed++
		case res.Status == "error" && res.Error != nil:
			fmt.Fprintf(stderr, "capguard trace: %s: %s: %s\n", filepath.Base(cs), res.Error.Kind, res.Error.Message)
			failed++
		}
	}
	m, merr := collectMaps(te.out)
	if merr != nil {
		fmt.Fprintf(stderr, "capguard trace: %v\n", merr)
		return exitCode(2, nil)
	}
	if !c.Bool("quiet") {
		wd, _ := os.Getwd()
		m.WriteText(stderr, wd)
		fmt.Fprintf(stderr, "capguard trace: capture map written to %s\n", c.String("out"))
	}
	if failed == len(cases) {
		return exitCode(2, nil)
	}
	return nil
}
