package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/cudagraph-capguard/capguard/guard"
)

func TestTextPath(t *testing.T) {
	for in, want := range map[string]string{
		"pkg/step.py":         "pkg/step.py",
		"sp ace/ünï code.py":  "sp ace/ünï code.py",
		"new\nline.py":        `"new\nline.py"`,
		"bad\xffname.py":      `"bad\xffname.py"`,
		"tab\there.py:Runner": `"tab\there.py:Runner"`,
	} {
		if got := TextPath(in); got != want {
			t.Errorf("TextPath(%q) = %s, want %s", in, got, want)
		}
	}
}

// synthetic is a result with one safe, one unsafe and one display-only fix
// and one finding without a fix, over two files of three checked.
func synthetic(t *testing.T) (*guard.Result, string) {
	t.Helper()
	dir := t.TempDir()
	a := filepath.Join(dir, "pkg", "a.py")
	os.MkdirAll(filepath.Dir(a), 0o755)
	src := "import torch\n\ndef f(g, x, café):\n    with torch.cuda.graph(g):\n        é = 1; y = x.item()\n"
	os.WriteFile(a, []byte(src), 0o644)
	off := strings.Index(src, "x.item()")
	rule := guard.LookupRule("CG101")
	mk := func(path string, fix *guard.Fix, sev guard.Severity) *guard.Diagnostic {
		return &guard.Diagnostic{Rule: rule, Path: path, Severity: sev, Message: "`x.item()` synchronizes in captured code",
			Start:   guard.Pos{Line: 5, Column: off - strings.LastIndex(src[:off], "\n"), Offset: off},
			End:     guard.Pos{Line: 5, Column: off - strings.LastIndex(src[:off], "\n") + 8, Offset: off + 8},
			Context: guard.Captured, Function: "f",
			Chain:      []string{filepath.Join(dir, "pkg", "runner.py") + ":Runner.capture", a + ":f"},
			Resolution: guard.ByName, Fix: fix}
	}
	res := &guard.Result{Files: 3, Diagnostics: []*guard.Diagnostic{
		mk(a, &guard.Fix{Message: "keep it on the device", Applicability: guard.Safe, Edits: []guard.TextEdit{{Start: off, End: off + 8, NewText: "x"}}}, guard.SeverityError),
		mk(a, &guard.Fix{Message: "an unsafe one", Applicability: guard.Unsafe}, guard.SeverityError),
		mk(a, &guard.Fix{Message: "only shown", Applicability: guard.DisplayOnly}, guard.SeverityWarning),
		mk(filepath.Join(dir, "pkg", "b.py"), nil, guard.SeverityWarning),
	}, Warnings: []string{"entry point \"pkg.runner:Runner.decode\" matches no function"}}
	return res, dir
}

func TestSummaryCounts(t *testing.T) {
	res, _ := synthetic(t)
	var b strings.Builder
	Summary(&b, res, Options{})
	want := "Found 4 findings in 2 files (3 files checked).\n[*] 1 fixable with `capguard fix` (1 hidden fix can be enabled with `--unsafe-fixes`).\n"
	if b.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	Summary(&b, res, Options{UnsafeFixes: true})
	if want := "[*] 2 fixable with `capguard fix --unsafe-fixes`.\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("--unsafe-fixes summary:\n%s", b.String())
	}
	for _, c := range []struct {
		res  *guard.Result
		want string
	}{
		{&guard.Result{Files: 1}, "No capture hazards in 1 file checked.\n"},
		{&guard.Result{Files: 2, Errors: []guard.FileError{{Path: "p.py", Message: "binary file"}}}, "No capture hazards in 2 files checked; 1 file error, on stderr.\n"},
	} {
		b.Reset()
		Summary(&b, c.res, Options{})
		if b.String() != c.want {
			t.Errorf("summary %q, want %q", b.String(), c.want)
		}
	}
}

