package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const repoRoot = "../.."

// hook is one entry of .pre-commit-hooks.yaml, with the fields pre-commit's
// manifest schema knows.
type hook struct {
	ID                string   `yaml:"id"`
	Name              string   `yaml:"name"`
	Entry             string   `yaml:"entry"`
	Language          string   `yaml:"language"`
	Description       string   `yaml:"description"`
	Types             []string `yaml:"types"`
	TypesOr           []string `yaml:"types_or"`
	Files             string   `yaml:"files"`
	PassFilenames     *bool    `yaml:"pass_filenames"`
	RequireSerial     bool     `yaml:"require_serial"`
	MinimumPreCommit  string   `yaml:"minimum_pre_commit_version"`
	AlwaysRun         bool     `yaml:"always_run"`
	AdditionalDepends []string `yaml:"additional_dependencies"`
}

// The manifest declares the two hooks with pre-commit's golang language
// and entries capguard accepts; pre-commit's own validator agrees where it
// is installed.
func TestPreCommitManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []hook
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true) // a misspelt key is an error, as in pre-commit's schema
	if err := dec.Decode(&hooks); err != nil {
		t.Fatal(err)
	}
	byID := map[string]hook{}
	for _, h := range hooks {
		byID[h.ID] = h
		if h.Name == "" || h.Language != "golang" || h.PassFilenames == nil || *h.PassFilenames || !h.RequireSerial {
			t.Errorf("hook %+v: want a name, language golang, pass_filenames false (project-wide), require_serial", h)
		}
		// The entry parses as a capguard command line (every flag known).
		args := strings.Fields(h.Entry)
		if len(args) < 2 || args[0] != "capguard" {
			t.Errorf("%s: entry %q does not run capguard", h.ID, h.Entry)
			continue
		}
		dir := t.TempDir()
		_, _, code, msg := runApp(t, append(args[1:], dir)...)
		if code == 2 {
			t.Errorf("%s: %q is a usage error: %s", h.ID, h.Entry, msg)
		}
	}
	for _, id := range []string{"capguard-check", "capguard-fix"} {
		if _, ok := byID[id]; !ok {
			t.Errorf("no %s hook", id)
		}
	}
	if !strings.Contains(byID["capguard-fix"].Entry, "--write") {
		t.Error("capguard-fix does not write")
	}
	// The hook applies without a human: safe fixes only (README, "What
	// safe promises").
	if strings.Contains(byID["capguard-fix"].Entry, "unsafe") {
		t.Error("capguard-fix applies unsafe fixes")
	}
	if pc, err := exec.LookPath("pre-commit"); err == nil {
		cmd := exec.Command(pc, "validate-manifest", ".pre-commit-hooks.yaml")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("pre-commit validate-manifest: %v\n%s", err, out)
		}
	}
}

// snapshotRepo makes a git repository of this working tree as it is (tracked
// and untracked files git does not ignore): what pre-commit clones.
func snapshotRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "capguard")
	list := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	list.Dir = repoRoot
	out, err := list.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		src := filepath.Join(repoRoot, f)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, data, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.email=test@capguard", "-c", "user.name=test", "commit", "-qm", "snapshot")
	return dir, strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A real pre-commit run of both hooks, as a user's repository would have
