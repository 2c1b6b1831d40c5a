package guard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// TestEarlyIsTheFilesPart: Options.Early gives the files Options.First
// names exactly what the whole result holds for them (findings, after the
// suppression filter and CG302, and file errors), and nothing of the
// other files; naming them changes nothing in the whole result, and
// checking them alone (FirstOnly) finds what it holds for them. Checked on
// every fixture project, with every other file of it named first, and
// then the others.
func TestEarlyIsTheFilesPart(t *testing.T) {
	dirs := testenv.FixtureProjects(t, "../testdata")
	if len(dirs) < 20 {
		t.Fatalf("only %d fixture projects found", len(dirs))
	}
	// And a project whose every file has findings, an unused suppression
	// and a claim with findings, so that each half leaves out files that
	// the suppression filter and CG302 would report on.
	proj := t.TempDir()
	for name, src := range map[string]string{
		"pkg/__init__.py": "",
		"pkg/a.py": "import torch\nfrom pkg.b import helper\n\n\ndef step(x, g):\n    with torch.cuda.graph(g):\n" +
			"        y = x.sum().item()\n        z = x + 1  # noqa: CG104\n        helper(x)\n    return y, z\n",
		"pkg/b.py": "def helper(x):  # capguard: capture-safe\n    n = x.max().item()\n    m = x * 2  # noqa: CG103\n    return n, m\n",
	} {
		p := filepath.Join(proj, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dirs = append(dirs, filepath.Join(proj, "pkg"))
	compared, onlyChecked, rules := 0, 0, map[string]bool{}
	for _, dir := range dirs {
		whole, err := Run(Options{Paths: []string{dir}})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		// Every other path the run names (findings, errors, files with
		// neither), in order.
		seen := map[string]bool{}
		var paths []string
		add := func(p string) {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
		for _, d := range whole.Diagnostics {
			add(d.Path)
		}
		for _, e := range whole.Errors {
			add(e.Path)
		}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(p) == ".py" {
				add(p)
			}
			return nil
		})
		sort.Strings(paths)
		for half := 0; half < 2; half++ {
			var first []string
			named := map[string]bool{}
			for i, p := range paths {
				if i%2 == half {
					first = append(first, p)
					named[p] = true
				}
			}
			var early []*Result
			res, err := Run(Options{Paths: []string{dir}, First: first, Early: func(r *Result) { early = append(early, r) }})
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			if got, want := showAll(res), showAll(whole); got != want {
				t.Errorf("%s (half %d): naming files first changed the result:\n%s\nwant\n%s", dir, half, got, want)
			}
			if len(first) == 0 {
				if len(early) != 0 {
					t.Errorf("%s (half %d): Early called with no file named first", dir, half)
				}
				continue
			}
			if len(early) != 1 {
				t.Errorf("%s (half %d): Early called %d times, want once", dir, half, len(early))
				continue
			}
			part := &Result{}
			for _, d := range whole.Diagnostics {
				if named[d.Path] {
					part.Diagnostics = append(part.Diagnostics, d)
					rules[d.Rule.ID] = true
				}
			}
			for _, e := range whole.Errors {
				if named[e.Path] {
					part.Errors = append(part.Errors, e)
				}
			}
			// Checked alone (FirstOnly), they have the same findings,
			// and the other files are not checked.
			checked, total := 0, -1
			count := func(p Progress) {
				if p.Phase == "analysing" {
					checked, total = max(checked, p.Done), p.Total
				}
			}
			only, err := Run(Options{Paths: []string{dir}, First: first, FirstOnly: true, Progress: count})
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			if checked > len(first) || checked != total {
				t.Errorf("%s (half %d): FirstOnly checked %d files of %d, %d named", dir, half, checked, total, len(first))
			}
			onlyChecked += checked
			onlyPart := &Result{Diagnostics: only.Diagnostics}
			for _, e := range only.Errors {
				if named[e.Path] {
					onlyPart.Errors = append(onlyPart.Errors, e)
				}
			}
			if got, want := showAll(onlyPart), showAll(part); got != want {
				t.Errorf("%s (half %d): FirstOnly gave\n%s\nwant the whole result's part\n%s", dir, half, got, want)
			}
			compared += len(part.Diagnostics) + len(part.Errors)
			if got, want := showAll(early[0]), showAll(part); got != want {
				t.Errorf("%s (half %d): Early gave\n%s\nwant the whole result's part\n%s", dir, half, got, want)
			}
		}
	}
	// The comparison proves something only where the named files have
	// findings, among them the per-file steps' (an unused suppression,
	// CG302).
	if compared < 20 || onlyChecked == 0 || !rules["CG302"] || !rules["CG901"] {
		t.Fatalf("compared %d findings and errors, rules %v: the test proves little", compared, rules)
	}
}

// showAll is a result's findings and file errors, as JSON lines.
func showAll(r *Result) string {
	var b []byte
	for _, d := range r.Diagnostics {
		j, _ := json.Marshal(d)
		b = append(append(b, j...), '\n')
	}
	for _, e := range r.Errors {
		j, _ := json.Marshal(e)
		b = append(append(b, j...), '\n')
	}
	return string(b)
}
