package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/cli/internal/report"
	"github.com/cudagraph-capguard/capguard/guard/testenv"
	"github.com/cudagraph-capguard/capguard/templates"
)

// A one-finding project: a host sync in a captured function.
const syncStep = "import torch\n\ndef step(g, x):\n    with torch.cuda.graph(g):\n        y = x.item()\n"

// Every usage error is one line (printed by main on stderr), nothing on
// stdout or from urfave/cli, exit 2, with a suggestion where one is close.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no command given"},
		{[]string{"chek", "."}, `unknown command "chek" (did you mean check?)`},
		{[]string{"--bogus"}, "unknown flag --bogus (see capguard --help)"},
		{[]string{"check", "--exit-zer", "."}, "unknown flag --exit-zer (did you mean --exit-zero?)"},
		{[]string{"fix", "--wirte", "."}, "unknown flag --wirte (did you mean --write?)"},
		{[]string{"check", "--output-format", "jsn", "."}, `unknown --output-format "jsn" (did you mean json?)`},
		{[]string{"check", "--format", "sarf", "."}, `(did you mean sarif?)`},
		{[]string{"check", "--select", "CG3O1", "."}, "unknown rule code CG3O1 (did you mean CG301?)"},
		{[]string{"check", "--preset", "sglan", "."}, `unknown preset "sglan" (did you mean sglang?)`},
		{[]string{"check", "--color", "allways", "."}, `unknown --color "allways" (did you mean always?)`},
		{[]string{"rule", "CG3O1"}, `no rule "CG3O1" (did you mean CG301?)`},
		{[]string{"check", "--stdin-filename", "x.py", "."}, "--stdin-filename names standard input"},
		{[]string{"check", "-", "."}, "cannot be mixed"},
		{[]string{"fix", "--write", "--diff", "."}, "give --diff or --write, not both"},
		{[]string{"helper", "pkg/buffers.py"}, "did you mean capguard helper --write pkg/buffers.py?"},
		{[]string{"check", "--entry-point", "nocolon", "."}, `must be "module:Qual.name"`},
	} {
		stdout, stderr, code, msg := runApp(t, c.args...)
		if code != 2 || stdout != "" || stderr != "" || strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
			t.Errorf("capguard %s: exit %d, stdout %q, stderr %q, message %q; want exit 2, one line with %q",
				strings.Join(c.args, " "), code, stdout, stderr, msg, c.want)
		}
	}
}

func TestVersion(t *testing.T) {
	stdout, _, code, _ := runApp(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "capguard "+version) {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201085807-4da560313e59+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "4da560313e59f063c42c9709d03a8ca22490da52"},
			{Key: "vcs.time", Value: "2026-12-01T08:58:07Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionOf(bi), version+" (rev 4da560313e59-modified, 2026-12-01T08:58:07Z, go1.26.8)"; got != want {
		t.Errorf("versionOf = %q, want %q", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}
	if got := versionOf(bi); got != "1.2.3 (no VCS revision recorded, go1.26.8)" {
		t.Errorf("a tagged install: %q", got)
	}
}

func TestCheckDefaultsToDot(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "step.py"), []byte(syncStep), 0o644)
	t.Chdir(dir)
	stdout, _, code, _ := runApp(t, "check", "--output-format", "concise")
	if code != 1 || !strings.HasPrefix(stdout, "step.py:5:13: CG101 ") {
		t.Errorf("check with no path: exit %d\n%s", code, stdout)
	}
}

