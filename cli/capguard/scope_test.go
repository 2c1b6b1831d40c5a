package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fixtureProjects are the folders of testdata that are one project each.
func fixtureProjects(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"../../testdata/flow/*", "../../testdata/fix/flow/*", "../../testdata/sglang_like",
		"../../testdata/graphed", "../../testdata/negatives", "../../testdata/readers", "../../testdata/suppress",
		"../../testdata/clauses"} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				out = append(out, p)
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d fixture projects found", len(out))
	}
	return out
}

// copyProject copies a fixture project into a fresh git-like folder (a
// .git marks its root) and returns the folder.
func copyProject(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// findingsByFile runs check with JSON output and returns each file's
// findings, each one JSON line.
func findingsByFile(t *testing.T, stdin *string, args ...string) map[string][]string {
	t.Helper()
	var out string
	if stdin != nil {
		out, _, _ = runStdin(t, *stdin, append([]string{"check", "--no-cache", "--output-format", "json"}, args...)...)
	} else {
		out, _, _, _ = runApp(t, append([]string{"check", "--no-cache", "--output-format", "json"}, args...)...)
	}
	var doc struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("check %v: %v\n%s", args, err, out)
	}
	got := map[string][]string{}
	for _, f := range doc.Findings {
		b, _ := json.Marshal(f)
		p, _ := f["path"].(string)
		got[filepath.Clean(p)] = append(got[filepath.Clean(p)], string(b))
	}
	for _, v := range got {
		sort.Strings(v)
	}
	return got
}

// A file named alone, or read from standard input under its name, is
// analysed with its whole project: its findings are those of a run over
// the project's folder, on every fixture project.
func TestFileRunHasProjectContext(t *testing.T) {
	cross := 0
	for _, src := range fixtureProjects(t) {
		dir := copyProject(t, src)
		t.Run(strings.TrimPrefix(src, "../../testdata/"), func(t *testing.T) {
			t.Chdir(dir)
			whole := findingsByFile(t, nil, ".")
			var files []string
			filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") {
					files = append(files, p)
				}
				return nil
			})
			for _, f := range files {
				want := strings.Join(whole[f], "\n")
				alone := findingsByFile(t, nil, f)
				if got := strings.Join(alone[f], "\n"); got != want {
					t.Errorf("check %s:\n%s\nwant (check .):\n%s", f, got, want)
				}
				for p := range alone {
					if p != f {
						t.Errorf("check %s reports on %s", f, p)
					}
				}
				src, _ := os.ReadFile(f)
				s := string(src)
				if got := strings.Join(findingsByFile(t, &s, "--stdin-filename", f, "-")[f], "\n"); got != want {
					t.Errorf("check --stdin-filename %s -:\n%s\nwant (check .):\n%s", f, got, want)
				}
				if want != "" && !strings.Contains(s, "torch.cuda.graph(") && !strings.Contains(s, "CUDAGraph") {
					cross++
				}
			}
		})
	}
	if cross == 0 {
		t.Error("no fixture file has findings from a capture in another file: the test proves nothing")
	}
}

