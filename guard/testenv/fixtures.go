package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// notProjects are the folders of testdata/ that hold no checked project:
// GPU results, verify cases, fix goldens, bad input, and flow (a folder of
// projects, listed one by one).
var notProjects = map[string]bool{"gpu": true, "verify": true, "fix": true, "bad": true, FlowDir: true}

// FlowDir is the folder of testdata/ that holds one small project per
// call-graph construct (testdata/flow/<construct>/): each is a fixture
// project of its own.
const FlowDir = "flow"

// FixtureProjects returns the fixture projects under the testdata folder
// (one project a folder, as analysistest has them), each as
// filepath.Join(testdata, name), then each folder of testdata/flow as
// filepath.Join(testdata, "flow", name) (testdata/flow itself is not a
// project). guard's fixtures test checks them and the patcher's golden test
// fixes them.
func FixtureProjects(t testing.TB, testdata string) []string {
	t.Helper()
	out := subfolders(t, testdata, notProjects)
	if len(out) == 0 {
		t.Fatalf("no fixture projects in %s", testdata)
	}
	if _, err := os.Stat(filepath.Join(testdata, FlowDir)); err == nil {
		flow := subfolders(t, filepath.Join(testdata, FlowDir), nil)
		if len(flow) == 0 {
			t.Fatalf("no flow projects in %s", filepath.Join(testdata, FlowDir))
		}
		out = append(out, flow...)
	}
	return out
}

// FlowProjects returns the folders of testdata/flow, each a project.
func FlowProjects(t testing.TB, testdata string) []string {
	t.Helper()
	out := subfolders(t, filepath.Join(testdata, FlowDir), nil)
	if len(out) == 0 {
		t.Fatalf("no flow projects in %s", filepath.Join(testdata, FlowDir))
	}
	return out
}

// subfolders lists the folders of dir (sorted, as os.ReadDir returns
// them) but those named in skip.
func subfolders(t testing.TB, dir string, skip map[string]bool) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !skip[e.Name()] {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
