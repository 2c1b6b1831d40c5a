package patcher

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiffExact(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20"
	b := "1\n2\n3\nfour\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
	want := `--- a/pkg/x.py
+++ b/pkg/x.py
@@ -1,7 +1,7 @@
 1
 2
 3
-4
+four
 5
 6
 7
@@ -17,4 +17,4 @@
 17
 18
 19
-20
\ No newline at end of file
+20
`
	if got := UnifiedDiff("./pkg/x.py", []byte(a), []byte(b)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := UnifiedDiff("x.py", []byte(a), []byte(a)); got != "" {
		t.Errorf("equal inputs gave a diff:\n%s", got)
	}
	// Changes 6 unchanged lines apart share a hunk; the header omits ",1".
	got := UnifiedDiff("x.py", []byte("a\n1\n2\n3\n4\n5\n6\nb\n"), []byte("A\n1\n2\n3\n4\n5\n6\nB\n"))
	if strings.Count(got, "@@ -1,8 +1,8 @@") != 1 {
		t.Errorf("changes 6 lines apart should share one hunk:\n%s", got)
	}
	got = UnifiedDiff("x.py", []byte(""), []byte("x\n"))
	if !strings.Contains(got, "@@ -0,0 +1 @@\n+x\n") {
		t.Errorf("diff from an empty file:\n%s", got)
	}
}

// randomText makes a Python-ish file of n lines from a small alphabet of
// lines (so that diffs have repeats to align), with CRLF or LF endings and
// maybe no final newline.
func randomText(r *rand.Rand, n int, crlf, final bool) string {
	words := []string{"import torch", "", "x = 1", "    return x", "def f(x):", "# c", "y = x.to(torch.int32)", "\tz"}
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(words[r.Intn(len(words))])
		if i < n-1 || final {
			b.WriteString(nl)
		}
	}
	return b.String()
}

func mutate(r *rand.Rand, s string) string {
	lines := strings.SplitAfter(s, "\n")
	for k := r.Intn(5); k >= 0; k-- {
		i := r.Intn(len(lines) + 1)
		switch r.Intn(3) {
		case 0: // insert
			lines = append(lines[:i], append([]string{"new " + strconv.Itoa(r.Intn(100)) + "\n"}, lines[i:]...)...)
		case 1: // delete
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		case 2: // change
			if i < len(lines) {
				lines[i] = "changed " + lines[i]
			}
		}
	}
	if r.Intn(4) == 0 { // toggle the final newline
		s = strings.Join(lines, "")
		if strings.HasSuffix(s, "\n") {
			return strings.TrimSuffix(s, "\n")
		}
		return s + "\n"
	}
	return strings.Join(lines, "")
}

// TestUnifiedDiffApplies checks that patch -p1 and git apply turn a into b
// with the diffs of random pairs.
func TestUnifiedDiffApplies(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	var pairs [][2]string
	for i := 0; i < 40; i++ {
		a := randomText(r, r.Intn(30), r.Intn(3) == 0, r.Intn(4) != 0)
		b := mutate(r, a)
		if a != b {
			pairs = append(pairs, [2]string{a, b})
		}
	}
	// One patch of many files, as `capguard fix` prints it, under names
	// that need a tab (spaces) or git's quoting (newline, tab, quote,
	// backslash) in the headers.
	names := []string{"pkg/f%02d.py", "pkg/sp ace %02d.py", "pkg/ünï%02d.py", "pkg/new\nline%02d.py",
		"pkg/quo\"te%02d.py", "pkg/ta\tb%02d.py", "pkg/back\\slash%02d.py", "pkg/both \n%02d.py"}
	name := func(i int) string { return fmt.Sprintf(names[i%len(names)], i) }
	var patch strings.Builder
	for i, p := range pairs {
		name := name(i)
		if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(p[0]), 0o644); err != nil {
			t.Fatal(err)
		}
		d := UnifiedDiff(name, []byte(p[0]), []byte(p[1]))
		patch.WriteString(d)
		got, err := applyUnified([]byte(p[0]), d)
		if err != nil || string(got) != p[1] {
			t.Fatalf("pair %d: in-process apply: %v\n%q\nwant\n%q\ndiff:\n%s", i, err, got, p[1], d)
		}
	}
	check := func(tool string) {
		for i, p := range pairs {
			got, err := os.ReadFile(filepath.Join(dir, name(i)))
			if err != nil || string(got) != p[1] {
				t.Errorf("%s, pair %d: got %q want %q (%v)", tool, i, got, p[1], err)
			}
		}
	}
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(patch.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	if _, err := exec.LookPath("patch"); err == nil {
		run("patch", "-p1", "--quiet", "--no-backup-if-mismatch")
		check("patch -p1")
		run("patch", "-p1", "-R", "--quiet", "--no-backup-if-mismatch")
	} else {
		t.Log("patch is not installed; checked with git apply only")
	}
	run("git", "apply", "--unsafe-paths", "--whitespace=nowarn", "-")
	check("git apply")
}

