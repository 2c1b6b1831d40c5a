package guard

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// relativeTo rewrites a result's paths relative to dir (absolute), so that
// runs naming the project by another path compare equal.
func relativeTo(t *testing.T, res *Result, dir string) {
	t.Helper()
	fix := func(p string) string {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(dir, abs)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(rel)
	}
	for _, d := range res.Diagnostics {
		d.Path = fix(d.Path)
	}
	for i := range res.Errors {
		res.Errors[i].Path = fix(res.Errors[i].Path)
	}
}

// TestWorkingDirectoryIndependent: every fixture project checked from the
// test's folder by a relative path, from `/` by its absolute path and from
// inside itself as `.` gives the same findings: module names (in chains,
// messages and functions) come from the project root, not the working
// directory (from `/` they were `work.corpus...`).
func TestWorkingDirectoryIndependent(t *testing.T) {
	for _, dir := range testenv.FixtureProjects(t, "../testdata") {
		name, _ := filepath.Rel("../testdata", dir)
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			here, err := Run(Options{Paths: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			relativeTo(t, here, abs)
			want := describeRun(here)
			for _, wd := range []string{"/", abs} {
				t.Run(wd, func(t *testing.T) {
					t.Chdir(wd)
					path := abs
					if wd == abs {
						path = "."
					}
					there, err := Run(Options{Paths: []string{path}})
					if err != nil {
						t.Fatal(err)
					}
					relativeTo(t, there, abs)
					if got := describeRun(there); strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("checked from %s and from the test's folder differ:\n%s", wd, diffLines(got, want))
					}
				})
			}
		})
	}
}