// The sampler of one module runs under a capture started in another.
func TestFileRunCrossModule(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	os.MkdirAll(filepath.Join(dir, "eng"), 0o755)
	os.WriteFile(filepath.Join(dir, "eng", "__init__.py"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "eng", "sampler.py"), []byte("def sample(logits):\n    return logits.argmax(-1).item()\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "eng", "runner.py"), []byte(`import torch

from eng.sampler import sample


class Runner:
    def capture(self, model, x):
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.tok = sample(model(x))
`), 0o644)
	t.Chdir(filepath.Join(dir, "eng"))
	for _, args := range [][]string{{"sampler.py"}, {"--stdin-filename", "sampler.py", "-"}} {
		src := "def sample(logits):\n    return logits.argmax(-1).item()\n"
		stdout, _, code := runStdin(t, src, append([]string{"check", "--no-cache", "--output-format", "concise"}, args...)...)
		if code != 1 || !strings.HasPrefix(stdout, "sampler.py:2:") || !strings.Contains(stdout, "CG101") || strings.Contains(stdout, "runner.py") {
			t.Errorf("check %v: exit %d\n%s", args, code, stdout)
		}
	}
	// fix too: the file's own fix, nothing written elsewhere.
	stdout, _, _ := runStdin(t, "", "fix", "--no-progress", "--unsafe-fixes", "sampler.py")
	if strings.Contains(stdout, "runner.py") {
		t.Errorf("fix sampler.py touches runner.py:\n%s", stdout)
	}
}

// diffsByFile splits a unified diff into each file's part.
func diffsByFile(diff string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(diff, "--- a/")[1:] {
		name, _, _ := strings.Cut(part, "\n")
		out[filepath.Clean(strings.TrimSpace(name))] = "--- a/" + part
	}
	return out
}

// fix FILE fixes what fix of the whole project fixes in that file: the
// fixture projects whose fixes are there (unsafe ones included) only
// because of another module's capture or replay.
func TestFixFileHasProjectContext(t *testing.T) {
	// A replay prepared in one module by a function of another: the
	// rebind's fix exists only with the replay in view.
	crossDir := t.TempDir()
	for name, src := range map[string]string{
		"eng/__init__.py": "",
		"eng/prep.py":     "import torch\n\n\ndef refresh(state, batch):\n    state.positions.copy_(batch.positions)\n    state.seq_lens = batch.seq_lens.to(torch.int32)\n",
		"eng/serve.py": `import torch

from eng.prep import refresh


class DecodeState:
    pass


def make_state(max_bs):
    state = DecodeState()
    state.positions = torch.zeros(max_bs, dtype=torch.int64, device="cuda")
    state.seq_lens = torch.ones(max_bs, dtype=torch.int32, device="cuda")
    return state


def step(state):
    return state.positions + state.seq_lens


def serve(batches, max_bs):
    state = make_state(max_bs)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step(state)
    for batch in batches:
        refresh(state, batch)
        g.replay()
        yield out
`,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(crossDir, name)), 0o755)
		os.WriteFile(filepath.Join(crossDir, name), []byte(src), 0o644)
	}
	cross := 0
	for _, src := range []string{crossDir, "../../testdata/flow/conventions", "../../testdata/flow/postcapture", "../../testdata/flow/replayprep",
		"../../testdata/sglang_like", "../../testdata/readers"} {
		dir := copyProject(t, src)
		t.Run(filepath.Base(src), func(t *testing.T) {
			t.Chdir(dir)
			out, _, _, _ := runApp(t, "fix", "--unsafe-fixes", "--no-progress", ".")
			whole := diffsByFile(out)
			for _, f := range pyFiles(t, ".") {
				got, _, _, _ := runApp(t, "fix", "--unsafe-fixes", "--no-progress", f)
				parts := diffsByFile(got)
				if parts[f] != whole[f] {
					t.Errorf("fix %s:\n%s\nwant (fix .):\n%s", f, parts[f], whole[f])
				}
				if len(parts) > 1 || len(parts) == 1 && parts[f] == "" {
					t.Errorf("fix %s touches other files: %v", f, got)
				}
				if whole[f] != "" && src == crossDir {
					cross++
				}
			}
		})
	}
	if cross != 1 {
		t.Errorf("%d files of the cross-module project have fixes, want 1 (eng/prep.py)", cross)
	}
}

// TestFileRunServedFromProject: after `check .`, a check of one of the
// project's files (named, or standard input that is the file on disk)
// takes the project run's stored result, and prints what --no-cache
// prints, byte for byte (findings, errors, settings), on every file of
// every fixture project (through standard input, two files a project);
// so do the file spelled ./F and absolute (the project run's spelling is
// changed to the user's: respell), one file a project, and run from the
// file's own folder (a working directory of its own: the second run is
// the hit).
func TestFileRunServedFromProject(t *testing.T) {
	served := 0
	for _, src := range fixtureProjects(t) {
		dir := copyProject(t, src)
		t.Run(strings.TrimPrefix(src, "../../testdata/"), func(t *testing.T) {
			cacheDir := t.TempDir()
			run := func(wd string, stdin *string, args ...string) (string, string) {
				t.Helper()
				return cachedRun(t, wd, cacheDir, stdin, append([]string{"check", "--output-format", "json"}, args...)...)
			}
			// expect runs check (in wd) --no-cache, then through the cache:
			// equal outputs, and a hit on the hits-th run.
			expect := func(wd string, stdin *string, hits int, args ...string) {
				t.Helper()
				var want string
				if wd == dir && stdin == nil {
					// In this process (no process to start: 260 files).
					want, _, _, _ = runApp(t, append([]string{"check", "--output-format", "json", "--no-cache"}, args...)...)
				} else {
					want, _ = run(wd, stdin, append([]string{"--no-cache"}, args...)...)
				}
				for i := 1; i <= hits; i++ {
					got, stderr := run(wd, stdin, args...)
					if got != want {
						t.Errorf("check %v in %s (run %d):\n%s\nwant (--no-cache):\n%s", args, wd, i, got, want)
					}
					if hit := strings.Contains(stderr, "capguard: cache hit"); i == hits && !hit {
						t.Errorf("check %v in %s: no cache hit on run %d:\n%s", args, wd, i, stderr)
					} else if i == hits {
						served++
					}
				}
			}
			t.Chdir(dir)
			run(dir, nil, ".")
			var files []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") {
					rel, _ := filepath.Rel(dir, p)
					files = append(files, rel)
				}
				return nil
			})
			for i, f := range files {
				expect(dir, nil, 1, f)
				if i >= 2 {
					continue // standard input and other spellings: two files a project
				}
				text, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				s := string(text)
				expect(dir, &s, 1, "--stdin-filename", f, "-")
				if i == 0 {
					expect(dir, nil, 1, "."+string(filepath.Separator)+f)
					expect(dir, nil, 1, filepath.Join(dir, f))
				}
			}
			for _, f := range files {
				if d := filepath.Dir(f); d != "." {
					expect(filepath.Join(dir, d), nil, 2, filepath.Base(f))
					break // one file a project, from its own folder
				}
			}
		})
	}
	if served == 0 {
		t.Error("no file run was served: the test proves nothing")
	}
}

// TestFileRunServedEdges: the file runs the project run cannot stand for
// keep their own: a file the config excludes (the walk does not hold it).
// A file with a syntax error and a file the prefilter leaves unparsed in
// the project run (it holds no root token) are in its walk and are
// served. Each prints what --no-cache prints.
func TestFileRunServedEdges(t *testing.T) {
	dir := copyProject(t, samplerProject(t, map[string]string{
		"capguard.toml": "exclude = [\"gen/**\"]\n",
		"gen/made.py":   "import torch\n\n\ndef capture(g, x):\n    with torch.cuda.graph(g):\n        return x.sum().item()\n",
		"broken.py":     "def f(:\n    pass\n",
		"lone.py":       "def add(a, b):\n    return a + b\n",
	}))
	cacheDir := t.TempDir()
	run := func(args ...string) (string, string) {
		t.Helper()
		return cachedRun(t, dir, cacheDir, nil, append([]string{"check", "--output-format", "json"}, args...)...)
	}
	run(".")
	for _, c := range []struct {
		file   string
		served bool
		has    string // a text the output must hold
	}{
		{"gen/made.py", false, "CG101"},
		{"broken.py", true, "broken.py"},
		{"lone.py", true, ""},
		{"sampler.py", true, "CG101"},
	} {
		want, _ := run("--no-cache", c.file)
		got, stderr := run(c.file)
		if got != want {
			t.Errorf("check %s:\n%s\nwant (--no-cache):\n%s", c.file, got, want)
		}
		if !strings.Contains(want, c.has) {
			t.Errorf("check --no-cache %s: no %q in\n%s", c.file, c.has, want)
		}
		if hit := strings.Contains(stderr, "capguard: cache hit"); hit != c.served {
			t.Errorf("check %s after check .: served %v, want %v\n%s", c.file, hit, c.served, stderr)
		}
	}
}

// TestRespellText: a path is respelled where it stands whole, not inside a
// longer path, a longer name or code.
func TestRespellText(t *testing.T) {
	re := map[string]string{"a.py": "/w/a.py", "pkg/b.py": "./pkg/b.py"}
	for in, want := range map[string]string{
		"a.py:12: the capture region runs what its callers pass":    "/w/a.py:12: the capture region runs what its callers pass",
		"captures the callables its callers pass (`fn` at a.py:22)": "captures the callables its callers pass (`fn` at /w/a.py:22)",
		"import vllm in pkg/b.py":                                   "import vllm in ./pkg/b.py",
		"sub/a.py:3: another file":                                  "sub/a.py:3: another file",
		"data.py and a.pyc and `a.py` as code":                      "data.py and a.pyc and `a.py` as code",
		"see a.py, then pkg/b.py.":                                  "see /w/a.py, then ./pkg/b.py.",
		"":                                                          "",
	} {
		if got := respellText(in, re); got != want {
			t.Errorf("respellText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFileRunCacheUnwritable: a file run whose project run cannot be
// stored (the cache folder is a file) prints, spelled as the user named
// the file, what --no-cache prints, and warns that the result was not
// cached.
func TestFileRunCacheUnwritable(t *testing.T) {
	dir := copyProject(t, samplerProject(t, nil))
	notDir := filepath.Join(t.TempDir(), "cache")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, "sampler.py")
	// split returns the JSON output without its warnings, and them.
	split := func(out string) (string, string) {
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		w, _ := json.Marshal(doc["warnings"])
		delete(doc, "warnings")
		rest, _ := json.Marshal(doc)
		return string(rest), string(w)
	}
	wantOut, _ := cachedRun(t, dir, notDir, nil, "check", "--no-cache", "--output-format", "json", abs)
	gotOut, _ := cachedRun(t, dir, notDir, nil, "check", "--output-format", "json", abs)
	want, _ := split(wantOut)
	got, warnings := split(gotOut)
	if !strings.Contains(want, "CG101") || !strings.Contains(got, strings.ReplaceAll(abs, `\`, `\\`)) || got != want {
		t.Errorf("check %s:\n%s\nwant (--no-cache, with CG101):\n%s", abs, got, want)
	}
	if !strings.Contains(warnings, "results not cached") {
		t.Errorf("no warning that the results were not cached: %s", warnings)
	}
}

// TestFileRunNamedTwice: a file named twice, spelled two ways, is
// reported under the first spelling, as --no-cache reports it.
func TestFileRunNamedTwice(t *testing.T) {
	dir := copyProject(t, samplerProject(t, nil))
	cacheDir := t.TempDir()
	cachedRun(t, dir, cacheDir, nil, "check", ".")
	for _, args := range [][]string{{"./sampler.py", "sampler.py"}, {"sampler.py", "./sampler.py"}} {
		want, _ := cachedRun(t, dir, cacheDir, nil, append([]string{"check", "--no-cache", "--output-format", "json"}, args...)...)
		got, _ := cachedRun(t, dir, cacheDir, nil, append([]string{"check", "--output-format", "json"}, args...)...)
		if got != want || !strings.Contains(want, `"path": "`+args[0]+`"`) {
			t.Errorf("check %v:\n%s\nwant (--no-cache, the first spelling):\n%s", args, got, want)
		}
	}
}

// TestFileAndItsFolderCountedOnce: a file named beside the folder that
// holds it (check pkg/b.py pkg, in a repository whose root is above pkg,
// so that the file brings in its project and the report is scoped) is one
// of the files checked, not two.
func TestFileAndItsFolderCountedOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{"pkg/__init__.py": "", "pkg/a.py": "x = 1\n", "pkg/b.py": "y = 2\n"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, args := range [][]string{{"pkg"}, {"pkg/b.py", "pkg"}, {"pkg", "pkg/b.py"}} {
		out, _, _, _ := runApp(t, append([]string{"check", "--no-cache", "--output-format", "json"}, args...)...)
		var doc struct {
			Files int `json:"files"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("check %v: %v\n%s", args, err, out)
		}
		if doc.Files != 3 {
			t.Errorf("check %v: %d files checked, want 3\n%s", args, doc.Files, out)
		}
	}
}
