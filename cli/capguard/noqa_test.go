package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// codesOf runs check with JSON output and returns the findings' rule codes.
func codesOf(t *testing.T, args ...string) []string {
	t.Helper()
	out, _, _, _ := runApp(t, append([]string{"check", "--no-cache", "--output-format", "json"}, args...)...)
	var doc struct {
		Findings []struct{ Rule, Path string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var codes []string
	for _, f := range doc.Findings {
		codes = append(codes, f.Rule)
	}
	return codes
}

func pyFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// --add-noqa on every fixture project: exit 0, then a second check
// reports nothing but the suppression findings (CG900, CG901: no noqa
// silences those), and every file still compiles.
func TestAddNoqaFixtures(t *testing.T) {
	total := 0
	for _, src := range fixtureProjects(t) {
		dir := copyProject(t, src)
		t.Run(strings.TrimPrefix(src, "../../testdata/"), func(t *testing.T) {
			t.Chdir(dir)
			before := codesOf(t, ".")
			meta := 0
			for _, c := range before {
				if c == "CG900" || c == "CG901" {
					meta++
				}
			}
			total += len(before) - meta
			_, stderr, code, msg := runApp(t, "check", "--no-cache", "--add-noqa", ".")
			if code != 0 || !strings.Contains(stderr, "Added ") {
				t.Fatalf("--add-noqa: exit %d %s\n%s", code, msg, stderr)
			}
			after := codesOf(t, ".")
			for _, c := range after {
				if c != "CG900" && c != "CG901" {
					t.Errorf("after --add-noqa: %v", after)
					break
				}
			}
			if len(after) != meta {
				t.Errorf("after --add-noqa: %v, want the %d suppression findings", after, meta)
			}
			if err := testenv.PyCompile(t, pyFiles(t, ".")...); err != nil {
				t.Error(err)
			}
		})
	}
	if total < 50 {
		t.Errorf("only %d findings in the fixtures: the test proves little", total)
	}
}

// The lines --add-noqa must not break: existing codes kept, a bare noqa
// left alone, a line ending inside a string or continued by a backslash,
// CRLF line ends.
func TestAddNoqaLines(t *testing.T) {
	src := `import torch


def step(x, y, f):
    a = x.item()  # noqa: E501
    b = y.item()  # type: ignore
    e = y.item()  # noqa
    c = torch.nonzero(x) + \
        y
    d = f(x.item(), """
text # not a comment
""")
    return a + b + c.sum() + d + e


g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    step(torch.ones(1, device="cuda"), torch.ones(1, device="cuda"), print)
`
	for _, nl := range []string{"\n", "\r\n"} {
		dir := t.TempDir()
		t.Chdir(dir)
		os.Mkdir(".git", 0o755)
		os.WriteFile("step.py", []byte(strings.ReplaceAll(src, "\n", nl)), 0o644)
		if n := len(codesOf(t, "step.py")); n != 4 {
			t.Fatalf("%d findings before, want 4", n)
		}
		if _, stderr, code, _ := runApp(t, "check", "--no-cache", "--add-noqa", "step.py"); code != 0 || !strings.Contains(stderr, "Added 4 noqa directives to 1 file.") {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		got, _ := os.ReadFile("step.py")
		for _, want := range []string{
			"a = x.item()  # noqa: CG101, E501" + nl,
			"b = y.item()  # type: ignore  # noqa: CG101" + nl,
			"e = y.item()  # noqa" + nl,
			"    # noqa: CG104" + nl + "    c = torch.nonzero(x) + \\" + nl,
			"    # noqa: CG101" + nl + `    d = f(x.item(), """` + nl,
		} {
			if !strings.Contains(string(got), want) {
				t.Errorf("%q missing:\n%s", want, got)
			}
		}
		if c := codesOf(t, "step.py"); len(c) != 0 {
			t.Errorf("after: %v\n%s", c, got)
		}
		if err := testenv.PyCompile(t, "step.py"); err != nil {
			t.Error(err)
		}
	}
}

func TestContextFilter(t *testing.T) {
	all := codesOf(t, "../../testdata/sglang_like")
	captured := codesOf(t, "--context", "captured", "../../testdata/sglang_like")
	prep := codesOf(t, "--context", "replay-prep", "../../testdata/sglang_like")
	both := codesOf(t, "--context", "captured,replay-prep", "../../testdata/sglang_like")
	if len(captured) == 0 || len(prep) == 0 || len(both) != len(captured)+len(prep) || len(all) < len(both) {
		t.Errorf("all %v, captured %v, replay-prep %v, both %v", all, captured, prep, both)
	}
	if _, _, code, msg := runApp(t, "check", "--context", "captred", "../../testdata/sglang_like"); code != 2 || !strings.Contains(msg, "did you mean captured?") {
		t.Errorf("--context captred: exit %d %s", code, msg)
	}
}
