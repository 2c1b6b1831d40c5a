package pyverify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cudagraph-capguard/capguard/templates"
)

// Options of a verify run.
type Options struct {
	Python     string        // interpreter; default "python3"
	BatchSizes []int         // default: the spec's, else 1, 4, 32
	Replays    int           // default: the spec's, else 5
	Timeout    time.Duration // per case; default: the spec's, else 3 minutes
	Jobs       int           // cases run at once (each its own process); default 1
	DryRun     bool          // no GPU: run on the CPU with a fake graph, to check the spec and target
	Variant    string        // "original" (default) or "fixed"; carried into the report
	Log        io.Writer     // one line per case as it finishes; may be nil
	// Env is added to the interpreter's environment.
	Env []string
}

// DefaultBatchSizes are those of DESIGN.md's measured table.
var DefaultBatchSizes = []int{1, 4, 32}

// ErrNoPython is returned (wrapped) when the interpreter cannot be found.
var ErrNoPython = errors.New("python interpreter not found")

func (o *Options) fill(s *Spec) error {
	if o.Python == "" {
		o.Python = "python3"
	}
	if len(o.BatchSizes) == 0 {
		o.BatchSizes = s.BatchSizes
	}
	if len(o.BatchSizes) == 0 {
		o.BatchSizes = DefaultBatchSizes
	}
	if o.Replays <= 0 {
		o.Replays = s.Replays
	}
	if o.Replays <= 0 {
		o.Replays = 5
	}
	if o.Timeout <= 0 && s.Timeout != "" {
		o.Timeout, _ = time.ParseDuration(s.Timeout)
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
	if o.Jobs <= 0 {
		o.Jobs = 1
	}
	if o.Variant == "" {
		o.Variant = "original"
	}
	return nil
}

// Verify runs every batch size of the spec against the target, one
// interpreter process each, and returns the report. The error is for what
// stops the whole run before any case (no interpreter, a spec that does not
// resolve, no temporary folder); a case that could not run is a case with
// verdict Error.
func Verify(ctx context.Context, t Target, s *Spec, o Options) (*Report, error) {
	return verify(ctx, t, s, source{RunPath: t.Path, OrigPath: t.Path}, o)
}

func verify(ctx context.Context, t Target, s *Spec, src source, o Options) (*Report, error) {
	if err := o.fill(s); err != nil {
		return nil, err
	}
	py, err := exec.LookPath(o.Python)
	if err != nil {
		return nil, fmt.Errorf("%w: %q (%v); install Python 3 with PyTorch, or pass --python /path/to/venv/bin/python", ErrNoPython, o.Python, err)
	}
	dir, err := os.MkdirTemp("", "capguard-verify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	harness := filepath.Join(dir, "verify_harness.py")
	if err := os.WriteFile(harness, templates.VerifyHarness, 0o644); err != nil {
		return nil, err
	}
	cases := make([]*harnessCase, len(o.BatchSizes))
	for i, b := range o.BatchSizes {
		c, err := buildCase(t, s, src, b, &o)
		if err != nil {
			return nil, err
		}
		cases[i] = c
	}
	rep := &Report{
		Target: t.String(), Variant: o.Variant, File: src.RunPath, Spec: s.Path, Python: py,
		BatchSizes: o.BatchSizes, Replays: o.Replays, DryRun: o.DryRun,
		Cases: make([]CaseReport, len(cases)),
	}
	// Cases run in their own processes, Jobs at a time. An error that every
	// case would meet (no torch, no GPU, a target that does not import) stops
	// the cases not yet started.
	var (
		mu      sync.Mutex
		stopped *CaseError
		wg      sync.WaitGroup
		next    = make(chan int)
	)
	for w := 0; w < o.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				mu.Lock()
				stop := stopped
				mu.Unlock()
				var cr CaseReport
				if stop != nil {
					cr = CaseReport{BatchSize: cases[i].BatchSize, Verdict: Error,
						Error: &CaseError{Kind: stop.Kind, Message: "not run: an earlier case failed the same way: " + stop.Message}}
				} else {
					cr = runCase(ctx, py, harness, dir, i, cases[i], &o)
				}
				if cr.Verdict == Error && cr.Error != nil && global(cr.Error.Kind) {
					mu.Lock()
					if stopped == nil {
						stopped = cr.Error
					}
					mu.Unlock()
				}
				mu.Lock()
				rep.Cases[i] = cr
				if o.Log != nil {
					fmt.Fprintf(o.Log, "capguard verify: %s %s batch %d: %s\n", t, o.Variant, cr.BatchSize, cr.Summary())
				}
				mu.Unlock()
			}
		}()
	}
	for i := range cases {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	for i := range rep.Cases {
		if rep.Cases[i].Verdict == "" { // cancelled before it started
			rep.Cases[i] = CaseReport{BatchSize: cases[i].BatchSize, Verdict: Error, Error: &CaseError{Kind: "cancelled", Message: "not run: cancelled"}}
		}
	}
	rep.fillEnv()
	return rep, nil
}

