package guard

import (
	"strings"
	"testing"
)

// A tensor argument is no host value baked at capture: in
// `torch.relu(x[:, :width])` only the slice bound `width` (a memo of a host
// read) is a CG102 finding, not the tensor `x[:, :width]` that holds it
// (testdata/flow/hostvalues/decode.py).
func TestHostValueNotTensorArgument(t *testing.T) {
	res, err := Run(Options{Paths: []string{"../testdata/flow/hostvalues"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Diagnostics {
		if d.Rule.ID == "CG102" && d.Start.Line == 88 {
			got = append(got, d.Message)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "host value `width` is baked into a slice bound") {
		t.Errorf("line 88: CG102 findings %q, want one on the slice bound `width`", got)
	}
}
