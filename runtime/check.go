package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cudagraph-capguard/capguard/runtime/backend"
)

// Poison is the word written over every canary.
const Poison uint32 = 0xDEADBEEF

// Output is a persistent buffer compared between replay and eager.
type Output struct {
	Key  string
	Type DType
	// Len is the number of elements compared at a batch size.
	Len func(batch int) int
}

// Case is one step to check.
type Case struct {
	Name    string
	Modules []backend.ModuleSource
	// Batches are the batch sizes captured, one graph each, all sharing the
	// Env's persistent buffers (default {1}). The first warm-up runs at the
	// largest, so persistent buffers are allocated at their largest size.
	Batches []int
	// Variants is the number of new inputs each graph is replayed with
	// (default 3).
	Variants int
	// Inputs writes the inputs of variant v (0 is warm-up and capture) at a
	// batch size into the step's static input buffers, outside any capture.
	Inputs func(e *Env, batch, variant int) error
	// Prepare, if set, runs in the same call as Step but before the capture:
	// work a replay will not repeat.
	Prepare Step
	// Step is captured.
	Step    Step
	Outputs []Output
	// Tolerance is the largest absolute difference still equal (default 0:
	// bitwise).
	Tolerance float64
}

// Options tune Check.
type Options struct {
	Placement Placement
	// noCanaries and noCompare switch off half of the detector; tests use
	// them to prove the self-test fails without either half.
	noCanaries, noCompare bool
}

// Check proves or refutes the capture safety of c on b. For each batch size
// it warms up eagerly, captures the step (whose temporaries are freed when it
// returns), then for each input variant: writes the new inputs into the
// static buffers, covers the freed temporaries with canaries and poisons them,
// replays, synchronises, checks the canaries, runs the step eagerly with fresh
// temporaries, and compares. Graphs of different batch sizes are replayed in
// turn, so shared persistent buffers are exercised.
//
// A device error is a verdict (fault, capture-error), not an error: Check
// returns an error only when the case itself cannot run (bad definition,
// setup failure). Everything made — graphs, execs, stream, modules, memory —
// is released before Check returns, also on error.
func Check(b backend.Backend, c Case, opt Options) (rep *Report, err error) {
	t0 := time.Now()
	rep = &Report{Case: c.Name, Verdict: Clean, Backend: b.Name()}
	batches := c.Batches
	if len(batches) == 0 {
		batches = []int{1}
	}
	variants := c.Variants
	if variants <= 0 {
		variants = 3
	}
	if c.Step == nil || c.Inputs == nil || len(c.Outputs) == 0 {
		return nil, fmt.Errorf("case %q: Step, Inputs and Outputs are required", c.Name)
	}
	e, err := NewEnv(b, EnvOptions{Placement: opt.Placement, Modules: c.Modules})
	if err != nil {
		return nil, fmt.Errorf("case %q: %w", c.Name, err)
	}
	rep.Placement = e.arena.Placement()
	var graphs []*Graph
	defer func() {
		var cerr error
		for _, g := range graphs {
			if g != nil {
				cerr = errors.Join(cerr, g.Close())
			}
		}
		cerr = errors.Join(cerr, e.Close())
		if cerr != nil && err == nil && rep.Verdict != Fault {
			err = fmt.Errorf("case %q: release: %w", c.Name, cerr)
		}
		rep.Seconds = time.Since(t0).Seconds()
	}()

	// stop ends the check at a failed phase and returns the verdict it
	// gave: capture-error for a capture that failed without a fault, else
	// fault.
	stop := func(phase string, err error) Verdict {
		rep.Phase, rep.Error = phase, err.Error()
		v := CaptureError
		if phase != "capture" || backend.KindOf(err) == backend.Fault {
			v = Fault
		}
		rep.Verdict = worst(rep.Verdict, v)
		return v
	}

	// Warm up, largest batch first, then capture each batch size.
	order := append([]int(nil), batches...)
	largest := 0
	for i, bs := range order {
		if bs > order[largest] {
			largest = i
		}
	}
	order[0], order[largest] = order[largest], order[0]
	for _, bs := range order {
		if err := c.Inputs(e, bs, 0); err != nil {
			return rep, fmt.Errorf("case %q: inputs: %w", c.Name, err)
		}
		if err := e.run(c.Prepare, c.Step, bs); err != nil {
			if backend.KindOf(err) == backend.Fault {
				stop("warm-up", err)
				return rep, nil
			}
			return rep, fmt.Errorf("case %q: warm-up at batch %d: %w", c.Name, bs, err)
		}
	}
	rep.Batches = make([]BatchReport, len(batches))
	for i, bs := range batches {
		br := &rep.Batches[i]
		br.Batch = bs
		if err := c.Inputs(e, bs, 0); err != nil {
			return rep, fmt.Errorf("case %q: inputs: %w", c.Name, err)
		}
		g, err := e.captureGraph(c.Prepare, c.Step, bs)
		if err != nil {
			br.Error = err.Error()
			br.Verdict = stop("capture", err)
			return rep, nil
		}
		graphs = append(graphs, g)
		rep.CaptureSeconds += g.Took.Seconds()
		br.Nodes, br.Suspects, br.Verdict = g.Nodes, g.Suspects, Clean
	}

	for v := 1; v <= variants; v++ {
		for i, g := range graphs {
			br := &rep.Batches[i]
			phase, err := replayOnce(e, c, g, br, v, opt, rep)
			br.Verdict = worst(br.Verdict, batchVerdict(br))
			if err != nil {
				if phase != "replay" && backend.KindOf(err) != backend.Fault {
					return rep, fmt.Errorf("case %q: %s: %w", c.Name, phase, err)
				}
				br.Verdict, br.Error = worst(br.Verdict, Fault), err.Error()
				stop(phase, err)
				addTotals(rep)
				return rep, nil
			}
		}
	}
	addTotals(rep)
	return rep, nil
}

