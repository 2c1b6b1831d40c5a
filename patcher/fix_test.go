package patcher

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard"
)

// fakeRules is a stand-in for guard: regular expressions whose matches get a
// diagnostic with a fix built from the match.
type fakeRule struct {
	code  string
	re    *regexp.Regexp
	fix   func(m []string) string
	appl  guard.Applicability
	needs bool
}

var fakeRules = []fakeRule{
	{code: "CG301", re: regexp.MustCompile(`(\w+(?:\.reshape\(-1\))?)\.to\(torch\.int32\)`), appl: guard.Safe, needs: true,
		fix: func(m []string) string { return `persistent_buffer("f.` + m[1] + `", ` + m[1] + `, torch.int32)` }},
	{code: "CG302", re: regexp.MustCompile(`(\w+)\.contiguous\(\)`), appl: guard.Unsafe, needs: true,
		fix: func(m []string) string { return `persistent_buffer("f.` + m[1] + `", ` + m[1] + `)` }},
	{code: "CG303", re: regexp.MustCompile(`shown\(\)`), appl: guard.DisplayOnly,
		fix: func(m []string) string { return `gone()` }},
	{code: "CG304", re: regexp.MustCompile(`breaks\(\)`), appl: guard.Safe,
		fix: func(m []string) string { return `breaks(` }},
	// overlaps CG301's match of `x.to(torch.int32)` when both are present.
	{code: "CG305", re: regexp.MustCompile(`wrap\((\w+)\.to`), appl: guard.Safe,
		fix: func(m []string) string { return `wrapped(` + m[1] + `.to` }},
}

var fakeTestRule = map[string]*guard.Rule{}

func fakeAnalyze(calls *int) func(guard.Options) (*guard.Result, error) {
	return func(o guard.Options) (*guard.Result, error) {
		*calls++
		res := &guard.Result{Config: &guard.Config{}}
		for _, p := range o.Paths {
			src, ok := o.Overlay[p]
			if !ok {
				var err error
				if src, err = os.ReadFile(p); err != nil {
					res.Errors = append(res.Errors, guard.FileError{Path: p, Message: err.Error()})
					continue
				}
			}
			res.Files++
			for _, r := range fakeRules {
				rule := fakeTestRule[r.code]
				if rule == nil {
					rule = &guard.Rule{ID: r.code}
					fakeTestRule[r.code] = rule
				}
				for _, loc := range r.re.FindAllSubmatchIndex(src, -1) {
					m := make([]string, len(loc)/2)
					for i := range m {
						m[i] = string(src[loc[2*i]:loc[2*i+1]])
					}
					res.Diagnostics = append(res.Diagnostics, &guard.Diagnostic{
						Rule: rule, Path: p, Message: r.code + " finding",
						Start: guard.Pos{Line: 1 + bytes.Count(src[:loc[0]], []byte("\n")), Offset: loc[0]},
						Fix: &guard.Fix{Message: "fix " + r.code, Applicability: r.appl, NeedsHelper: r.needs,
							Edits: []guard.TextEdit{{Start: loc[0], End: loc[1], NewText: r.fix(m)}}},
					})
				}
			}
		}
		return res, nil
	}
}

const reader = `"""Reader."""
import torch


def read(q, seq_lens, page_table):
    sl = seq_lens.reshape(-1).to(torch.int32)
    pt = page_table.to(torch.int32)
    qq = q.contiguous()
    shown()
    kernel[(1,)](qq, sl, pt)
`

