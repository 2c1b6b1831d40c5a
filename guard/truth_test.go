package guard

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/truth"
)

var updateTruth = flag.Bool("update", false, "rewrite testdata/gpu/probes/TRUTH.md and guard/truth/truth_table.go from the probes and verdicts.json")

const probesDir = "../testdata/gpu/probes"

var probeRE = regexp.MustCompile(`(?m)^#\s*probe:\s*(CG\d{3})\s+(positive|negative|policy)\b`)

// probe is one file of the GPU truth table.
type probe struct {
	name, path, rule, role string
}

func probes(t *testing.T) []probe {
	t.Helper()
	var out []probe
	for _, dir := range []string{probesDir, filepath.Join(probesDir, "fixed")} {
		files, _ := filepath.Glob(filepath.Join(dir, "cg[0-9][0-9][0-9]_*.py"))
		sort.Strings(files)
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m := probeRE.FindSubmatch(src)
			if m == nil {
				t.Errorf("%s: no `# probe: CGnnn positive|negative|policy` line", f)
				continue
			}
			p := probe{name: strings.TrimSuffix(filepath.Base(f), ".py"), path: f, rule: string(m[1]), role: string(m[2])}
			if filepath.Base(dir) == "fixed" {
				p.name, p.role = "fixed/"+p.name, "fixed"
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatal("no probes")
	}
	return out
}

// verdictDoc is what testdata/gpu/probes/harness.py --all writes.
type verdictDoc struct {
	Measured bool   `json:"measured"`
	Device   string `json:"device"`
	Torch    string `json:"torch"`
	Triton   string `json:"triton"`
	Command  string `json:"command"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Probes   []struct {
		Probe   string `json:"probe"`
		Rule    string `json:"rule"`
		Role    string `json:"role"`
		Verdict string `json:"verdict"`
		Error   string `json:"error"`
		// Device, where the probe ran on another GPU than the rest (a
		// probe added while no machine of the table's kind could be had).
		Device  string `json:"device"`
		Batches []struct {
			Batch    int    `json:"batch"`
			Verdict  string `json:"verdict"`
			Replays  int    `json:"replays"`
			Diverged int    `json:"diverged"`
			Error    string `json:"error"`
		} `json:"batches"`
	} `json:"probes"`
}

// roleAgrees: what a GPU verdict must be for a probe of each role.
func roleAgrees(role, verdict string) bool {
	switch role {
	case "positive":
		return verdict == "stale-read" || verdict == "fault" || verdict == "capture-error"
	case "negative", "policy", "fixed":
		return verdict == "clean"
	}
	return false
}

// TestProbeTruth is the agreement test of the GPU truth table. For every
// probe it checks capguard's findings against the probe's role (a positive
// has a finding of its rule, a negative has no finding at all, a policy
// probe has its rule's finding, capguard fix's version of a probe has none
// of its rule) and its `# want:` lines; then, once verdicts.json holds
// measurements, the GPU verdict against the role (a positive fails on the
// GPU, every other role replays clean). TRUTH.md and guard/truth/truth_table.go
// are generated from the same facts (-update rewrites them) and must be
// current.
func TestProbeTruth(t *testing.T) {
	var doc verdictDoc
	data, err := os.ReadFile(filepath.Join(probesDir, "verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("verdicts.json: %v", err)
	}
	measured := map[string]int{}
	for i, p := range doc.Probes {
		measured[p.Probe] = i
	}
	var rows []truth.MeasuredRow
	for _, pr := range probes(t) {
		res, err := Run(Options{Paths: []string{pr.path}, Config: &Config{}})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Errors {
			t.Errorf("%s: %s", pr.name, e.Message)
		}
		var found []string
		has := false
		got := map[string]bool{}
		for _, d := range res.Diagnostics {
			found = append(found, fmt.Sprintf("%s:%d", d.Rule.ID, d.Start.Line))
			got[fmt.Sprintf("%d:%s", d.Start.Line, d.Rule.ID)] = true
			if d.Rule.ID == pr.rule {
				has = true
			}
		}
		switch pr.role {
		case "positive", "policy":
			if !has {
				t.Errorf("%s: a %s probe of %s, and capguard does not report %s (findings %v)", pr.name, pr.role, pr.rule, pr.rule, found)
			}
		case "negative":
			if len(found) > 0 {
				t.Errorf("%s: a negative probe of %s, and capguard reports %v", pr.name, pr.rule, found)
			}
		case "fixed":
			if has {
				t.Errorf("%s: capguard fix's version still has %s (findings %v)", pr.name, pr.rule, found)
			}
		}
		if pr.role != "fixed" { // a fixed version keeps the original's want comments
			src, _ := os.ReadFile(pr.path)
			want := map[string]bool{}
			for i, line := range strings.Split(string(src), "\n") {
				if m := wantRE.FindStringSubmatch(line); m != nil {
					for _, code := range regexp.MustCompile(`CG[0-9]{3}`).FindAllString(m[1], -1) {
						want[fmt.Sprintf("%d:%s", i+1, code)] = true
					}
				}
			}
			for k := range got {
				if !want[k] {
					t.Errorf("%s: unexpected finding at %s", pr.name, k)
				}
			}
			for k := range want {
				if !got[k] {
					t.Errorf("%s: missing finding at %s", pr.name, k)
				}
			}
		}
		row := truth.MeasuredRow{Probe: pr.name, Rule: pr.rule, Role: pr.role, Verdict: "pending", Finding: "-"}
		if len(found) > 0 {
			row.Finding = strings.Join(found, ", ")
		}
		if i, ok := measured[pr.name]; ok {
			v := doc.Probes[i]
			row.Verdict = v.Verdict
			var parts []string
			for _, b := range v.Batches {
				s := fmt.Sprintf("B=%d %s", b.Batch, b.Verdict)
				if b.Verdict == "stale-read" {
					s += fmt.Sprintf(" %d/%d", b.Diverged, b.Replays)
				}
				parts = append(parts, s)
			}
			row.Detail = strings.Join(parts, ", ")
			if v.Device != "" && v.Device != doc.Device {
				row.Detail += " (on " + v.Device + ")"
			}
			if v.Rule != pr.rule || v.Role != pr.role {
				t.Errorf("%s: verdicts.json has it as %s %s, the probe says %s %s", pr.name, v.Rule, v.Role, pr.rule, pr.role)
			}
		} else if doc.Measured {
			t.Errorf("%s: no GPU verdict in verdicts.json (run testdata/gpu/probes/run.sh)", pr.name)
		}
		if doc.Measured && row.Verdict != "pending" && !roleAgrees(pr.role, row.Verdict) {
			t.Errorf("%s: a %s probe of %s, and the GPU says %s (%s)", pr.name, pr.role, pr.rule, row.Verdict, row.Detail)
		}
		rows = append(rows, row)
	}
	source := "Not measured yet: `testdata/gpu/probes/run.sh` runs the probes on a GPU (verdicts pending)."
	if doc.Measured {
		source = fmt.Sprintf("Measured on %s (torch %s, triton %s) with `%s`", doc.Device, doc.Torch, doc.Triton, doc.Command)
		if doc.Commit != "" {
			source += " at commit " + doc.Commit
		}
		if doc.Date != "" {
			source += ", " + doc.Date
		}
		source += ": capture, then replays with new inputs over a churned, poisoned allocator, compared bitwise with eager."
	}
	checkGenerated(t, filepath.Join("truth", "truth_table.go"), truthTableGo(rows, source))
	checkGenerated(t, filepath.Join(probesDir, "TRUTH.md"), truthMarkdown(rows, source))
}

func checkGenerated(t *testing.T, path string, want []byte) {
	t.Helper()
	if *updateTruth {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is not current: go test ./guard -run TestProbeTruth -update", path)
	}
}

func truthTableGo(rows []truth.MeasuredRow, source string) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by go test ./guard -run TestProbeTruth -update; DO NOT EDIT.\n\npackage truth\n\n")
	fmt.Fprintf(&b, "// measuredSource says where the verdicts come from.\nconst measuredSource = %q\n\n", source)
	b.WriteString("// measuredRows is the GPU truth table (testdata/gpu/probes/TRUTH.md).\nvar measuredRows = []MeasuredRow{\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "\t{Probe: %q, Rule: %q, Role: %q, Verdict: %q, Detail: %q, Finding: %q},\n", r.Probe, r.Rule, r.Role, r.Verdict, r.Detail, r.Finding)
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return out
}

func truthMarkdown(rows []truth.MeasuredRow, source string) []byte {
	var b bytes.Buffer
	b.WriteString("# GPU truth table\n\n")
	b.WriteString("Every rule has probes here: small programs in the shape of inference code that capture a CUDA graph,\n" +
		"each a positive (the GPU fails: stale-read, fault or capture-error) or a negative (it replays clean)\n" +
		"example of one rule; `policy` is a finding the GPU does not fail (a claim of capture safety that holds\n" +
		"only for in-graph callers), and `fixed/` holds what `capguard fix` makes of a probe (it must replay\n" +
		"clean). `harness.py` runs them; `run.sh` runs all of them and `bench/gpu_fix_proof.py` on a GPU.\n" +
		"`TestProbeTruth` (guard/truth_test.go) fails when a positive probe has no finding, a negative one has\n" +
		"any, or a committed verdict contradicts its probe's role; `capguard rule CGnnn` prints a rule's rows.\n\n")
	b.WriteString(source + "\n\n")
	b.WriteString("Regenerate this table after a GPU run: copy `$OUT/verdicts.json` here, then\n`go test ./guard -run TestProbeTruth -update`.\n\n")
	b.WriteString("| probe | rule | role | GPU verdict | per batch size | capguard's findings (rule:line) |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", r.Probe, r.Rule, r.Role, r.Verdict, r.Detail, r.Finding)
	}
	return b.Bytes()
}

func TestRoleAgrees(t *testing.T) {
	for _, c := range []struct {
		role, verdict string
		ok            bool
	}{
		{"positive", "stale-read", true}, {"positive", "fault", true}, {"positive", "capture-error", true},
		{"positive", "clean", false}, {"positive", "error", false},
		{"negative", "clean", true}, {"negative", "stale-read", false}, {"negative", "error", false},
		{"policy", "clean", true}, {"policy", "fault", false},
		{"fixed", "clean", true}, {"fixed", "capture-error", false},
	} {
		if got := roleAgrees(c.role, c.verdict); got != c.ok {
			t.Errorf("roleAgrees(%s, %s) = %v", c.role, c.verdict, got)
		}
	}
}

// Every rule with probes cites its rows in its documentation.
func TestRuleDocsCiteTruthTable(t *testing.T) {
	for _, r := range Rules() {
		rows := truth.MeasuredRows(r.ID)
		if r.Run == nil && len(rows) == 0 {
			continue // CG900, CG901: suppression checks, nothing to run on a GPU
		}
		roles := map[string]bool{}
		for _, row := range rows {
			roles[row.Role] = true
			if !strings.Contains(r.Doc, "`"+row.Probe+"`") {
				t.Errorf("%s: its documentation does not cite %s", r.ID, row.Probe)
			}
		}
		if !roles["positive"] || !roles["negative"] {
			t.Errorf("%s: the truth table needs a positive and a negative probe (has %v)", r.ID, roles)
		}
	}
}
