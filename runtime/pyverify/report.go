package pyverify

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Report is one verify run: a target (original or fixed) at every batch size.
type Report struct {
	Target     string       `json:"target"`
	Variant    string       `json:"variant"` // original or fixed
	File       string       `json:"file"`    // the file the harness loaded (a temporary copy for fixed)
	Spec       string       `json:"spec"`
	Python     string       `json:"python"`
	Torch      string       `json:"torch,omitempty"`
	Triton     string       `json:"triton,omitempty"`
	Device     string       `json:"device,omitempty"`
	BatchSizes []int        `json:"batch_sizes"`
	Replays    int          `json:"replays"`
	DryRun     bool         `json:"dry_run,omitempty"`
	Cases      []CaseReport `json:"cases"`
}

// CaseReport is the verdict and evidence of one (target, batch size) case.
type CaseReport struct {
	BatchSize int     `json:"batch_size"`
	Verdict   Verdict `json:"verdict"`
	// Replays is the number of replays compared, Diverged how many of them
	// differed from eager.
	Replays            int             `json:"replays"`
	Diverged           int             `json:"diverged"`
	MismatchedElements int64           `json:"mismatched_elements"` // over all replays
	Elements           int64           `json:"elements"`            // compared per replay
	MaxDifference      float64         `json:"max_difference"`      // >= 3e38: one side was inf or NaN
	FirstMismatch      *Mismatch       `json:"first_mismatch,omitempty"`
	SuspectBuffers     []SuspectBuffer `json:"suspect_buffers,omitempty"`
	// Mean times per call in milliseconds (CUDA events): eager is the target
	// run eagerly, replay the graph's replay.
	EagerMs   float64 `json:"eager_ms,omitempty"`
	ReplayMs  float64 `json:"replay_ms,omitempty"`
	CaptureMs float64 `json:"capture_ms,omitempty"`
	// Rule is the capguard rule a capture error (or a fault) stands for.
	Rule       string         `json:"rule,omitempty"`
	RuleReason string         `json:"rule_reason,omitempty"`
	Error      *CaseError     `json:"error,omitempty"`
	SyncDebug  bool           `json:"sync_debug"`
	PerReplay  []ReplayRecord `json:"per_replay,omitempty"`
	Exit       string         `json:"process_exit"`
	Seconds    float64        `json:"process_seconds"`
	Stderr     string         `json:"stderr_tail,omitempty"`

	torch, triton, device string
}

func (cr *CaseReport) fromResult(r *harnessResult) {
	cr.torch, cr.device = r.Torch, r.Device
	if r.Triton != nil {
		cr.triton = *r.Triton
	}
	cr.SyncDebug = r.SyncDebug
	cr.CaptureMs = r.CaptureMs
	cr.SuspectBuffers = r.Suspects
	cr.PerReplay = r.Replays
	var eager, replay float64
	var ne, nr int
	for _, rr := range r.Replays {
		if rr.ReplayMs > 0 {
			replay += rr.ReplayMs
			nr++
		}
		if rr.EagerMs > 0 {
			eager += rr.EagerMs
			ne++
		}
		if rr.Equal == nil {
			continue
		}
		cr.Replays++
		cr.Elements = rr.Elements
		if !*rr.Equal {
			cr.Diverged++
			cr.MismatchedElements += rr.Mismatched
			cr.MaxDifference = math.Max(cr.MaxDifference, rr.MaxDiff)
			if cr.FirstMismatch == nil && rr.FirstMismatch != nil {
				m := *rr.FirstMismatch
				m.Replay = rr.Index
				cr.FirstMismatch = &m
			}
		}
	}
	if nr > 0 {
		cr.ReplayMs = replay / float64(nr)
	}
	if ne > 0 {
		cr.EagerMs = eager / float64(ne)
	}
	if r.Error != nil {
		cr.Error = r.Error
	}
	switch r.Status {
	case "ok":
		if cr.Diverged > 0 {
			cr.Verdict = StaleRead
		} else if cr.Replays == 0 {
			cr.Verdict = Error
			cr.Error = &CaseError{Kind: "error", Message: "no replay was compared"}
		} else {
			cr.Verdict = Clean
		}
	case "capture-error":
		cr.Verdict = CaptureError
		cr.Rule, cr.RuleReason = ruleFor(r.Error)
	case "fault":
		cr.Verdict = Fault
	case "not-run": // dry runs only
		cr.Verdict = NotRun
	case "error":
		cr.Verdict = Error
		if cr.Error == nil {
			cr.Error = &CaseError{Kind: "error", Message: "the harness reported an error without a message"}
		}
	default:
		cr.Verdict = Error
		cr.Error = &CaseError{Kind: "protocol", Message: fmt.Sprintf("unknown harness status %q", r.Status)}
	}
	if r.DryRun {
		cr.dryRun(r.Status)
		return
	}
	if (cr.Verdict == Fault || cr.Verdict == StaleRead) && len(cr.SuspectBuffers) > 0 {
		cr.Rule, cr.RuleReason = "CG201", "the replay read state rebound after capture: "+suspectNames(cr.SuspectBuffers)
	}
}