func TestFixRounds(t *testing.T) {
	calls := 0
	res, err := Fix(Options{Paths: []string{"pkg/reader.py"}, Overlay: map[string][]byte{"pkg/reader.py": []byte(reader)},
		Analyze: fakeAnalyze(&calls)})
	if err != nil {
		t.Fatal(err)
	}
	f := res.File("pkg/reader.py")
	if f == nil {
		t.Fatal("no result for pkg/reader.py")
	}
	if len(f.Applied) != 2 || f.Applied[0].Code != "CG301" || f.Applied[1].Code != "CG301" || f.Helper != "inserted" {
		t.Errorf("applied %+v helper %q", f.Applied, f.Helper)
	}
	for _, want := range []string{
		`sl = persistent_buffer("f.seq_lens.reshape(-1)", seq_lens.reshape(-1), torch.int32)`,
		`pt = persistent_buffer("f.page_table", page_table, torch.int32)`,
		"qq = q.contiguous()", // unsafe: not enabled
		"shown()",             // display-only
		"\ndef persistent_buffer(site, src, dtype=None, copy=False):\n",
	} {
		if !bytes.Contains(f.Fixed, []byte(want)) {
			t.Errorf("fixed file lacks %q:\n%s", want, f.Fixed)
		}
	}
	if res.UnsafeHidden != 1 || len(res.Remaining) != 2 || !res.Converged || res.Rounds != 1 || calls != 2 {
		t.Errorf("unsafe hidden %d, remaining %d, converged %v, rounds %d, analyses %d",
			res.UnsafeHidden, len(res.Remaining), res.Converged, res.Rounds, calls)
	}
	got, err := applyUnified(f.Original, f.Diff)
	if err != nil || !bytes.Equal(got, f.Fixed) {
		t.Errorf("the diff does not give the fixed bytes: %v", err)
	}

	// Unsafe fixes on: contiguous goes too. Fixing the output again changes nothing.
	res, err = Fix(Options{Paths: []string{"pkg/reader.py"}, Overlay: map[string][]byte{"pkg/reader.py": []byte(reader)},
		Analyze: fakeAnalyze(&calls), UnsafeFixes: true})
	if err != nil {
		t.Fatal(err)
	}
	fixed := res.File("pkg/reader.py").Fixed
	if !bytes.Contains(fixed, []byte(`qq = persistent_buffer("f.q", q)`)) || res.UnsafeHidden != 0 {
		t.Errorf("unsafe fix not applied:\n%s", fixed)
	}
	if bytes.Count(fixed, []byte("def persistent_buffer(")) != 1 {
		t.Error("helper inserted more than once")
	}
	again, err := Fix(Options{Paths: []string{"pkg/reader.py"}, Overlay: map[string][]byte{"pkg/reader.py": fixed},
		Analyze: fakeAnalyze(&calls), UnsafeFixes: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Changed()) != 0 || again.Diff() != "" {
		t.Errorf("fixing fixed code changed it:\n%s", again.Diff())
	}
	pyCompile(t, map[string][]byte{"fixed": fixed})
}

func TestFixOverlapNextRound(t *testing.T) {
	calls := 0
	src := "import torch\n\n\ndef f(x):\n    return wrap(x.to(torch.int32))\n"
	res, err := Fix(Options{Paths: []string{"a.py"}, Overlay: map[string][]byte{"a.py": []byte(src)}, Analyze: fakeAnalyze(&calls)})
	if err != nil {
		t.Fatal(err)
	}
	f := res.File("a.py")
	// CG305's edit starts first and wins round 1; CG301's overlaps it,
	// waits, and applies in round 2 on the re-analysed file.
	if !bytes.Contains(f.Fixed, []byte(`return wrapped(persistent_buffer("f.x", x, torch.int32))`)) {
		t.Errorf("overlapping fixes:\n%s", f.Fixed)
	}
	if res.Rounds != 2 || len(f.Applied) != 2 || f.Applied[0].Code != "CG305" || f.Applied[1].Round != 2 || len(res.Remaining) != 0 {
		t.Errorf("rounds %d, applied %+v, remaining %+v", res.Rounds, f.Applied, res.Remaining)
	}
}

func TestFixRefusesSyntaxBreakingFix(t *testing.T) {
	calls := 0
	src := "import torch\n\n\ndef f(x):\n    breaks()\n    return x.to(torch.int32)\n"
	res, err := Fix(Options{Paths: []string{"a.py"}, Overlay: map[string][]byte{"a.py": []byte(src)}, Analyze: fakeAnalyze(&calls)})
	if err != nil {
		t.Fatal(err)
	}
	f := res.File("a.py")
	if !guard.ParseOK(f.Fixed) || !bytes.Contains(f.Fixed, []byte("breaks()\n")) {
		t.Errorf("syntax-breaking fix applied:\n%s", f.Fixed)
	}
	if !bytes.Contains(f.Fixed, []byte(`return persistent_buffer("f.x", x, torch.int32)`)) {
		t.Errorf("the good fix beside it was lost:\n%s", f.Fixed)
	}
	if len(f.Skipped) != 1 || f.Skipped[0].Code != "CG304" || f.Skipped[0].Reason != "the fixed file would not parse" {
		t.Errorf("skipped %+v", f.Skipped)
	}
	if calls > 3 {
		t.Errorf("%d analyses: the refused fix was retried", calls)
	}
}

func TestFixRefusesBadFiles(t *testing.T) {
	calls := 0
	overlay := map[string][]byte{
		"syntax.py": []byte("import torch\ndef f(:\n    return x.to(torch.int32)\n"),
		"latin.py":  []byte("import torch\ns = 'caf\xe9'\ny = x.to(torch.int32)\n"),
		"good.py":   []byte("import torch\ny = x.to(torch.int32)\n"),
	}
	res, err := Fix(Options{Paths: []string{"good.py", "latin.py", "syntax.py"}, Overlay: overlay, Analyze: fakeAnalyze(&calls)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed()) != 1 || res.Changed()[0].Path != "good.py" {
		t.Errorf("changed %v", res.Changed())
	}
	var paths []string
	for _, e := range res.Errors {
		paths = append(paths, e.Path+": "+e.Message)
	}
	if len(paths) != 2 || !strings.HasPrefix(paths[0], "latin.py: not valid UTF-8") || !strings.HasPrefix(paths[1], "syntax.py: has a syntax error") {
		t.Errorf("errors %q", paths)
	}
}

func TestFixConvergenceBound(t *testing.T) {
	// A rule whose fix re-creates its own finding never converges.
	calls := 0
	loop := func(o guard.Options) (*guard.Result, error) {
		calls++
		src := o.Overlay["a.py"]
		i := bytes.Index(src, []byte("x = 1"))
		return &guard.Result{Files: 1, Config: &guard.Config{}, Diagnostics: []*guard.Diagnostic{{
			Rule: &guard.Rule{ID: "CG999"}, Path: "a.py",
			Fix: &guard.Fix{Applicability: guard.Safe, Edits: []guard.TextEdit{{Start: i, End: i, NewText: "y = 2\n"}}},
		}}}, nil
	}
	res, err := Fix(Options{Paths: []string{"a.py"}, Overlay: map[string][]byte{"a.py": []byte("x = 1\n")}, Analyze: loop, MaxRounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Converged || res.Rounds != 3 || calls != 4 {
		t.Errorf("converged %v rounds %d analyses %d", res.Converged, res.Rounds, calls)
	}
	if got := string(res.File("a.py").Fixed); got != "y = 2\ny = 2\ny = 2\nx = 1\n" {
		t.Errorf("got %q", got)
	}
}

func TestResultWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.py")
	src := "import torch\r\n\r\n\r\ndef f(x):\r\n    return x.to(torch.int32)\r\n"
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := 0
	res, err := Fix(Options{Paths: []string{p}, Analyze: fakeAnalyze(&calls)})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != src {
		t.Fatal("Fix wrote the file")
	}
	if err := res.Write(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !bytes.Equal(b, res.File(p).Fixed) || bytes.Count(b, []byte("\n")) != bytes.Count(b, []byte("\r\n")) {
		t.Errorf("written bytes differ or lost CRLF:\n%q", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}

// A file edited between Fix and Write is not overwritten with fixes made
// for its old bytes.
func TestResultWriteRefusesChangedFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.py")
	src := "import torch\n\n\ndef f(x):\n    return x.to(torch.int32)\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := 0
	res, err := Fix(Options{Paths: []string{p}, Analyze: fakeAnalyze(&calls)})
	if err != nil || len(res.Changed()) != 1 {
		t.Fatalf("fix: %v, %d changed", err, len(res.Changed()))
	}
	edited := src + "# edited meanwhile\n"
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := res.Write(); err == nil || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("Write: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != edited {
		t.Fatal("the edited file was overwritten")
	}
}
