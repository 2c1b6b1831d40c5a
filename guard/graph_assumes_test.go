package guard

import (
	"regexp"
	"strings"
	"testing"
)

// TestGraphAssumes: the graph says what a chain's root rests on when it is
// not proved (graph --why prints it, the JSON carries it as "assumes"), and
// says nothing for a proved one.
func TestGraphAssumes(t *testing.T) {
	for _, c := range []struct {
		dir, fn, want string
	}{
		{"../testdata/flow/callers_capture", "step.add_rows", "assumes a caller passes step.add_rows to step.capture_pair"},
		{"../testdata/flow/postcapture", "load_hook.Int8Linear.process_weights_after_loading", "assumes weights are reloaded into the live engine"},
		{"../testdata/flow/autograd_backward", "train.ClipGrad.backward", "assumes the backward pass run under capture"},
		{"../testdata/flow/callers_held", "adapter.add_bias", ""},
		{"../testdata/flow/replay_by_call", "engine.LoraIndex.update", "assumes engine.Engine.step runs after the graph is captured"},
	} {
		g, err := BuildGraph(Options{Paths: []string{c.dir}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range g.Functions {
			if f.Name != c.fn {
				continue
			}
			found = true
			if c.want == "" && f.Assumes != "" || !strings.HasPrefix(f.Assumes, c.want) {
				t.Errorf("%s: assumes %q, want it to start with %q", c.fn, f.Assumes, c.want)
			}
		}
		if !found {
			t.Errorf("%s: no function %s in the graph", c.dir, c.fn)
		}
	}
}

// TestCallersRegionWarning: a capture region that runs what its callers
// pass says how many of the project's callables it was assumed to run, in
// words that fit the number; one whose call binds none of them says
// nothing is checked.
func TestCallersRegionWarning(t *testing.T) {
	for _, c := range []struct{ dir, want string }{
		{"../testdata/flow/callers_capture", "step.py:21: the capture region runs what its callers pass (it calls `fn`): 2 public callables of the project that launch kernels are checked as captured"},
		{"../testdata/flow/callers_capture", "step.py:48: the capture region reaches no project function (it calls `step`)"},
		{"../testdata/negatives", "persistent_reader.py:35: the capture region runs what its callers pass (it calls `reader`): 1 public callable of the project that launches kernels is checked as captured"},
	} {
		res, err := Run(Options{Paths: []string{c.dir}, Config: &Config{}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, w := range res.Warnings {
			found = found || strings.Contains(w, c.want)
		}
		if !found {
			t.Errorf("%s: no warning %q in %q", c.dir, c.want, res.Warnings)
		}
	}
}

// TestReplayByCallQuotesNoLine: the assumption of a replay-prep region
// before a call that replays names no line. The results cache keeps a
// stored result across an edit that moves lines only when no finding could
// quote one (cli/internal/cache: lineRef), and a region's warning stands in
// a file other than the one edited: a line number there made every inert
// edit of lmdeploy's package a whole analysis (bench/run.sh, 0.03 -> 1.9 s).
func TestReplayByCallQuotesNoLine(t *testing.T) {
	res, err := Run(Options{Paths: []string{"../testdata/flow/replay_by_call"}, Config: &Config{}})
	if err != nil {
		t.Fatal(err)
	}
	lineRef := regexp.MustCompile(`(\S*\.py):\d|(?i:\bline\s*\d)`)
	n := 0
	for _, d := range res.Diagnostics {
		for _, a := range d.Assumes {
			if !strings.Contains(a, "which replays a graph") {
				continue
			}
			n++
			if lineRef.MatchString(a) {
				t.Errorf("%s: the assumption quotes a line: %s", d.Path, a)
			}
		}
	}
	if n == 0 {
		t.Fatal("no finding rests on a replay-prep region before a call that replays")
	}
}