// Flags may follow the paths, as in ruff.
func TestFlagsAfterPaths(t *testing.T) {
	stdout, _, code, _ := runApp(t, "check", "../../testdata/readers", "--select", "CG1", "--output-format=concise")
	if code != 0 || !strings.Contains(stdout, "No capture hazards in 1 file checked.") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

func runStdin(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	app := newApp()
	var out, errb strings.Builder
	app.Writer, app.ErrWriter, app.Reader = &out, &errb, strings.NewReader(stdin)
	code, msg := exitStatus(runArgs(app, append([]string{"capguard"}, args...)))
	if msg != "" {
		errb.WriteString(msg)
	}
	return out.String(), errb.String(), code
}

func TestStdin(t *testing.T) {
	dir := t.TempDir()
	// The config beside --stdin-filename applies to it.
	os.WriteFile(filepath.Join(dir, "capguard.toml"), []byte("ignore = [\"CG302\"]\n"), 0o644)
	name := filepath.Join(dir, "serving", "step.py") // need not exist
	stdout, _, code := runStdin(t, syncStep, "check", "--output-format", "concise", "--stdin-filename", name, "-")
	if code != 1 || !strings.HasPrefix(stdout, name+":5:13: CG101 ") {
		t.Errorf("check -: exit %d\n%s", code, stdout)
	}
	stdout, _, code = runStdin(t, syncStep, "check", "--output-format", "concise", "-")
	if code != 1 || !strings.HasPrefix(stdout, "-:5:13: CG101 ") {
		t.Errorf("check - without a name: exit %d\n%s", code, stdout)
	}
	// --stdin-filename alone reads standard input too.
	if _, _, code = runStdin(t, "x = 1\n", "check", "--stdin-filename", name); code != 0 {
		t.Errorf("--stdin-filename without -: exit %d", code)
	}
	reader, err := os.ReadFile("../../testdata/readers/bf16_index_reader.py")
	if err != nil {
		t.Fatal(err)
	}
	// fix - prints the fixed source; --diff the diff. (In a folder of its
	// own: here reader.py would be analysed with this repository's every
	// fixture, its project.)
	t.Chdir(t.TempDir())
	stdout, stderr, code := runStdin(t, string(reader), "fix", "--stdin-filename", "reader.py", "-")
	if code != 0 || !strings.Contains(stdout, "persistent_buffer(") || !strings.Contains(stderr, "Would fix 3 findings in 1 file") {
		t.Errorf("fix -: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	fixed := filepath.Join(t.TempDir(), "fixed.py")
	os.WriteFile(fixed, []byte(stdout), 0o644)
	if err := testenv.PyCompile(t, fixed); err != nil {
		t.Errorf("fix - printed source that does not compile: %v", err)
	}
	stdout, _, code = runStdin(t, string(reader), "fix", "--diff", "--stdin-filename", "reader.py", "-")
	if code != 1 || !strings.HasPrefix(stdout, "--- a/reader.py\n+++ b/reader.py\n") {
		t.Errorf("fix --diff -: exit %d\n%s", code, stdout)
	}
	// Nothing to fix: the source comes back as it was.
	if stdout, _, code = runStdin(t, "x = 1\n", "fix", "-"); code != 0 || stdout != "x = 1\n" {
		t.Errorf("fix - of clean source: exit %d, %q", code, stdout)
	}
}

func TestNoPythonFileWarning(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	for _, args := range [][]string{{"check", dir}, {"fix", dir}} {
		_, stderr, code, _ := runApp(t, args...)
		if code != 0 || !strings.Contains(stderr, "warning: no Python file found in "+dir) {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, stderr)
		}
	}
	stdout, stderr, _, _ := runApp(t, "check", "--output-format", "json", dir)
	var doc struct{ Warnings []string }
	json.Unmarshal([]byte(stdout), &doc)
	if len(doc.Warnings) != 1 || !strings.Contains(stderr, "warning: no Python file found") {
		t.Errorf("json warnings %q, stderr %q", doc.Warnings, stderr)
	}
}

var fixableRE = regexp.MustCompile(`\[\*\] (\d+) fixable with ` + "`capguard fix`")
var hiddenRE = regexp.MustCompile(`(\d+) hidden fix(es)? can be enabled with ` + "`--unsafe-fixes`")

// check's "N fixable" is fix's "Would fix N", and the hidden unsafe fixes
// fix reports are those check reports on the fixed tree (a fix can lead
// to a new finding: CG201's prefix copy_ is then CG203's stale padding).
func TestCheckAndFixCountsAgree(t *testing.T) {
	count := func(re *regexp.Regexp, s string) string {
		if g := re.FindStringSubmatch(s); g != nil {
			return g[1]
		}
		return "0"
	}
	sawHidden := false
	for _, p := range []string{"readers", "sglang_like", "graphed", "clauses", "suppress"} {
		dir := filepath.Join(t.TempDir(), p)
		if err := os.CopyFS(dir, os.DirFS("../../testdata/"+p)); err != nil {
			t.Fatal(err)
		}
		checkOut, _, _, _ := runApp(t, "check", "--no-cache", dir)
		_, fixErr, _, _ := runApp(t, "fix", dir)
		n := count(fixableRE, checkOut)
		wantFix := "Would fix " + n + " finding"
		if n == "0" {
			wantFix = "No fixes to apply"
		}
		if !strings.Contains(fixErr, wantFix) {
			t.Errorf("%s: check says %s fixable, fix says:\n%s", p, n, fixErr)
		}
		if marks := strings.Count(checkOut, " [*] "); fmt.Sprint(marks) != n {
			t.Errorf("%s: %d findings marked [*], %s fixable", p, marks, n)
		}
		_, wrote, _, _ := runApp(t, "fix", "--write", dir)
		after, _, _, _ := runApp(t, "check", "--no-cache", dir)
		if m, fm := count(hiddenRE, after), count(hiddenRE, wrote); m != fm {
			t.Errorf("%s: fix --write says %s hidden fixes remain, check of the fixed tree %s\n%s\n%s", p, fm, m, wrote, after)
		} else if m != "0" {
			sawHidden = true
		}
	}
	if !sawHidden {
		t.Error("no fixture has a hidden unsafe fix: the test checks less than it says")
	}
}

func TestColor(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "step.py"), []byte(syncStep), 0o644)
	if out, _, _, _ := runApp(t, "check", "--color", "always", dir); !strings.Contains(out, "\033[") {
		t.Error("--color always: no colour")
	}
	if out, _, _, _ := runApp(t, "check", "--color", "never", dir); strings.Contains(out, "\033[") {
		t.Error("--color never: colour")
	}
	t.Setenv("FORCE_COLOR", "1")
	if out, _, _, _ := runApp(t, "check", dir); !strings.Contains(out, "\033[") {
		t.Error("FORCE_COLOR: no colour")
	}
	t.Setenv("NO_COLOR", "1")
	if out, _, _, _ := runApp(t, "check", dir); strings.Contains(out, "\033[") {
		t.Error("NO_COLOR: colour")
	}
	if out, _, _, _ := runApp(t, "check", "--color", "always", dir); !strings.Contains(out, "\033[") {
		t.Error("--color always overrides NO_COLOR")
	}
}

