package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the app with args and returns stdout and stderr together, and
// the exit code.
func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &out
	code, _ := exitStatus(runArgs(app, append([]string{"capguard"}, args...)))
	return out.String(), code
}

func TestCheckExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"check", "../../testdata/negatives"}, 0},
		{[]string{"check", "../../testdata/readers"}, 1},
		{[]string{"check", "--exit-zero", "../../testdata/readers"}, 0},
		{[]string{"check", "../../testdata/readers", "no/such/path.py"}, 2},
		{[]string{"check", "--select", "XX1", "../../testdata/readers"}, 2},
		{[]string{"check", "--format", "yaml", "../../testdata/readers"}, 2},
		{[]string{"check"}, 0}, // checks ".": this folder has no Python file (a warning)
		{[]string{"chek", "x"}, 2},
		{[]string{"check", "--entry-point", "nocolon", "../../testdata/readers"}, 2},
		{[]string{"check", "--preset", "tensorrt", "../../testdata/readers"}, 2},
		{nil, 2}, // capguard alone: a usage error, as ruff's
		{[]string{"check", "--select", "CG1", "../../testdata/readers"}, 0},
	} {
		_, code := runCLI(t, c.args...)
		if code != c.code {
			t.Errorf("capguard %s: exit %d, want %d", strings.Join(c.args, " "), code, c.code)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	out, code := runCLI(t, "check", "--format", "json", "../../testdata/readers")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Version  int `json:"version"`
		Findings []struct {
			Rule, Name, Severity, Path, Message, Context string
			Line, Column, EndLine, EndColumn             int
			Chain                                        []string
			Fix                                          *struct{ Applicability, Message string }
		} `json:"findings"`
		Files  int               `json:"files"`
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	if doc.Version != 1 || doc.Files != 1 || len(doc.Findings) != 4 || doc.Errors == nil {
		t.Fatalf("doc: %+v", doc)
	}
	f := doc.Findings[2]
	if f.Rule != "CG301" || f.Path != "../../testdata/readers/bf16_index_reader.py" || f.Line != 34 || f.Column != 20 ||
		f.Fix == nil || f.Fix.Applicability != "safe" || f.Context != "claimed" || len(f.Chain) != 1 {
		t.Fatalf("finding: %+v", f)
	}
}

func TestCheckSARIF(t *testing.T) {
	out, _ := runCLI(t, "check", "--format", "sarif", "../../testdata/readers")
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID               string         `json:"id"`
						ShortDescription map[string]any `json:"shortDescription"`
						FullDescription  map[string]any `json:"fullDescription"`
						Help             map[string]any `json:"help"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string } `json:"artifactLocation"`
						Region           struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "capguard" {
		t.Fatalf("sarif header: %+v", log)
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) < 9 || run.Tool.Driver.Rules[0].Help == nil || run.Tool.Driver.Rules[0].FullDescription == nil {
		t.Fatalf("rules: %+v", run.Tool.Driver.Rules)
	}
	r := run.Results[1]
	if r.RuleID != "CG301" || r.Level != "warning" || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "testdata/readers/bf16_index_reader.py" ||
		r.Locations[0].PhysicalLocation.Region.StartLine != 33 {
		t.Fatalf("result: %+v", r)
	}
}

func TestCheckGitHubEscaping(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a,b:c.py")
	src := "import torch\ndef f(g, x):\n    with torch.cuda.graph(g):\n        x.item()\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code, _ := runApp(t, "check", "--format", "github", p)
	if code != 1 || !strings.Contains(out, "a%2Cb%3Ac.py,line=4,col=9") || strings.Count(out, "::error ") != 1 || !strings.Contains(out, "%0Acaptured:") {
		t.Fatalf("exit %d, annotation:\n%s", code, out)
	}
	// One finding, one line; run warnings are ::warning lines of their own.
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "::error ") && !strings.HasPrefix(l, "::warning ") {
			t.Errorf("not a workflow command: %q", l)
		}
	}
}

func TestRuleDocs(t *testing.T) {
	out, code := runCLI(t, "rule", "--all")
	if code != 0 {
		t.Fatal(code)
	}
	for _, id := range []string{"CG101", "CG102", "CG103", "CG104", "CG201", "CG202", "CG203", "CG301", "CG302"} {
		if !strings.Contains(out, "# "+id) {
			t.Errorf("rule --all lacks %s", id)
		}
	}
	for _, section := range []string{"## What it does", "## Why it matters", "## Example", "## Fix"} {
		if strings.Count(out, section) < 9 {
			t.Errorf("some rule lacks %q", section)
		}
	}
	if _, code := runCLI(t, "rule", "CG999"); code != 2 {
		t.Errorf("unknown rule: exit %d, want 2", code)
	}
}

// capguard check over bad input: stderr names each bad file with its
// problem, the good file's finding is still printed, and the exit status
// is 2 (something was not checked); a syntax error alone does not make it 2.
func TestCheckBadInputExit(t *testing.T) {
	dir := t.TempDir()
	good := "import torch\n\ndef f(g, x):\n    with torch.cuda.graph(g):\n        y = x.item()\n"
	for name, src := range map[string]string{
		"good.py":   good,
		"latin1.py": "import torch\ns = 'caf\xe9'\n",
		"binary.py": "\x00\x01",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Truncate(filepath.Join(dir, "binary.py"), 11<<20); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &stdout, &stderr
	code := 0
	if err := app.Run([]string{"capguard", "check", dir}); err != nil {
		code = err.(*exitError).code
	}
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(stdout.String(), "good.py:5:") {
		t.Errorf("good.py's finding missing:\n%s", stdout.String())
	}
	for _, want := range []string{"binary.py: error: 11.0 MiB, over the 10 MiB", "latin1.py: error: not valid UTF-8"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	// JSON names them too.
	out, _, _, _ := runApp(t, "check", "--format", "json", dir)
	var doc struct {
		Errors []struct{ Path, Message string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"binary.py": "11.0 MiB, over the 10 MiB", "latin1.py": "not valid UTF-8"}
	for _, e := range doc.Errors {
		if w, ok := want[filepath.Base(e.Path)]; ok && strings.Contains(e.Message, w) {
			delete(want, filepath.Base(e.Path))
		}
	}
	if len(want) > 0 {
		t.Errorf("errors %+v lack %v", doc.Errors, want)
	}
	os.WriteFile(filepath.Join(dir, "latin1.py"), []byte(good+"def broken(:\n"), 0o644)
	os.Remove(filepath.Join(dir, "binary.py"))
	if _, code := runCLI(t, "check", dir); code != 1 {
		t.Errorf("syntax error only: exit %d, want 1", code)
	}
}
