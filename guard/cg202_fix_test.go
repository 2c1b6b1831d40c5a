package guard

import (
	"sort"
	"strings"
	"testing"
)

// CG202's fix moves a derivation into the capture region with its trailing
// comment, or, when code before the region still uses it, recomputes it
// there without the comment (which stays with the original).
func TestDerivedFixComments(t *testing.T) {
	const head = "import torch\n\n\ndef capture(g, seq_lens, model):\n"
	for _, c := range []struct {
		name, body, want string
	}{
		{"move", "    cu = torch.cumsum(seq_lens, 0).to(torch.int32)  # int32 for the kernel\n" +
			"    with torch.cuda.graph(g):\n        out = model(cu)\n    return out\n",
			"    with torch.cuda.graph(g):\n        cu = torch.cumsum(seq_lens, 0).to(torch.int32)  # int32 for the kernel\n        out = model(cu)\n"},
		{"recompute", "    cu = torch.cumsum(seq_lens, 0).to(torch.int32)  # noqa: E501\n    model(cu)\n" +
			"    with torch.cuda.graph(g):\n        out = model(cu)\n    return out\n",
			"    cu = torch.cumsum(seq_lens, 0).to(torch.int32)  # noqa: E501\n    model(cu)\n    with torch.cuda.graph(g):\n        cu = torch.cumsum(seq_lens, 0).to(torch.int32)\n        out = model(cu)\n"},
	} {
		src := head + c.body
		res, err := Run(Options{Paths: []string{"d.py"}, Overlay: map[string][]byte{"d.py": []byte(src)}, Config: &Config{}})
		if err != nil {
			t.Fatal(err)
		}
		var fixed string
		for _, d := range res.Diagnostics {
			if d.Rule.ID == "CG202" && d.Fix != nil {
				fixed = applyEdits(src, d.Fix.Edits)
			}
		}
		if !strings.Contains(fixed, c.want) {
			t.Errorf("%s: fixed file\n%s\nlacks\n%s", c.name, fixed, c.want)
		}
	}
}

// applyEdits applies non-overlapping edits, in any order.
func applyEdits(src string, edits []TextEdit) string {
	sort.Slice(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		src = src[:e.Start] + e.NewText + src[e.End:]
	}
	return src
}