func TestStatisticsAndQuiet(t *testing.T) {
	out, _, code, _ := runApp(t, "check", "--statistics", "../../testdata/sglang_like")
	if code != 1 || !strings.HasPrefix(out, "    4  CG104      data-dependent-shape             captured 4\n") ||
		!strings.Contains(out, "  CG201      rebind-instead-of-copy") || !strings.Contains(out, "Found 8 findings") || strings.Contains(out, "^^^") {
		t.Errorf("--statistics: exit %d\n%s", code, out)
	}
	out, _, _, _ = runApp(t, "check", "--statistics", "--output-format", "json", "../../testdata/sglang_like")
	var stats []struct {
		Code     string
		Count    int
		Contexts map[string]int
	}
	if err := json.Unmarshal([]byte(out), &stats); err != nil || len(stats) != 5 || stats[0].Code != "CG104" || stats[0].Contexts["captured"] != 4 {
		t.Errorf("--statistics json: %v %+v", err, stats)
	}
	out, _, _, _ = runApp(t, "check", "--quiet", "--output-format", "concise", "../../testdata/sglang_like")
	if strings.Contains(out, "Found") || strings.Count(out, "\n") != 8 {
		t.Errorf("--quiet:\n%s", out)
	}
	// --show-fixes shows the edit under the finding.
	out, _, _, _ = runApp(t, "check", "--show-fixes", "../../testdata/readers")
	if !strings.Contains(out, "\n     -     q_bf16 = q[:, 0].contiguous()  # want: CG301\n     +     q_bf16 = persistent_buffer(\"bf16_index_reader.bf16_index_logits.q_bf16\", q[:, 0])") {
		t.Errorf("--show-fixes:\n%s", out)
	}
}

