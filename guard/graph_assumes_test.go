package guard

import (
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