// global reports whether an error kind would repeat in every case.
func global(kind string) bool {
	switch kind {
	case "no-torch", "no-gpu", "bad-target", "bad-spec", "no-python":
		return true
	}
	return false
}

// runCase runs one (target, batch size) case in its own interpreter process.
func runCase(ctx context.Context, py, harness, dir string, i int, c *harnessCase, o *Options) CaseReport {
	cr := CaseReport{BatchSize: c.BatchSize}
	casePath := filepath.Join(dir, fmt.Sprintf("case-%d-b%d.json", i, c.BatchSize))
	data, err := json.MarshalIndent(c, "", "  ")
	if err == nil {
		err = os.WriteFile(casePath, data, 0o644)
	}
	if err != nil {
		cr.Verdict, cr.Error = Error, &CaseError{Kind: "error", Message: err.Error()}
		return cr
	}
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, py, "-u", harness, casePath)
	cmd.Env = append(append(os.Environ(), "PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1"), o.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &tail{max: 8 << 10, buf: &stderr}
	setProcessGroup(cmd)
	start := time.Now()
	runErr := cmd.Run()
	cr.Seconds = time.Since(start).Seconds()
	cr.Stderr = lastLines(stderr.String(), 20)
	phase, res, perr := parseOutput(stdout.Bytes())
	timedOut := errors.Is(cctx.Err(), context.DeadlineExceeded)
	cr.Exit = exitStatus(cmd, runErr, timedOut)
	switch {
	case timedOut:
		msg := fmt.Sprintf("timed out after %s in phase %q", o.Timeout, phase)
		if inReplay(phase) {
			cr.Verdict = Fault
			cr.Error = &CaseError{Kind: "timeout", Phase: phase, Message: msg + ": the replay hung (a graph reading garbage indices can loop or deadlock)"}
		} else {
			cr.Verdict = Error
			cr.Error = &CaseError{Kind: "timeout", Phase: phase, Message: msg + "; raise --timeout if the target is slow to compile"}
		}
		if res != nil {
			cr.fromResult(res)
		}
		return cr
	case ctx.Err() != nil:
		cr.Verdict, cr.Error = Error, &CaseError{Kind: "cancelled", Message: "cancelled"}
		return cr
	case perr != nil:
		cr.Verdict, cr.Error = Error, &CaseError{Kind: "protocol", Phase: phase, Message: perr.Error()}
		return cr
	case res == nil:
		// The process died without a result: a CUDA fault can abort the
		// interpreter; before the replay it is an error of the set-up.
		msg := fmt.Sprintf("the interpreter exited (%s) in phase %q without a result", cr.Exit, phase)
		if phase == "" {
			msg = fmt.Sprintf("the interpreter exited (%s) without running the harness: is %s a Python 3 interpreter?", cr.Exit, py)
			if s := strings.TrimSpace(stdout.String()); s != "" {
				msg += "; it printed: " + firstLine(s)
			}
		}
		clean := cmd.ProcessState != nil && cmd.ProcessState.Success()
		switch {
		case clean:
			cr.Verdict = Error
			msg = fmt.Sprintf("the interpreter exited normally in phase %q without printing a result; it printed: %s", phase, firstLine(lastLines(stdout.String(), 1)))
		case inReplay(phase):
			cr.Verdict = Fault
		case phase == "capture":
			cr.Verdict = CaptureError
		default:
			cr.Verdict = Error
		}
		kind := "crash"
		if clean {
			kind = "protocol"
		}
		cr.Error = &CaseError{Kind: kind, Phase: phase, Message: msg}
		return cr
	}
	cr.fromResult(res)
	return cr
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf *bytes.Buffer
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func exitStatus(cmd *exec.Cmd, err error, timedOut bool) string {
	if timedOut {
		return "killed after the timeout"
	}
	if cmd.ProcessState == nil {
		if err != nil {
			return err.Error()
		}
		return "not started"
	}
	return cmd.ProcessState.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
