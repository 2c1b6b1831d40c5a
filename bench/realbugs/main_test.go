package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The engine of the synthetic repository, before the fix: the captured step
// reads a device scalar on the host (CG101), and a second captured helper
// keeps its host sync across the fix (so that bug stays flagged).
const runnerParent = `import torch


class Runner:
    def __init__(self, model):
        self.model = model
        self.scale = torch.ones(1, device="cuda")

    def step(self, x):
        n = int(x.sum().item())
        return self.model(x) * n + self.helper(x)

    def helper(self, x):
        lens = x.tolist()
        return x[: len(lens)]

    def capture(self, x):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.out = self.step(x)
        return graph
`

// After the fix: the step multiplies by a device tensor instead.
const runnerFix = `import torch


class Runner:
    def __init__(self, model):
        self.model = model
        self.scale = torch.ones(1, device="cuda")

    def step(self, x):
        return self.model(x) * self.scale + self.helper(x)

    def helper(self, x):
        lens = x.tolist()
        return x[: len(lens)]

    def capture(self, x):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.out = self.step(x)
        return graph
`

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, file, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mirror makes <root>/mirrors/acme+engine/repo, a bare mirror of a two-commit
// history (the bug, then its fix), and returns the mirrors folder and the
// two commits. The parent also holds a file whose object the mirror lacks.
func mirror(t *testing.T) (mirrors, parent, fix, lost string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	work := filepath.Join(root, "work")
	git(t, root, "init", "-q", work)
	write(t, filepath.Join(work, "src/engine/__init__.py"), "")
	write(t, filepath.Join(work, "src/engine/runner.py"), runnerParent)
	write(t, filepath.Join(work, "src/engine/lost.py"), "def lost():\n    return 1\n")
	write(t, filepath.Join(work, "docs/notes.md"), "not checked\n")
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "bug")
	parent = git(t, work, "rev-parse", "HEAD")
	lost = git(t, work, "rev-parse", "HEAD:src/engine/lost.py")
	write(t, filepath.Join(work, "src/engine/runner.py"), runnerFix)
	git(t, work, "commit", "-q", "-am", "fix")
	fix = git(t, work, "rev-parse", "HEAD")
	mirrors = filepath.Join(root, "mirrors")
	bare := filepath.Join(mirrors, "acme+engine", "repo")
	git(t, root, "clone", "-q", "--bare", "--no-local", work, bare)
	// Unpack, then drop lost.py's blob: the scorer must skip it, not fail.
	packs, _ := filepath.Glob(filepath.Join(bare, "objects", "pack", "*.pack"))
	for _, p := range packs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
		cmd := exec.Command("git", "--git-dir", bare, "unpack-objects", "-q")
		cmd.Stdin = bytes.NewReader(data)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("unpack-objects: %v\n%s", err, out)
		}
	}
	if err := os.Remove(filepath.Join(bare, "objects", lost[:2], lost[2:])); err != nil {
		t.Fatal(err)
	}
	return mirrors, parent, fix, lost
}

func TestReadBugs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bugs.tsv")
	write(t, file, "# comment\n\ntrain\tacme+engine\tp\tf\tsrc/a.py\tA.b\tCG101, CG102\tsrc\twords\n")
	bugs, err := readBugs(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(bugs) != 1 || strings.Join(bugs[0].Rules, "|") != "CG101|CG102" || bugs[0].Line != 3 {
		t.Fatalf("got %+v", bugs)
	}
	write(t, file, "test\tacme+engine\tp\tf\tsrc/a.py\tA.b\tCG101\tsrc\twords\n")
	if _, err := readBugs(file); err == nil {
		t.Error("a set other than train, val, holdout or fresh was accepted")
	}
	write(t, file, "fresh\tacme+engine\tp\tf\tsrc/a.py\tA.b\tCG101\tsrc\twords\n")
	if bugs, err := readBugs(file); err != nil || len(bugs) != 1 || bugs[0].Set != "fresh" {
		t.Errorf("a fresh row: %+v, %v", bugs, err)
	}
	write(t, file, "train\tacme+engine\tp\tf\tsrc/a.py\tA.b\tCG101\n")
	if _, err := readBugs(file); err == nil {
		t.Error("a short line was accepted")
	}
}