// dryRun replaces a dry run's verdict: nothing was captured, so no hazard
// verdict holds. A case that ran is DryRunOK (whether or not its CPU reruns
// matched eager: that is no evidence); one that reached a kernel is NotRun;
// anything else the target raised is an Error of the spec or target.
func (cr *CaseReport) dryRun(status string) {
	cr.Rule, cr.RuleReason = "", ""
	switch {
	case status == "not-run":
		cr.Verdict = NotRun
	case cr.Verdict == Error:
	case status == "ok":
		cr.Verdict = DryRunOK
	default: // the fake capture or a rerun raised: the target's error on the CPU
		cr.Verdict = Error
		if cr.Error == nil {
			cr.Error = &CaseError{Kind: "error", Message: "the dry run failed in the capture or a rerun"}
		}
		cr.Error.Kind = "error"
		cr.Error.Message = "the target failed on the CPU: " + cr.Error.Message
	}
}

func suspectNames(s []SuspectBuffer) string {
	var names []string
	for _, b := range s {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

func (r *Report) fillEnv() {
	for _, c := range r.Cases {
		if r.Torch == "" {
			r.Torch = c.torch
		}
		if r.Triton == "" {
			r.Triton = c.triton
		}
		if r.Device == "" {
			r.Device = c.device
		}
	}
}

// Summary is one line: the verdict and its evidence.
func (cr *CaseReport) Summary() string {
	var b strings.Builder
	b.WriteString(string(cr.Verdict))
	switch cr.Verdict {
	case Clean:
		fmt.Fprintf(&b, ": %d/%d replays equal eager", cr.Replays, cr.Replays)
		if len(cr.SuspectBuffers) > 0 {
			b.WriteString(", but it reads state rebound after capture: " + suspectNames(cr.SuspectBuffers))
		}
	case StaleRead:
		fmt.Fprintf(&b, ": %d/%d replays diverged, %d elements, max diff %s", cr.Diverged, cr.Replays, cr.MismatchedElements, fmtDiff(cr.MaxDifference))
	case DryRunOK:
		b.Reset()
		fmt.Fprintf(&b, "dry run ok: the inputs, the target and its replay-prep ran on the CPU (%d reruns compared; no verdict)", cr.Replays)
		if len(cr.SuspectBuffers) > 0 {
			b.WriteString("; state rebound after capture: " + suspectNames(cr.SuspectBuffers))
		}
	case NotRun:
		b.Reset()
		b.WriteString("not run: ")
		if cr.Error != nil {
			b.WriteString(firstLine(cr.Error.Message))
		}
		b.WriteString("; the spec, the inputs and the target ran up to it")
	case Fault, CaptureError, Error:
		if cr.Error != nil {
			msg := firstLine(cr.Error.Message)
			if cr.Error.Phase != "" && cr.Verdict == Fault {
				msg = "in " + cr.Error.Phase + ": " + msg
			}
			b.WriteString(": " + msg)
		}
	}
	if cr.Rule != "" {
		b.WriteString(" [" + cr.Rule + "]")
	}
	return b.String()
}

func fmtDiff(d float64) string {
	if d >= 3e38 {
		return "inf"
	}
	return fmt.Sprintf("%.4g", d)
}

// Hazard reports whether any case shows a hazard.
func (r *Report) Hazard() bool {
	for _, c := range r.Cases {
		if c.Verdict.Hazard() {
			return true
		}
	}
	return false
}

// Failed reports whether any case could not run.
func (r *Report) Failed() bool {
	for _, c := range r.Cases {
		if c.Verdict == Error {
			return true
		}
	}
	return false
}

// ExitCode over reports: 1 when any shows a hazard (a hazard shown is the
// answer, even if another case could not run), else 2 when a case could not
// run, else 0.
func ExitCode(reps ...*Report) int {
	failed := false
	for _, r := range reps {
		if r == nil {
			continue
		}
		if r.Hazard() {
			return 1
		}
		failed = failed || r.Failed()
	}
	if failed {
		return 2
	}
	return 0
}

// WriteText prints a report for a person: a header, a line per batch size,
// then the evidence of each case that is not clean.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "capguard verify %s (%s)\n", r.Target, r.Variant)
	r.writeEnv(w)
	for _, c := range r.Cases {
		fmt.Fprintf(w, "  batch %-4d %s\n", c.BatchSize, c.Summary())
	}
	for _, c := range r.Cases {
		c.writeEvidence(w, "  ")
	}
}

func (r *Report) writeEnv(w io.Writer) {
	env := []string{}
	if r.Torch != "" {
		env = append(env, "torch "+r.Torch)
	}
	if r.Triton != "" {
		env = append(env, "triton "+r.Triton)
	}
	if r.Device != "" {
		env = append(env, r.Device)
	}
	env = append(env, fmt.Sprintf("%d replays per batch size", r.Replays))
	fmt.Fprintf(w, "  %s\n", strings.Join(env, ", "))
	if r.DryRun {
		fmt.Fprintln(w, "  DRY RUN on the CPU: nothing is captured or replayed and no kernel is launched, so there is no")
		fmt.Fprintln(w, "  hazard verdict; each case says whether the spec and the target work (run without --dry-run on a GPU)")
	}
}

func (c *CaseReport) writeEvidence(w io.Writer, ind string) {
	if (c.Verdict == Clean && len(c.SuspectBuffers) == 0) || (c.Verdict == Error && (c.Error == nil || (c.Error.File == "" && c.Error.Traceback == ""))) ||
		c.Verdict == DryRunOK && len(c.SuspectBuffers) == 0 {
		return // the summary line says all there is
	}
	if c.Verdict == NotRun {
		if e := c.Error; e != nil && e.File != "" {
			fmt.Fprintf(w, "%sbatch %d, not run: at %s:%d: %s\n", ind, c.BatchSize, e.File, e.Line, e.Code)
		}
		return
	}
	fmt.Fprintf(w, "%sbatch %d, %s:\n", ind, c.BatchSize, c.Verdict)
	if c.FirstMismatch != nil {
		m := c.FirstMismatch
		fmt.Fprintf(w, "%s  first mismatch: replay %d, %s%v: replay %s, eager %s\n", ind, m.Replay, m.Output, m.Index, m.Got, m.Want)
	}
	for _, s := range c.SuspectBuffers {
		live := "unknown"
		if s.CapturedBlockLive != nil {
			live = map[bool]string{true: "that address is allocated again or still held", false: "that address is free"}[*s.CapturedBlockLive]
		}
		fmt.Fprintf(w, "%s  suspect buffer %s: %s (captured at %s, %s, in %d replays)\n", ind, s.Name, s.Reason, s.CapturedPtr, live, s.Replays)
	}
	if e := c.Error; e != nil {
		if e.File != "" {
			fmt.Fprintf(w, "%s  at %s:%d: %s\n", ind, e.File, e.Line, e.Code)
		}
		for _, m := range e.Messages {
			fmt.Fprintf(w, "%s  %s\n", ind, firstLine(m))
		}
		if len(e.Messages) == 0 && c.Verdict != Error {
			fmt.Fprintf(w, "%s  %s\n", ind, firstLine(e.Message))
		}
		if c.Verdict == Error && e.Traceback != "" {
			fmt.Fprintf(w, "%s  %s\n", ind, strings.ReplaceAll(lastLines(e.Traceback, 6), "\n", "\n"+ind+"  "))
		}
	}
	if c.Rule != "" {
		fmt.Fprintf(w, "%s  rule %s (capguard rule %s): %s\n", ind, c.Rule, c.Rule, c.RuleReason)
	}
	if c.Verdict == Fault || (c.Verdict == Error && c.Error != nil && c.Error.Kind == "crash") {
		if c.Stderr != "" {
			fmt.Fprintf(w, "%s  stderr: %s\n", ind, strings.ReplaceAll(lastLines(c.Stderr, 4), "\n", "\n"+ind+"          "))
		}
	}
}

// WriteSideBySide prints an original and a fixed report of the same target
// and spec as one table: the report a user shows in a code review.
func WriteSideBySide(w io.Writer, orig, fixed *Report, patch string) {
	fmt.Fprintf(w, "capguard verify %s: original vs fixed (what `capguard fix` would write)\n", orig.Target)
	orig.writeEnv(w)
	left := "original"
	col := len(left)
	for _, c := range orig.Cases {
		col = max(col, len(c.Summary()))
	}
	col = min(col, 72)
	fmt.Fprintf(w, "  %-6s %-*s %s\n", "batch", col, left, "fixed")
	n := len(orig.Cases)
	if len(fixed.Cases) > n {
		n = len(fixed.Cases)
	}
	for i := 0; i < n; i++ {
		var a, b string
		var bs int
		if i < len(orig.Cases) {
			a, bs = orig.Cases[i].Summary(), orig.Cases[i].BatchSize
		}
		if i < len(fixed.Cases) {
			b, bs = fixed.Cases[i].Summary(), fixed.Cases[i].BatchSize
		}
		if len(a) > col {
			a = a[:col-3] + "..."
		}
		fmt.Fprintf(w, "  %-6d %-*s %s\n", bs, col, a, b)
	}
	timing := false
	for i := range orig.Cases {
		if i < len(fixed.Cases) && orig.Cases[i].ReplayMs > 0 && fixed.Cases[i].ReplayMs > 0 {
			if !timing {
				fmt.Fprintf(w, "  replay ms (eager ms):\n")
				timing = true
			}
			o, f := orig.Cases[i], fixed.Cases[i]
			fmt.Fprintf(w, "  %-6d %-*s %.4f (%.4f), fixed/original %.2f\n", o.BatchSize, col, fmt.Sprintf("%.4f (%.4f)", o.ReplayMs, o.EagerMs), f.ReplayMs, f.EagerMs, f.ReplayMs/o.ReplayMs)
		}
	}
	fmt.Fprintln(w, "evidence, original:")
	for _, c := range orig.Cases {
		c.writeEvidence(w, "  ")
	}
	fmt.Fprintln(w, "evidence, fixed:")
	for _, c := range fixed.Cases {
		c.writeEvidence(w, "  ")
	}
	if patch != "" {
		fmt.Fprintln(w, "the fix:")
		for _, l := range strings.Split(strings.TrimRight(patch, "\n"), "\n") {
			fmt.Fprintln(w, "  "+l)
		}
	} else {
		fmt.Fprintln(w, "the fix: capguard fix changes nothing in this target's files")
	}
}