// applyUnified applies a diff made by UnifiedDiff to src, strictly: every
// context and deleted line must match. It is the fuzz tests' oracle.
func applyUnified(src []byte, diff string) ([]byte, error) {
	if diff == "" {
		return src, nil
	}
	old := strings.SplitAfter(string(src), "\n")
	if len(old) > 0 && old[len(old)-1] == "" {
		old = old[:len(old)-1]
	}
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) < 2 || !strings.HasPrefix(strings.Replace(lines[0], `"`, "", 1), "--- a/") || !strings.HasPrefix(strings.Replace(lines[1], `"`, "", 1), "+++ b/") {
		return nil, fmt.Errorf("bad headers")
	}
	var out []string
	pos := 0 // next line of old to copy
	var last *string
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "":
		case strings.HasPrefix(l, "@@ -"):
			var as, al, bs, bl int
			hdr := strings.Fields(l)
			parse := func(f string, start, n *int) {
				f = f[1:]
				*n = 1
				if j := strings.IndexByte(f, ','); j >= 0 {
					*n, _ = strconv.Atoi(f[j+1:])
					f = f[:j]
				}
				*start, _ = strconv.Atoi(f)
			}
			parse(hdr[1], &as, &al)
			parse(hdr[2], &bs, &bl)
			at := as - 1
			if al == 0 {
				at = as
			}
			if at < pos {
				return nil, fmt.Errorf("hunk goes back")
			}
			out = append(out, old[pos:at]...)
			pos = at
		case l == "\\ No newline at end of file\n":
			if last == nil {
				return nil, fmt.Errorf("stray no-newline marker")
			}
			*last = strings.TrimSuffix(*last, "\n")
		default:
			text := l[1:]
			switch l[0] {
			case ' ', '-':
				if pos >= len(old) || strings.TrimSuffix(old[pos], "\n") != strings.TrimSuffix(text, "\n") {
					return nil, fmt.Errorf("line %d does not match", pos+1)
				}
				if l[0] == ' ' {
					out = append(out, text)
					last = &out[len(out)-1]
				} else {
					t := text
					last = &t
				}
				pos++
			case '+':
				out = append(out, text)
				last = &out[len(out)-1]
			default:
				return nil, fmt.Errorf("bad line %q", l)
			}
		}
	}
	out = append(out, old[pos:]...)
	return []byte(strings.Join(out, "")), nil
}

func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("a\nb", "a\nb\n")
	f.Add("", "x")
	f.Add("x\r\ny\r\n", "x\r\nz\r\ny\r\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := UnifiedDiff("f.py", []byte(a), []byte(b))
		if (d == "") != (a == b) {
			t.Fatalf("empty diff iff equal inputs; diff %q", d)
		}
		got, err := applyUnified([]byte(a), d)
		if err != nil || !bytes.Equal(got, []byte(b)) {
			t.Fatalf("apply: %v\ngot  %q\nwant %q\ndiff:\n%s", err, got, b, d)
		}
	})
}

func TestDiffPath(t *testing.T) {
	wd, _ := os.Getwd()
	for in, want := range map[string]string{
		"./pkg/x.py":                      "pkg/x.py",
		"pkg//y/../x.py":                  "pkg/x.py",
		filepath.Join(wd, "sub", "x.py"):  "sub/x.py",
		"/elsewhere/x.py":                 "elsewhere/x.py",
		filepath.Join(wd, "..", "sib.py"): strings.TrimPrefix(filepath.ToSlash(filepath.Join(filepath.Dir(wd), "sib.py")), "/"),
	} {
		if got := diffPath(in); got != want {
			t.Errorf("diffPath(%q) = %q, want %q", in, got, want)
		}
	}
}