// Every format parses as what it claims to be.
func TestFormats(t *testing.T) {
	dir := "../../testdata/sglang_like"
	out, _, _, _ := runApp(t, "check", "--output-format", "json-lines", dir)
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		var f struct{ Rule, URL, Resolution string }
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil || f.URL == "" || f.Resolution == "" {
			t.Errorf("json-lines line %d: %v %s", n, err, sc.Text())
		}
		n++
	}
	if n != 8 {
		t.Errorf("json-lines: %d lines, want 8", n)
	}
	out, _, _, _ = runApp(t, "check", "--output-format", "gitlab", dir)
	var issues []struct {
		CheckName   string `json:"check_name"`
		Fingerprint string
		Location    struct{ Path string }
	}
	if err := json.Unmarshal([]byte(out), &issues); err != nil || len(issues) != 8 || !strings.HasPrefix(issues[0].Location.Path, "testdata/sglang_like/") {
		t.Errorf("gitlab: %v %+v", err, issues)
	}
	// SARIF: an absolute input path gives a URI relative to the repository.
	abs, _ := filepath.Abs(dir)
	out, _, _, _ = runApp(t, "check", "--output-format", "sarif", abs)
	if !strings.Contains(out, `"uri": "testdata/sglang_like/srt/`) || strings.Contains(out, `"uri": "/`) {
		t.Errorf("sarif URIs not relative to the repository:\n%.2000s", out)
	}
}

func TestFixWriteExit(t *testing.T) {
	reader, _ := os.ReadFile("../../testdata/readers/bf16_index_reader.py")
	dir := t.TempDir()
	p := filepath.Join(dir, "reader.py")
	// Everything fixable: 0 after writing, 1 with --exit-non-zero-on-fix.
	os.WriteFile(p, reader, 0o644)
	if _, stderr, code, _ := runApp(t, "fix", "--write", p); code != 0 {
		t.Errorf("--write, nothing left: exit %d\n%s", code, stderr)
	}
	os.WriteFile(p, reader, 0o644)
	if _, _, code, _ := runApp(t, "fix", "--write", "--exit-non-zero-on-fix", p); code != 1 {
		t.Errorf("--exit-non-zero-on-fix: exit %d, want 1", code)
	}
	// A finding without a fix remains: 1, as ruff check --fix.
	os.WriteFile(p, append(reader, []byte("\n\ndef step(g, x):\n    with torch.cuda.graph(g):\n        y = x.item()\n")...), 0o644)
	_, stderr, code, _ := runApp(t, "fix", "--write", p)
	if code != 1 || !strings.Contains(stderr, "Fixed 3 findings in 1 file; 1 remaining.") {
		t.Errorf("--write with a finding left: exit %d\n%s", code, stderr)
	}
	if got, _ := os.ReadFile(p); !strings.Contains(string(got), "persistent_buffer(") {
		t.Error("the fixes were not written")
	}
	// --diff only prints.
	os.WriteFile(p, reader, 0o644)
	if stdout, _, code, _ := runApp(t, "fix", "--diff", p); code != 1 || !strings.HasPrefix(stdout, "--- a/") {
		t.Errorf("--diff: exit %d", code)
	}
	if got, _ := os.ReadFile(p); string(got) != string(reader) {
		t.Error("--diff wrote the file")
	}
}

