package guard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// localGraphDir holds the GPU measurement of the local-graph claims of
// CG102 and CG202 (a graph that lives and replays only in the function that
// captures it): local_graph.py's CASES say, per case function, whether a
// replay reads stale data; verdicts.json, once made on a GPU, what the GPU
// said.
var localGraphDir = filepath.Join("..", "testdata", "gpu", "local_graph")

// caseRE reads a row of local_graph.py's CASES table.
var caseRE = regexp.MustCompile(`\("([a-z0-9_]+)", "(CG[0-9]{3})", "(clean|stale)", (case_[a-z_]+)\)`)

// TestLocalGraphClaims: capguard reports a case's rule in its function
// exactly where the case claims a replay reads stale data, and, where
// verdicts.json holds a GPU measurement, the GPU agrees with each claim.
func TestLocalGraphClaims(t *testing.T) {
	path := filepath.Join(localGraphDir, "local_graph.py")
	rows, res := claimCases(t, path, caseRE, 6)
	found := map[string]bool{} // function:rule
	for _, d := range res.Diagnostics {
		found[d.Function+":"+d.Rule.ID] = true
	}
	claims := map[string]string{}
	for _, r := range rows {
		name, rule, claim, fn := r[1], r[2], r[3], r[4]
		claims[name] = claim
		if got := found[fn+":"+rule]; got != (claim == "stale") {
			t.Errorf("%s: claims %s, and capguard reports %s in %s: %v", name, claim, rule, fn, got)
		}
	}
	checkVerdicts(t, localGraphDir, "verdicts.json", "local_graph.py", claims, "docs/design.md, \"Graphs that live in one function\"", false)
}

// claimCases reads the CASES rows of a GPU claim script (re, at least min
// of them) and capguard's result on the script.
func claimCases(t *testing.T, path string, re *regexp.Regexp, min int) ([][]string, *Result) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := re.FindAllStringSubmatch(string(src), -1)
	if len(rows) < min {
		t.Fatalf("%d cases in %s, want at least %d", len(rows), path, min)
	}
	res, err := Run(Options{Paths: []string{path}, Config: &Config{}})
	if err != nil {
		t.Fatal(err)
	}
	return rows, res
}

// checkVerdicts compares the GPU's verdicts in dir's file (verdicts.json),
// once a GPU run made it, with each case's claim in script (claims, by
// case); without the file it says what to run (hint: where the docs say
// it). For the run of script's fixed version (fixed), every case must
// replay clean whatever the original's claim.
func checkVerdicts(t *testing.T, dir, file, script string, claims map[string]string, hint string, fixed bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if os.IsNotExist(err) {
		t.Logf("no GPU verdicts yet (%s): run %s on a GPU (%s)", file, script, hint)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct{ Case, Rule, Claim, Verdict string }
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) != len(claims) {
		t.Errorf("%s has %d cases, %s %d", file, len(doc.Cases), script, len(claims))
	}
	for _, c := range doc.Cases {
		if claims[c.Case] != c.Claim {
			t.Errorf("%s: %s has claim %q, %s %q", c.Case, file, c.Claim, script, claims[c.Case])
		}
		want := c.Claim
		if fixed {
			want = "clean"
		}
		if c.Verdict != want {
			t.Errorf("%s (%s): want %s, and the GPU says %s", c.Case, file, want, c.Verdict)
		}
	}
}
