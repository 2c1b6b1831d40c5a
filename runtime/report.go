package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Verdict is the outcome of checking one case; both runtime paths (this Go
// checker and the PyTorch harness) use the same words.
type Verdict string

const (
	// Clean: every replay equals eager and every canary is intact.
	Clean Verdict = "clean"
	// StaleRead: a replay differs from eager on the same inputs.
	StaleRead Verdict = "stale-read"
	// WriteAfterFree: a replay wrote memory the step had freed (a canary
	// changed), whatever its outputs.
	WriteAfterFree Verdict = "write-after-free"
	// Fault: a replay (or the eager step) raised a device error.
	Fault Verdict = "fault"
	// CaptureError: the capture itself failed, e.g. a sync under capture.
	CaptureError Verdict = "capture-error"
)

// rank orders verdicts by severity, for the worst of several.
func (v Verdict) rank() int {
	switch v {
	case Clean:
		return 0
	case StaleRead:
		return 1
	case WriteAfterFree:
		return 2
	case Fault:
		return 3
	case CaptureError:
		return 4
	}
	return -1
}

func worst(a, b Verdict) Verdict {
	if b.rank() > a.rank() {
		return b
	}
	return a
}

// DType is an output element type, for comparison and the max difference.
type DType string

const (
	Float32 DType = "float32"
	BF16    DType = "bfloat16"
	Int32   DType = "int32"
	Int64   DType = "int64"
	Uint8   DType = "uint8"
)

// Size is the element size in bytes.
func (t DType) Size() int {
	switch t {
	case Float32, Int32:
		return 4
	case BF16:
		return 2
	case Int64:
		return 8
	}
	return 1
}

// value is element i of b as a float64.
func (t DType) value(b []byte, i int) float64 {
	switch t {
	case Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case BF16:
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
	case Int32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case Int64:
		return float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
	}
	return float64(b[i])
}

func (t DType) format(b []byte, i int) string {
	switch t {
	case Float32, BF16:
		return fmt.Sprintf("%g", t.value(b, i))
	}
	return fmt.Sprintf("%d", int64(t.value(b, i)))
}

// Mismatch is one element where a replay differs from eager.
type Mismatch struct {
	Batch   int    `json:"batch"`
	Variant int    `json:"variant"`
	Output  string `json:"output"`
	Index   int    `json:"index"`
	Replay  string `json:"replay"`
	Eager   string `json:"eager"`
}

// BatchReport is the evidence for one captured batch size.
type BatchReport struct {
	Batch    int     `json:"batch"`
	Verdict  Verdict `json:"verdict"`
	Replays  int     `json:"replays"`
	Nodes    int     `json:"graph_nodes"`
	Compared int64   `json:"compared_elements"`
	// Mismatched elements over all replays, and the largest difference.
	Mismatched    int64     `json:"mismatched_elements"`
	MaxDiff       float64   `json:"max_diff"`
	FirstMismatch *Mismatch `json:"first_mismatch,omitempty"`
	// CanaryWords were planted over freed temporaries; CanaryChanged of
	// them were different after a replay (summed over replays).
	CanaryWords   int64      `json:"canary_words"`
	CanaryChanged int64      `json:"canary_words_changed"`
	Suspects      []Buffer   `json:"suspect_buffers,omitempty"`
	Covered       []Coverage `json:"covered_freed_ranges,omitempty"`
	Error         string     `json:"error,omitempty"`
}

// Report is the outcome of Check for one case.
type Report struct {
	Case      string        `json:"name"`
	Verdict   Verdict       `json:"verdict"`
	Backend   string        `json:"backend"`
	Placement Placement     `json:"placement"`
	Batches   []BatchReport `json:"batches"`
	// Phase is where an error stopped the check ("capture", "replay",
	// "eager", ...); Error says what it was.
	Phase string `json:"phase,omitempty"`
	Error string `json:"error,omitempty"`
	// Totals over all batch sizes.
	Mismatched    int64   `json:"mismatched_elements"`
	MaxDiff       float64 `json:"max_diff"`
	CanaryChanged int64   `json:"canary_words_changed"`
	// Times in seconds: capture (and instantiate), replays, eager references,
	// and the whole check.
	CaptureSeconds float64 `json:"capture_seconds"`
	ReplaySeconds  float64 `json:"replay_seconds"`
	EagerSeconds   float64 `json:"eager_seconds"`
	Seconds        float64 `json:"seconds"`
}

// Suspects are the suspect buffers of every batch size.
func (r *Report) Suspects() []Buffer {
	var out []Buffer
	for _, b := range r.Batches {
		out = append(out, b.Suspects...)
	}
	return out
}

// FirstMismatch is the first mismatch of any batch size, or nil.
func (r *Report) FirstMismatch() *Mismatch {
	for _, b := range r.Batches {
		if b.FirstMismatch != nil {
			return b.FirstMismatch
		}
	}
	return nil
}

// Compared is the number of output elements compared, over every batch.
func (r *Report) Compared() int64 {
	var n int64
	for _, b := range r.Batches {
		n += b.Compared
	}
	return n
}

// Summary is a one-line account of the report.
func (r *Report) Summary() string {
	s := fmt.Sprintf("%s: %s", r.Case, r.Verdict)
	if r.Mismatched > 0 {
		s += fmt.Sprintf(", %d/%d elements differ (max diff %g)", r.Mismatched, r.Compared(), r.MaxDiff)
		if m := r.FirstMismatch(); m != nil {
			s += fmt.Sprintf(", first at %s[%d] batch %d: replay %s, eager %s", m.Output, m.Index, m.Batch, m.Replay, m.Eager)
		}
	}
	if r.CanaryChanged > 0 {
		s += fmt.Sprintf(", %d canary words overwritten", r.CanaryChanged)
	}
	if sus := r.Suspects(); len(sus) > 0 {
		s += ", suspects:"
		for _, b := range sus {
			s += " " + b.Name
		}
	}
	if r.Error != "" {
		s += fmt.Sprintf(" (%s: %s)", r.Phase, r.Error)
	}
	return s
}

// compare compares replay and eager bytes of one output and adds to br.
func compare(br *BatchReport, name string, t DType, variant int, replay, eager []byte, tol float64) {
	n := len(replay) / t.Size()
	br.Compared += int64(n)
	sz := t.Size()
	for i := 0; i < n; i++ {
		r, e := replay[i*sz:(i+1)*sz], eager[i*sz:(i+1)*sz]
		if string(r) == string(e) {
			continue
		}
		d := math.Abs(t.value(replay, i) - t.value(eager, i))
		if math.IsNaN(d) || math.IsInf(d, 0) {
			d = math.MaxFloat64 // a NaN or infinite element: JSON has no Inf
		}
		if tol > 0 && d <= tol {
			continue
		}
		br.Mismatched++
		br.MaxDiff = max(br.MaxDiff, d)
		if br.FirstMismatch == nil {
			br.FirstMismatch = &Mismatch{Batch: br.Batch, Variant: variant, Output: name, Index: i,
				Replay: t.format(replay, i), Eager: t.format(eager, i)}
		}
	}
}