// A syntax error exits 1 in check and in fix, with or without --write;
// so does a file that cannot be decoded; Python 2 source is a syntax error.
func TestSyntaxAndDecodeExitAlike(t *testing.T) {
	for name, src := range map[string]string{
		"syntax.py": syncStep + "def broken(:\n",
		"py2.py":    syncStep + "print \"x\"\n",
		"latin.py":  syncStep + "s = 'caf\xe9'\n",
		"nul.py":    "x = 1\x00\n",
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(src), 0o644)
		for _, args := range [][]string{{"check", "--no-cache", p}, {"check", "--exit-zero", p}, {"fix", p}, {"fix", "--write", p}} {
			want := 1
			if args[1] == "--exit-zero" {
				want = 0
			}
			_, stderr, code, _ := runApp(t, args...)
			if code != want || !strings.Contains(stderr, name+": error: ") {
				t.Errorf("%s %s: exit %d, want %d\n%s", strings.Join(args[:len(args)-1], " "), name, code, want, stderr)
			}
		}
		if got, _ := os.ReadFile(p); string(got) != src {
			t.Errorf("fix --write changed %s", name)
		}
	}
	// A missing path is still a failure of the run: 2.
	if _, _, code, _ := runApp(t, "check", "no/such.py"); code != 2 {
		t.Errorf("missing path: exit %d", code)
	}
}

func TestHelperCommand(t *testing.T) {
	stdout, _, code, _ := runApp(t, "helper")
	if code != 0 || stdout != templates.PersistentBuffer {
		t.Fatalf("helper: exit %d", code)
	}
	reader, err := os.ReadFile("../../testdata/readers/bf16_index_reader.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("pkg", 0o755)
	os.WriteFile("pkg/__init__.py", nil, 0o644)
	_, stderr, code, _ := runApp(t, "helper", "--write", "pkg/buffers.py")
	if code != 0 || !strings.Contains(stderr, `set helper-module = "pkg.buffers"`) {
		t.Fatalf("helper --write: exit %d\n%s", code, stderr)
	}
	if got, _ := os.ReadFile("pkg/buffers.py"); string(got) != templates.PersistentBuffer {
		t.Fatal("the module written is not the helper")
	}
	if err := testenv.PyCompile(t, "pkg/buffers.py"); err != nil {
		t.Fatal(err)
	}
	// Again: nothing to do. Over another file: refused unless --force.
	if _, _, code, _ := runApp(t, "helper", "--write", "pkg/buffers.py"); code != 0 {
		t.Errorf("again: exit %d", code)
	}
	os.WriteFile("pkg/other.py", []byte("x = 1\n"), 0o644)
	if _, _, code, _ := runApp(t, "helper", "--write", "pkg/other.py"); code != 2 {
		t.Errorf("over another file: exit %d, want 2", code)
	}
	if got, _ := os.ReadFile("pkg/other.py"); string(got) != "x = 1\n" {
		t.Error("the other file was replaced")
	}
	if _, _, code, _ := runApp(t, "helper", "--write", "pkg/other.py", "--force"); code != 0 {
		t.Errorf("--force: exit %d", code)
	}
	// The module the fixer imports when helper-module points at it.
	os.WriteFile("pkg/reader.py", reader, 0o644)
	os.WriteFile("pyproject.toml", []byte("[tool.capguard]\nhelper-module = \"pkg.buffers\"\n"), 0o644)
	if _, stderr, code, _ := runApp(t, "fix", "--write", "pkg/reader.py"); code != 0 {
		t.Fatalf("fix with helper-module: exit %d\n%s", code, stderr)
	}
	got, _ := os.ReadFile("pkg/reader.py")
	if !strings.Contains(string(got), "from pkg.buffers import persistent_buffer\n") || strings.Contains(string(got), "_PERSISTENT_BUFFERS") {
		t.Errorf("the fixed file does not import the module:\n%s", got)
	}
}

// check's second run on an unchanged tree comes from the cache and prints
// the same; an edit shows.
func TestCheckCache(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "step.py"), []byte(syncStep), 0o644)
	cacheDir := t.TempDir()
	first, _, _, _ := runApp(t, "check", "--cache-dir", cacheDir, "--output-format", "json", dir)
	second, _, _, _ := runApp(t, "check", "--cache-dir", cacheDir, "--output-format", "json", dir)
	if first != second || !strings.Contains(first, `"rule": "CG101"`) {
		t.Errorf("cached run differs:\n%s\n%s", first, second)
	}
	full1, _, _, _ := runApp(t, "check", "--cache-dir", cacheDir, dir)
	full2, _, _, _ := runApp(t, "check", "--cache-dir", cacheDir, dir)
	if full1 != full2 || !strings.Contains(full2, "5 |         y = x.item()") {
		t.Errorf("cached full output differs (the source line comes from disk):\n%s\n%s", full1, full2)
	}
	entries, _ := filepath.Glob(filepath.Join(cacheDir, "*", "*.json"))
	if len(entries) == 0 {
		t.Error("nothing cached")
	}
	os.WriteFile(filepath.Join(dir, "step.py"), []byte(strings.Replace(syncStep, "x.item()", "x + 1", 1)), 0o644)
	if _, _, code, _ := runApp(t, "check", "--cache-dir", cacheDir, dir); code != 0 {
		t.Errorf("after the fix: exit %d (stale cache?)", code)
	}
	// --no-cache writes nothing.
	empty := t.TempDir()
	runApp(t, "check", "--no-cache", "--cache-dir", empty, dir)
	if e, _ := os.ReadDir(empty); len(e) != 0 {
		t.Errorf("--no-cache wrote %v", e)
	}
}