func TestMatching(t *testing.T) {
	b := Bug{File: "src/engine/runner.py", Function: "Runner.step", Rules: []string{"CG101"}}
	fs := []Finding{
		{Rule: "CG101", Severity: "error", Path: "src/engine/runner.py", Function: "Runner.step"},
		{Rule: "CG101", Severity: "warning", Path: "./src/engine/runner.py", Function: "Runner.step.inner"},
		{Rule: "CG101", Path: "src/engine/runner.py", Function: "Runner.stepper"},
		{Rule: "CG102", Path: "src/engine/runner.py", Function: "Runner.step"},
		{Rule: "CG101", Path: "src/engine/other.py", Function: "Runner.step"},
	}
	if got := matching(fs, b, false); len(got) != 2 {
		t.Errorf("matched %d findings, want 2 (the function and one nested in it): %+v", len(got), got)
	}
	if got := matching(fs, b, true); len(got) != 1 || got[0].Severity != "error" {
		t.Errorf("errors only: matched %+v, want the one error", got)
	}
}

func TestMaterializeSkipsMissingObjects(t *testing.T) {
	mirrors, parent, _, _ := mirror(t)
	dir := t.TempDir()
	missing, err := materialize(filepath.Join(mirrors, "acme+engine", "repo"), parent, "src/engine", "src/engine/runner.py", dir)
	if err != nil {
		t.Fatal(err)
	}
	if missing != 1 {
		t.Errorf("missing = %d, want 1", missing)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "src/engine/runner.py")); err != nil || string(data) != runnerParent {
		t.Errorf("runner.py not written whole: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "docs/notes.md")); err == nil {
		t.Error("a file outside the package was written")
	}
}

// TestScoreEndToEnd builds capguard and scores three bugs of the synthetic
// mirror: one found, one whose fix is still flagged, one missed.
func TestScoreEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capguard")
	}
	mirrors, parent, fix, _ := mirror(t)
	bin := filepath.Join(t.TempDir(), "capguard")
	build := exec.Command("go", "build", "-o", bin, "github.com/cudagraph-capguard/capguard/cli/capguard")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	row := func(fn, rules string) string {
		return strings.Join([]string{"train", "acme+engine", parent, fix, "src/engine/runner.py", fn, rules, "src/engine", "synthetic"}, "\t")
	}
	bugsFile := filepath.Join(t.TempDir(), "bugs.tsv")
	write(t, bugsFile, row("Runner.step", "CG101")+"\n"+row("Runner.helper", "CG101")+"\n"+row("Runner.capture", "CG104")+"\n"+
		strings.Replace(row("Runner.step", "CG101"), "train", "val", 1)+"\n")
	var out, errb bytes.Buffer
	jsonFile := filepath.Join(t.TempDir(), "out.json")
	code := run([]string{"-mirrors", mirrors, "-capguard", bin, "-bugs", bugsFile, "-set", "train", "-json", jsonFile, "-timeout", "2m"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	t.Log("\n" + text)
	lines := strings.Split(text, "\n")
	want := []string{"FOUND (2 files missing)", "STILL-FLAGGED (2 files missing)", "MISSED (2 files missing)"} // lost.py, at the parent and at the fix
	for i, w := range want {
		if !strings.HasSuffix(lines[i+1], w) {
			t.Errorf("row %d: %q, want verdict %q", i+1, lines[i+1], w)
		}
	}
	if !strings.Contains(text, "train found 1/3 (33%), missed 1, still flagged at the fix 1, errors 0") {
		t.Errorf("train totals wrong:\n%s", text)
	}
	if strings.Contains(text, "\nval ") {
		t.Errorf("-set train scored a val bug:\n%s", text)
	}
	if _, err := os.Stat(jsonFile); err != nil {
		t.Error(err)
	}

	// A commit the mirror does not have is an error, not a miss.
	write(t, bugsFile, strings.Replace(row("Runner.step", "CG101"), parent, strings.Repeat("0", 40), 1)+"\n")
	out.Reset()
	if code := run([]string{"-mirrors", mirrors, "-capguard", bin, "-bugs", bugsFile, "-timeout", "2m"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "errors 1") {
		t.Errorf("an unknown commit was not an error:\n%s", out.String())
	}
}