// [*] marks only the fixes capguard fix applies.
func TestFixableMark(t *testing.T) {
	res, _ := synthetic(t)
	var b strings.Builder
	Concise(&b, res, Options{Quiet: true})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("concise: %d lines, want one per finding:\n%s", len(lines), b.String())
	}
	for i, want := range []bool{true, false, false, false} {
		if got := strings.Contains(lines[i], "CG101 [*] "); got != want {
			t.Errorf("line %d marked %v, want %v: %s", i, got, want, lines[i])
		}
	}
	b.Reset()
	Concise(&b, res, Options{Quiet: true, UnsafeFixes: true})
	if strings.Count(b.String(), "[*]") != 2 {
		t.Errorf("--unsafe-fixes marks %d, want 2:\n%s", strings.Count(b.String(), "[*]"), b.String())
	}
}

func TestFull(t *testing.T) {
	res, _ := synthetic(t)
	var b strings.Builder
	if err := Full(&b, res, Options{Width: 100, ShowFixes: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"5 |         é = 1; y = x.item()\n",
		"  |                    ^^^^^^^^ error: host-sync-in-capture\n", // the caret under x.item(), after a 2-byte é
		"= captured (through a call matched by method name only): runner.Runner.capture -> a.f\n",
		"= fix: keep it on the device\n",
		"-         é = 1; y = x.item()\n", "+         é = 1; y = x\n", // --show-fixes
		"= unsafe fix (--unsafe-fixes): an unsafe one\n",
		"= suggestion (not applied automatically): only shown\n",
		"= docs: " + DocsURL + "CG101.md\n",
		"Found 4 findings in 2 files (3 files checked).\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("full output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\033[") {
		t.Error("colour without Color")
	}
	b.Reset()
	Full(&b, res, Options{Color: true})
	if !strings.Contains(b.String(), "\033[1;31m") || !strings.Contains(b.String(), "\033]8;;"+DocsURL+"CG101.md") {
		t.Errorf("no colour or link with Color:\n%q", b.String())
	}
}

// Full output on the fixture projects: short chains, and no line over the
// width but a source line cut with an ellipsis.
func TestFullOnFixtures(t *testing.T) {
	t.Chdir("../../../testdata")
	res, err := guard.Run(guard.Options{Paths: []string{"sglang_like", "readers", "graphed"}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	Full(&b, res, Options{Width: 100})
	for _, l := range strings.Split(b.String(), "\n") {
		if n := len([]rune(l)); n > 100 {
			t.Errorf("%d columns: %s", n, l)
		}
		if strings.HasPrefix(strings.TrimSpace(l), "= captured") && strings.Contains(l, ".py:") {
			t.Errorf("chain with file paths: %s", l)
		}
	}
	if !regexp.MustCompile(`= captured( \([^)]*\))?:(\n +)? ?model_executor\.cuda_graph_runner\.CudaGraphRunner\.capture_one_batch_size\n`).MatchString(b.String()) {
		t.Errorf("short chain missing:\n%s", b.String())
	}
}

func TestShortChain(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"testdata/sglang_like/srt/model_executor/runner.py:Runner.capture", "testdata/sglang_like/srt/layers/model.py:Model.forward"},
			[]string{"model_executor.runner.Runner.capture", "layers.model.Model.forward"}},
		{[]string{"../../../testdata/readers/bf16_index_reader.py:bf16_index_logits"}, []string{"bf16_index_reader.bf16_index_logits"}},
		{[]string{"/abs/pkg/__init__.py:setup", "/abs/pkg/mod.py:f"}, []string{"pkg.setup", "pkg.mod.f"}},
		// The dotted names of call graph v2.
		{[]string{"srt.model_executor.runner.Runner.capture", "srt.layers.model.Model.forward"},
			[]string{"model_executor.runner.Runner.capture", "layers.model.Model.forward"}},
		{[]string{"srt.layers.model.Model.forward"}, []string{"Model.forward"}},
		{[]string{"mod.f", "mod.g"}, []string{"mod.f", "mod.g"}},
	} {
		got := ShortChain(c.in)
		if strings.Join(got, " | ") != strings.Join(c.want, " | ") {
			t.Errorf("ShortChain(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestJSONAndLines(t *testing.T) {
	res, _ := synthetic(t)
	res.Errors = []guard.FileError{{Path: "s.py", Message: "syntax error", Syntax: true}, {Path: "l.py", Message: "not valid UTF-8", Decode: true}, {Path: "m.py", Message: "no such file"}}
	var b bytes.Buffer
	if err := JSON(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc JSONDoc
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	f := doc.Findings[0]
	if !strings.Contains(b.String(), `"url": "`+DocsURL+`CG101.md"`) || f.Resolution != "name" || f.Fix == nil || len(f.Fix.Edits) != 1 ||
		f.Fix.Edits[0].From != (guard.Pos{Line: 5, Column: 21, Offset: f.Fix.Edits[0].Start}) ||
		f.Fix.Edits[0].To != (guard.Pos{Line: 5, Column: 29, Offset: f.Fix.Edits[0].End}) || f.Fix.Edits[0].NewText != "x" {
		t.Errorf("finding: %+v %+v", f, f.Fix)
	}
	if len(doc.Warnings) != 1 || doc.Errors[0].Kind != "syntax" || doc.Errors[1].Kind != "decode" || doc.Errors[2].Kind != "io" {
		t.Errorf("warnings %q, errors %+v", doc.Warnings, doc.Errors)
	}
	b.Reset()
	JSONLines(&b, res, Options{})
	sc := bufio.NewScanner(&b)
	n := 0
	for sc.Scan() {
		var f guard.Diagnostic
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil || f.Rule.ID != "CG101" {
			t.Errorf("line %d: %v %q", n, err, sc.Text())
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d lines, want 4", n)
	}
}

func TestSARIF(t *testing.T) {
	res, dir := synthetic(t)
	var b bytes.Buffer
	if err := SARIF(&b, res, Options{Root: dir, Version: "1.2.3"}); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			ColumnKind         string                    `json:"columnKind"`
			OriginalURIBaseIDs map[string]map[string]any `json:"originalUriBaseIds"`
			Tool               struct {
				Driver struct {
					Rules []struct {
						ID               string
						HelpURI          string `json:"helpUri"`
						ShortDescription struct{ Text string }
						FullDescription  struct{ Text string }
					}
				}
			}
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
						Region struct {
							StartColumn, EndColumn int
						}
					}
				}
			}
			Invocations []struct {
				ToolConfigurationNotifications []struct{ Message struct{ Text string } }
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if run.ColumnKind != "utf16CodeUnits" || run.OriginalURIBaseIDs["%SRCROOT%"]["uri"] != "file://"+filepath.ToSlash(dir)+"/" {
		t.Errorf("columnKind %q, base %v", run.ColumnKind, run.OriginalURIBaseIDs)
	}
	for _, r := range run.Tool.Driver.Rules {
		if r.HelpURI != DocsURL+r.ID+".md" || r.ShortDescription.Text == "" || r.ShortDescription.Text == r.FullDescription.Text {
			t.Errorf("rule %s: helpUri %q, short %q, full %q", r.ID, r.HelpURI, r.ShortDescription.Text, r.FullDescription.Text)
		}
	}
	loc := run.Results[0].Locations[0].PhysicalLocation
	// An absolute path, relative to the root; é is one UTF-16 unit and two bytes.
	if loc.ArtifactLocation.URI != "pkg/a.py" || loc.ArtifactLocation.URIBaseID != "%SRCROOT%" ||
		loc.Region.StartColumn != 20 || loc.Region.EndColumn != 28 {
		t.Errorf("location %+v", loc)
	}
	if n := run.Invocations[0].ToolConfigurationNotifications; len(n) != 1 {
		t.Errorf("warnings as notifications: %+v", n)
	}
	// Outside the root: an absolute file URI, no base.
	b.Reset()
	SARIF(&b, res, Options{Root: filepath.Join(dir, "elsewhere")})
	if !strings.Contains(b.String(), `"uri": "file://`+filepath.ToSlash(dir)+`/pkg/a.py"`) {
		t.Errorf("outside the root:\n%s", b.String())
	}
}

func TestGitLab(t *testing.T) {
	res, dir := synthetic(t)
	var b bytes.Buffer
	t.Setenv("CI_PROJECT_DIR", dir)
	if err := GitLab(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	var issues []GitLabIssue
	if err := json.Unmarshal(b.Bytes(), &issues); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, is := range issues {
		if seen[is.Fingerprint] || is.CheckName != "CG101" || is.Location.Path == "" || strings.HasPrefix(is.Location.Path, "/") || is.Location.Lines.Begin != 5 {
			t.Errorf("issue %+v", is)
		}
		seen[is.Fingerprint] = true
	}
	if len(issues) != 4 || issues[0].Severity != "major" || issues[3].Severity != "minor" {
		t.Errorf("%d issues: %+v", len(issues), issues)
	}
	// Fingerprints do not move with the line.
	var again bytes.Buffer
	res.Diagnostics[0].Start.Line += 10
	GitLab(&again, res, Options{})
	var moved []GitLabIssue
	json.Unmarshal(again.Bytes(), &moved)
	if moved[0].Fingerprint != issues[0].Fingerprint {
		t.Error("the fingerprint changed with the line")
	}
}

func TestGitHubWarnings(t *testing.T) {
	res, _ := synthetic(t)
	var b strings.Builder
	GitHub(&b, res, Options{})
	if !strings.Contains(b.String(), "::warning title=capguard::entry point") || strings.Count(b.String(), "\n") != 5 {
		t.Errorf("annotations:\n%s", b.String())
	}
}

func TestStatistics(t *testing.T) {
	res, _ := synthetic(t)
	var b strings.Builder
	Statistics(&b, res, Options{})
	if want := "    4  CG101  [-] host-sync-in-capture             captured 4\n"; b.String() != want {
		t.Errorf("statistics %q, want %q", b.String(), want)
	}
	st := Stats(res, false)
	if len(st) != 1 || st[0].Count != 4 || st[0].Fixable != 1 || st[0].Contexts["captured"] != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestWarningsAndErrors(t *testing.T) {
	res, _ := synthetic(t)
	var b strings.Builder
	Warnings(&b, res, false)
	if b.String() != "warning: entry point \"pkg.runner:Runner.decode\" matches no function\n" {
		t.Errorf("warnings %q", b.String())
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{"": "full", "text": "full", "concise": "concise", "gitlab": "gitlab"} {
		if got, ok := Canonical(in); !ok || got != want {
			t.Errorf("Canonical(%q) = %q %v", in, got, ok)
		}
	}
	if _, ok := Canonical("yaml"); ok {
		t.Error("yaml accepted")
	}
}

// The carets stand under the span after wide characters: a CJK character
// or an emoji takes two terminal cells, a combining mark none.
func TestCaretAfterWideCharacters(t *testing.T) {
	for _, c := range []struct{ line, span string }{
		{`    msg = "漢字テスト" + str(t.item())`, "t.item()"},
		{`    label = "🚀🚀" ; n = x.item()`, "x.item()"},
		{"\tname = \"e\u0301t\u00e9\"; v = y.item()", "y.item()"},
	} {
		from := strings.Index(c.line, c.span)
		text, c0, c1 := displayLine(c.line, from, from+len(c.span), 100)
		// The cells before the span, measured on the shown text.
		prefix := text[:strings.Index(text, c.span)]
		if want := runewidth.StringWidth(prefix); c0 != want || c1-c0 != len(c.span) {
			t.Errorf("%q: carets at %d..%d, want %d..%d", c.line, c0, c1, want, want+len(c.span))
		}
	}
	// CJK: 5 wide characters before the span's line position.
	_, c0, _ := displayLine(`x = "漢字" + t.item()`, len(`x = "漢字" + `), len(`x = "漢字" + t.item()`), 100)
	if c0 != 13 {
		t.Errorf("caret at %d, want 13", c0)
	}
}