// them: pre-commit clones the hook repository and builds it with the local
// Go toolchain (the module cache is the machine's; nothing else is
// fetched). CI installs pre-commit from Debian and sets
// CAPGUARD_REQUIRE_PRECOMMIT=1, so that a missing pre-commit fails there.
func TestPreCommitRun(t *testing.T) {
	pc, err := exec.LookPath("pre-commit")
	if err != nil {
		if os.Getenv("CAPGUARD_REQUIRE_PRECOMMIT") == "1" {
			t.Fatal("pre-commit is not installed and CAPGUARD_REQUIRE_PRECOMMIT=1 (.ci/run installs it)")
		}
		t.Skip("pre-commit is not installed (apt-get install pre-commit)")
	}
	if testing.Short() {
		t.Skip("builds capguard in a pre-commit environment")
	}
	hookRepo, sha := snapshotRepo(t)
	proj := t.TempDir()
	git(t, proj, "init", "-q")
	reader, _ := os.ReadFile(filepath.Join(repoRoot, "testdata/readers/bf16_index_reader.py"))
	os.WriteFile(filepath.Join(proj, "step.py"), []byte(syncStep), 0o644)
	os.WriteFile(filepath.Join(proj, "reader.py"), reader, 0o644)
	config := func(ids ...string) {
		var b strings.Builder
		b.WriteString("repos:\n- repo: " + hookRepo + "\n  rev: " + sha + "\n  hooks:\n")
		for _, id := range ids {
			b.WriteString("  - id: " + id + "\n")
		}
		os.WriteFile(filepath.Join(proj, ".pre-commit-config.yaml"), []byte(b.String()), 0o644)
		git(t, proj, "add", "-A")
	}
	home := t.TempDir()
	gomodcache, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	precommit := func(args ...string) (string, int) {
		cmd := exec.Command(pc, args...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "PRE_COMMIT_HOME="+home, "GOMODCACHE="+strings.TrimSpace(string(gomodcache)),
			"GOFLAGS=-mod=mod -buildvcs=true", "CAPGUARD_CACHE_DIR=", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}

	config("capguard-check")
	out, code := precommit("run", "--all-files")
	if code != 1 || !strings.Contains(out, "step.py:5:13: CG101") || !strings.Contains(out, "capguard check") {
		t.Fatalf("capguard-check: exit %d\n%s", code, out)
	}
	// The binary pre-commit built says which commit it is.
	bins, _ := filepath.Glob(filepath.Join(home, "repo*", "golangenv-*", "bin", "capguard"))
	if len(bins) != 1 {
		t.Fatalf("capguard binaries in the pre-commit environment: %v", bins)
	}
	if v, _ := exec.Command(bins[0], "--version").Output(); !strings.Contains(string(v), "rev "+sha[:12]) {
		t.Errorf("--version of the hook's binary: %q, want rev %s", v, sha[:12])
	}

	// capguard-fix writes the reader's fixes; pre-commit fails the run as
	// the hook changed files, and the host sync (no fix) remains.
	config("capguard-fix")
	out, code = precommit("run", "--all-files")
	fixed, _ := os.ReadFile(filepath.Join(proj, "reader.py"))
	if code != 1 || !strings.Contains(string(fixed), "persistent_buffer(") || !strings.Contains(out, "1 remaining") {
		t.Fatalf("capguard-fix: exit %d\n%s", code, out)
	}
	// With the host sync gone, both hooks pass.
	os.WriteFile(filepath.Join(proj, "step.py"), []byte(strings.Replace(syncStep, "x.item()", "x + 1", 1)), 0o644)
	config("capguard-check", "capguard-fix")
	if out, code = precommit("run", "--all-files"); code != 0 {
		t.Fatalf("clean project: exit %d\n%s", code, out)
	}
	// The cache folder ignores itself: nothing for git to add.
	if st := git(t, proj, "status", "--porcelain", "--untracked-files=all"); strings.Contains(st, ".capguard_cache") {
		t.Errorf("the cache shows in git status:\n%s", st)
	}
}

// action holds what the test reads of action.yml.
type action struct {
	Name    string
	Inputs  map[string]struct{ Description, Default string }
	Outputs map[string]struct{ Value string }
	Runs    struct {
		Using string
		Steps []struct {
			Name, ID, If, Uses, Shell, Run string
			Env                            map[string]string
			With                           map[string]string
		}
	}
}

var exprRE = regexp.MustCompile(`\$\{\{\s*([^}]*)\}\}`)
var refRE = regexp.MustCompile(`\b(inputs|steps)\.([A-Za-z0-9_-]+)(?:\.outputs\.([A-Za-z0-9_-]+))?`)

// action.yml is a composite action whose expressions name only its inputs
// and its steps' outputs, whose shell steps run scripts/action.sh, and that
// uploads SARIF; the README's workflow uses it with inputs it has.
func TestActionManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" || a.Name == "" {
		t.Fatalf("runs.using %q", a.Runs.Using)
	}
	ids := map[string]bool{}
	upload := false
	for _, s := range a.Runs.Steps {
		if s.ID != "" {
			ids[s.ID] = true
		}
		if s.Run != "" && s.Shell == "" {
			t.Errorf("step %q runs a script without a shell (composite steps need one)", s.Name)
		}
		if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@") {
			upload = true
		}
		if strings.Contains(s.Run, "scripts/action.sh") {
			if _, err := os.Stat(filepath.Join(repoRoot, "scripts/action.sh")); err != nil {
				t.Error(err)
			}
		}
	}
	if !upload {
		t.Error("no SARIF upload step")
	}
	for _, m := range exprRE.FindAllStringSubmatch(string(data), -1) {
		for _, r := range refRE.FindAllStringSubmatch(m[1], -1) {
			switch r[1] {
			case "inputs":
				if _, ok := a.Inputs[r[2]]; !ok {
					t.Errorf("${{ %s }} names no input", m[1])
				}
			case "steps":
				if !ids[r[2]] || r[3] == "" {
					t.Errorf("${{ %s }} names no step output", m[1])
				}
			}
		}
	}
	// The README's (and docs/examples') workflow uses the action with its inputs.
	wf, err := os.ReadFile(filepath.Join(repoRoot, "docs/examples/capguard-workflow.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Permissions map[string]string
		Jobs        map[string]struct {
			Steps []struct {
				Uses string
				With map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(wf, &w); err != nil {
		t.Fatal(err)
	}
	if w.Permissions["security-events"] != "write" {
		t.Error("the example workflow cannot upload SARIF (security-events: write)")
	}
	used := false
	for _, j := range w.Jobs {
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "cudagraph-capguard/capguard@") {
				used = true
				for k := range s.With {
					if _, ok := a.Inputs[k]; !ok {
						t.Errorf("the example passes %q, which the action does not take", k)
					}
				}
			}
		}
	}
	readme, _ := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if !used || !strings.Contains(string(readme), strings.TrimSpace(string(wf[strings.Index(string(wf), "name: capguard"):]))) {
		t.Error("the README does not show docs/examples/capguard-workflow.yml (or the example does not use the action)")
	}
}

// The action's steps, run here as the runner would: install builds
// capguard from the action's checkout and puts it on GITHUB_PATH; run
// writes a SARIF report with relative URIs, prints annotations and sets the
// outputs; a finding is exit code 1.
func TestActionScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capguard")
	}
	root, _ := filepath.Abs(repoRoot)
	tmp := t.TempDir()
	env := append(os.Environ(), "RUNNER_TEMP="+tmp, "GITHUB_PATH="+filepath.Join(tmp, "path"), "GITHUB_OUTPUT="+filepath.Join(tmp, "out"),
		"CAPGUARD_ACTION_PATH="+root, "CAPGUARD_VERSION=action", "CAPGUARD_CACHE_DIR=", "GOFLAGS=-mod=mod")
	install := exec.Command("bash", filepath.Join(root, "scripts/action.sh"), "install")
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil || !strings.Contains(string(out), "capguard "+version) {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if p, _ := os.ReadFile(filepath.Join(tmp, "path")); strings.TrimSpace(string(p)) != filepath.Join(tmp, "capguard-bin") {
		t.Errorf("GITHUB_PATH: %q", p)
	}
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	os.MkdirAll(filepath.Join(ws, "srt"), 0o755)
	os.WriteFile(filepath.Join(ws, "srt", "step.py"), []byte(syncStep), 0o644)
	run := exec.Command("bash", filepath.Join(root, "scripts/action.sh"), "run")
	run.Dir = ws
	run.Env = append(env, "CAPGUARD_ARGS=srt --select CG1", "CAPGUARD_SARIF_FILE=out.sarif", "CAPGUARD_ANNOTATIONS=true")
	out, err := run.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "::error file=srt/step.py,line=5,col=13") {
		t.Fatalf("run: %v\n%s", err, out)
	}
	outputs, _ := os.ReadFile(filepath.Join(tmp, "out"))
	if string(outputs) != "exit-code=1\nsarif-file=out.sarif\n" {
		t.Errorf("outputs %q", outputs)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
					}
				}
			}
		}
	}
	data, _ := os.ReadFile(filepath.Join(ws, "out.sarif"))
	if err := json.Unmarshal(data, &log); err != nil || len(log.Runs[0].Results) != 1 ||
		log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != "srt/step.py" {
		t.Errorf("SARIF: %v %s", err, data)
	}
}
