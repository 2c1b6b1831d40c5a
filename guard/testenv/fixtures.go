package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// notProjects are the folders of testdata/ that hold no checked project:
// GPU results, verify cases, fix goldens, bad input.
var notProjects = map[string]bool{"gpu": true, "verify": true, "fix": true, "bad": true}

// FixtureProjects returns the fixture projects under the testdata folder
// (one project a folder, as analysistest has them), each as
// filepath.Join(testdata, name). guard's fixtures test checks them and the
// patcher's golden test fixes them.
func FixtureProjects(t testing.TB, testdata string) []string {
	t.Helper()
	entries, err := os.ReadDir(testdata)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !notProjects[e.Name()] {
			out = append(out, filepath.Join(testdata, e.Name()))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no fixture projects in %s", testdata)
	}
	return out
}