// docs/rules is what `capguard rule --all --output-format markdown --out
// docs/rules` makes of the rules now; a rule's doc change needs the
// command run again.
func TestRulePagesUpToDate(t *testing.T) {
	const dir = "../../docs/rules"
	want := rulePages()
	for name, body := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != body {
			t.Errorf("docs/rules/%s is out of date (%v): run go run ./cli/capguard rule --all --output-format markdown --out docs/rules", name, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, f := range files {
		if _, ok := want[filepath.Base(f)]; !ok {
			t.Errorf("docs/rules/%s names no rule: run the command above (it removes such pages)", filepath.Base(f))
		}
	}
	// Every page is where the outputs link to.
	for _, r := range []string{"CG101", "CG301"} {
		if _, ok := want[r+".md"]; !ok || !strings.HasSuffix(report.RuleURL(r), "/docs/rules/"+r+".md") {
			t.Errorf("%s: page or URL missing", r)
		}
	}
	// The command writes the same pages, and removes a stale one.
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "CG999.md"), []byte("old\n"+generatedMark+"\n"), 0o644)
	if _, stderr, code, _ := runApp(t, "rule", "--all", "--output-format", "markdown", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for name, body := range want {
		if got, _ := os.ReadFile(filepath.Join(out, name)); string(got) != body {
			t.Errorf("--out wrote a different %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "CG999.md")); err == nil {
		t.Error("a stale generated page was kept")
	}
	md, _, _, _ := runApp(t, "rule", "CG301", "--output-format", "markdown")
	if md != want["CG301.md"] {
		t.Error("rule CG301 --output-format markdown is not its page")
	}
}

// A typo'd entry point is a warning on stderr in every format (and under
// "warnings" in JSON): never silent.
func TestEntryPointTypoWarns(t *testing.T) {
	const ep = "bf16_index_reaer:bf16_index_logits"
	for _, format := range []string{"full", "concise", "json", "json-lines", "sarif", "github", "gitlab"} {
		stdout, stderr, _, _ := runApp(t, "check", "--no-cache", "--output-format", format, "--entry-point", ep, "../../testdata/readers")
		if !strings.Contains(stderr, "warning: entry point \""+ep+"\" matches no function") {
			t.Errorf("%s: stderr lacks the warning:\n%s", format, stderr)
		}
		if format == "json" {
			var doc struct{ Warnings []string }
			json.Unmarshal([]byte(stdout), &doc)
			if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], ep) {
				t.Errorf("json warnings %q", doc.Warnings)
			}
		}
	}
}
