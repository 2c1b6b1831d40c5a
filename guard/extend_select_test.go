package guard

import (
	"strings"
	"testing"
)

// A config's extend-select adds to its select in every caller's run, not
// only where capguard check folds it into its flags: capguard server
// passes the config alone, and reported the select's rules only.
func TestExtendSelectFromConfig(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"runner.py":  "import torch\n\nfrom sampler import sample\n\n\ndef capture(g, logits):\n    with torch.cuda.graph(g):\n        return sample(logits)\n",
		"sampler.py": "def sample(logits):\n    top = logits.argmax(-1)\n    n = top.max().item()\n    return top[:n]\n",
	})
	rules := func(cfg *Config) string {
		t.Helper()
		res, err := Run(Options{Paths: []string{dir}, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range res.Diagnostics {
			ids = append(ids, d.Rule.ID)
		}
		return strings.Join(ids, ",")
	}
	if all := rules(&Config{}); all != "CG101,CG102" {
		t.Fatalf("every rule: %s, want CG101,CG102", all)
	}
	if got := rules(&Config{Select: []string{"CG101"}}); got != "CG101" {
		t.Errorf("select CG101: %s", got)
	}
	if got := rules(&Config{Select: []string{"CG101"}, ExtendSelect: []string{"CG102"}}); got != "CG101,CG102" {
		t.Errorf("select CG101, extend-select CG102: %s, want CG101,CG102", got)
	}
}