func batchVerdict(br *BatchReport) Verdict {
	v := Clean
	if br.Mismatched > 0 {
		v = StaleRead
	}
	if br.CanaryChanged > 0 {
		v = WriteAfterFree
	}
	return v
}

func addTotals(rep *Report) {
	for _, br := range rep.Batches {
		rep.Verdict = worst(rep.Verdict, br.Verdict)
		rep.Mismatched += br.Mismatched
		rep.MaxDiff = max(rep.MaxDiff, br.MaxDiff)
		rep.CanaryChanged += br.CanaryChanged
	}
}

// replayOnce runs one variant of one graph; on error it says in which phase.
func replayOnce(e *Env, c Case, g *Graph, br *BatchReport, v int, opt Options, rep *Report) (string, error) {
	if err := c.Inputs(e, g.Batch, v); err != nil {
		return "inputs", err
	}
	// Cover the freed temporaries with poisoned canaries.
	canaries, cov, err := e.arena.cover(g.Freed)
	defer func() { e.arena.dropAll(canaries) }()
	if err != nil {
		return "canaries", err
	}
	if br.Covered == nil {
		br.Covered = cov
	}
	for _, cn := range canaries {
		if err := e.s.MemsetD32(cn.Addr, Poison, cn.Span/4); err != nil {
			return "canaries", err
		}
	}
	if err := e.s.Synchronize(); err != nil {
		return "canaries", err
	}
	// Replay.
	t := time.Now()
	if err := g.Replay(); err != nil {
		return "replay", err
	}
	rep.ReplaySeconds += time.Since(t).Seconds()
	br.Replays++
	replayed := make([][]byte, len(c.Outputs))
	for i, o := range c.Outputs {
		buf, ok := e.arena.Lookup(o.Key)
		if !ok {
			return "inputs", fmt.Errorf("output %q is not a persistent buffer", o.Key)
		}
		replayed[i] = make([]byte, o.Len(g.Batch)*o.Type.Size())
		if int64(len(replayed[i])) > buf.Size {
			return "inputs", fmt.Errorf("output %q: %d bytes compared, buffer has %d", o.Key, len(replayed[i]), buf.Size)
		}
		if err := e.b.CopyDtoH(replayed[i], buf.Addr); err != nil {
			return "replay", err
		}
	}
	// Check the canaries.
	for _, cn := range canaries {
		words := make([]byte, cn.Span)
		if err := e.b.CopyDtoH(words, cn.Addr); err != nil {
			return "canaries", err
		}
		br.CanaryWords += cn.Span / 4
		if opt.noCanaries {
			continue
		}
		for j := 0; j+4 <= len(words); j += 4 {
			if binary.LittleEndian.Uint32(words[j:]) != Poison {
				br.CanaryChanged++
			}
		}
	}
	if err := e.arena.dropAll(canaries); err != nil {
		canaries = nil
		return "canaries", err
	}
	canaries = nil
	// The eager reference on the same inputs, with fresh temporaries.
	t = time.Now()
	if err := e.run(c.Prepare, c.Step, g.Batch); err != nil {
		return "eager", err
	}
	rep.EagerSeconds += time.Since(t).Seconds()
	for i, o := range c.Outputs {
		buf, _ := e.arena.Lookup(o.Key)
		eager := make([]byte, len(replayed[i]))
		if err := e.b.CopyDtoH(eager, buf.Addr); err != nil {
			return "eager", err
		}
		if !opt.noCompare {
			compare(br, o.Key, o.Type, v, replayed[i], eager, c.Tolerance)
		}
	}
	return "", nil
}
