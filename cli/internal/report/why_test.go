package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard"
)

// TestWhyCallerInContext: graph --why on a function whose only callers run
// in a context that does not reach it (an inherited method's call of a
// sibling subclass's override, on a chain whose receiver is another
// subclass) names the callers and says why the context stops there,
// instead of saying that none of them runs under capture.
func TestWhyCallerInContext(t *testing.T) {
	g, err := guard.BuildGraph(guard.Options{Paths: []string{"../../../testdata/flow/receivers"}, Config: &guard.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Why(&b, g, "EagerRunner.step"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"EagerRunner.step (", "is eager",
		"steps.Stepper.run (captured, line ",
		"a caller that runs in a context does not pass it on here",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("graph --why EagerRunner.step lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "none of them runs under capture") {
		t.Errorf("graph --why says no caller runs under capture, though Stepper.run does:\n%s", out)
	}
}
