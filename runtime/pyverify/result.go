package pyverify

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Verdict of one (target, batch size) case. The names are DESIGN.md's, shared
// with the Go runtime checker; Error is a case that could not run.
type Verdict string

const (
	Clean        Verdict = "clean"         // every replay equalled eager
	StaleRead    Verdict = "stale-read"    // a replay differed from eager on the same inputs
	Fault        Verdict = "fault"         // the replay (or the work after it) raised a CUDA error or killed the process
	CaptureError Verdict = "capture-error" // capture itself failed
	Error        Verdict = "error"         // could not run: no torch, no GPU, bad target or spec, timeout before replay

	// A dry run (no GPU, nothing captured) never gives the verdicts above
	// but Error: it says whether the spec and the target work.
	DryRunOK Verdict = "dry-run-ok" // the inputs, the target and replay-prep ran on the CPU, and the comparison worked
	NotRun   Verdict = "not-run"    // they ran up to a kernel (or other GPU-only work), which a dry run does not run
)

// Hazard reports whether a verdict shows a hazard (exit status 1).
func (v Verdict) Hazard() bool { return v == StaleRead || v == Fault || v == CaptureError }

// harnessResult is what the harness prints after "@@capguard-verify result".
type harnessResult struct {
	Protocol   int             `json:"protocol"`
	Status     string          `json:"status"` // ok, capture-error, fault, error
	BatchSize  int             `json:"batch_size"`
	DryRun     bool            `json:"dry_run"`
	Python     string          `json:"python"`
	Executable string          `json:"executable"`
	Torch      string          `json:"torch"`
	Triton     *string         `json:"triton"`
	Device     string          `json:"device"`
	Capability string          `json:"capability"`
	SyncDebug  bool            `json:"sync_debug"`
	CaptureMs  float64         `json:"capture_ms"`
	Replays    []ReplayRecord  `json:"replays"`
	Suspects   []SuspectBuffer `json:"suspects"`
	Error      *CaseError      `json:"error"`
}

// ReplayRecord is one replay as the harness saw it.
type ReplayRecord struct {
	Index         int       `json:"index"`
	Equal         *bool     `json:"equal,omitempty"` // nil: the replay did not get as far as the comparison
	Elements      int64     `json:"elements,omitempty"`
	Mismatched    int64     `json:"mismatched,omitempty"`
	MaxDiff       float64   `json:"max_diff,omitempty"`
	FirstMismatch *Mismatch `json:"first_mismatch,omitempty"`
	ReplayMs      float64   `json:"replay_ms,omitempty"`
	EagerMs       float64   `json:"eager_ms,omitempty"`
	Note          string    `json:"note,omitempty"`
}

// Mismatch is the first element where a replay and eager differed.
type Mismatch struct {
	Replay int    `json:"replay"`
	Output string `json:"output"` // "out", "out[1]", or an output argument's name
	Index  []int  `json:"index"`
	Got    string `json:"replay_value"`
	Want   string `json:"eager_value"`
}

// SuspectBuffer is state the graph read at capture that was rebound (or a
// static input that moved) before a replay: the replay still reads the old
// tensor. CapturedBlockLive is false when the caching allocator had already
// freed the captured address, nil where torch has no memory snapshot.
type SuspectBuffer struct {
	Name              string `json:"name"`
	Reason            string `json:"reason"`
	CapturedPtr       string `json:"captured_ptr,omitempty"`
	Shape             []int  `json:"shape,omitempty"`
	Dtype             string `json:"dtype,omitempty"`
	Replays           int    `json:"replays"`
	CapturedBlockLive *bool  `json:"captured_block_live"`
}

// CaseError is why a case did not finish normally: the exception (root
// first), where in the user's code, and in which phase.
type CaseError struct {
	Kind      string   `json:"kind,omitempty"` // no-torch, no-gpu, bad-target, bad-spec, error, timeout, crash
	Type      string   `json:"type,omitempty"`
	Message   string   `json:"message"`
	Messages  []string `json:"messages,omitempty"`
	Phase     string   `json:"phase,omitempty"`
	File      string   `json:"file,omitempty"`
	Line      int      `json:"line,omitempty"`
	Code      string   `json:"code,omitempty"`
	Traceback string   `json:"traceback,omitempty"`
}

const mark = "@@capguard-verify "

// parseOutput finds the harness's protocol lines in a process's stdout: the
// last phase it entered and its result, if it printed one.
func parseOutput(stdout []byte) (lastPhase string, res *harnessResult, err error) {
	for _, line := range strings.Split(string(stdout), "\n") {
		line = strings.TrimRight(line, "\r")
		if !strings.HasPrefix(line, mark) {
			continue
		}
		rest := line[len(mark):]
		switch {
		case strings.HasPrefix(rest, "phase "):
			lastPhase = strings.TrimSpace(rest[len("phase "):])
		case strings.HasPrefix(rest, "result "):
			var r harnessResult
			if e := json.Unmarshal([]byte(rest[len("result "):]), &r); e != nil {
				return lastPhase, nil, fmt.Errorf("the harness's result line is not valid JSON: %v", e)
			}
			if r.Protocol != protocol {
				return lastPhase, nil, fmt.Errorf("the harness speaks protocol %d, capguard %d", r.Protocol, protocol)
			}
			res = &r
		}
	}
	return lastPhase, res, nil
}

// inReplay reports whether a harness phase is at or after the first replay,
// where a death or a hang is the graph's doing.
func inReplay(phase string) bool {
	for _, p := range []string{"replay", "eager", "compare", "prepare "} {
		if strings.HasPrefix(phase, p) {
			return phase != "prepare 0"
		}
	}
	return false
}
