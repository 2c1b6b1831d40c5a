package capmap

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The committed maps were recorded by `capguard trace` in another checkout
// (templates/testdata/trace, cwd recorded in the map): cpu_engine.map.json
// on CPU torch (setprofile), stub_engine.map.json on the stand-in torch with
// Python 3.12 (sys.monitoring), a parent and a child process merged.

func load(t *testing.T, name string) *Map {
	t.Helper()
	m, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkout copies the traced engine files under dir at the same relative
// paths as in the map's working directory, as a second checkout would hold them.
func checkout(t *testing.T, m *Map, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "templates", "testdata", "trace")
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ path, qual, want string }{
		{"/w/pkg/runner.py", "Runner.capture.<locals>.inner", "pkg.runner.Runner.capture.inner"},
		{"/w/pkg/__init__.py", "f", "pkg.f"},
		{"/w/pkg/mod.py", "<module>", "pkg.mod"},
		{"/w/serve.py", "main", "serve.main"},
	} {
		got, ok := Name("/w", c.path, c.qual)
		if !ok || got != c.want {
			t.Errorf("Name(%s, %s) = %q %v, want %q", c.path, c.qual, got, ok, c.want)
		}
	}
	if _, ok := Name("/w", "/elsewhere/x.py", "f"); ok {
		t.Error("a file outside the folder has no name")
	}
	if _, ok := Name("/w", "<frozen importlib._bootstrap>", "f"); ok {
		t.Error("a pseudo-file has no name")
	}
	if n, a := NamedQual("combine.<locals>.<lambda>"); n != "combine" || a != "<lambda>" {
		t.Errorf("NamedQual = %q %q", n, a)
	}
}

func TestLoadValidates(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "cpu_engine.map.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"schema", `"schema": "capguard-capture-map"`, `"schema": "other"`, "schema"},
		{"newer", `"version": 1`, `"version": 3`, "newer capguard"},
		{"old", `"version": 1`, `"version": 0`, "not a capture map version"},
		{"rule", `"rule": "CG201"`, `"rule": "X1"`, "not CGnnn"},
		{"graph id", `"id": 0,`, `"id": 3,`, "ids are 0..n-1"},
	} {
		data := strings.Replace(string(good), c.from, c.to, 1)
		if data == string(good) {
			t.Fatalf("%s: %q not in the map", c.name, c.from)
		}
		_, err := Parse([]byte(data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
		if c.name == "newer" && !errors.Is(err, ErrNewerVersion) {
			t.Errorf("newer: %v is not ErrNewerVersion", err)
		}
	}
	if _, err := Parse([]byte("{")); err == nil {
		t.Error("bad JSON accepted")
	}
}

func TestCapturedAndPrepFromAnotherCheckout(t *testing.T) {
	m := load(t, "cpu_engine.map.json")
	dir := checkout(t, m, "cpu_engine.py")
	got := Names(m.Captured(dir))
	want := []string{"cpu_engine.Backend.forward", "cpu_engine.combine"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("captured %v, want %v", got, want)
	}
	for _, r := range m.Captured(dir) {
		if r.Path != filepath.Join(dir, "cpu_engine.py") {
			t.Errorf("%s: path %s is not in the checkout", r.Name, r.Path)
		}
		if len(r.Names) == 0 || r.Names[0] != "cpu_engine.Runner.capture" {
			t.Errorf("%s: chain %v should start at the capture site", r.Name, r.Names)
		}
		if r.Name == "cpu_engine.combine" && r.Anon != "" && r.Anon != "<lambda>" {
			t.Errorf("combine's lambda: anon %q", r.Anon)
		}
	}
	prep := m.ReplayPrep(dir)
	if names := Names(prep); !reflect.DeepEqual(names, []string{"cpu_engine.Backend.prepare_replay"}) {
		t.Errorf("replay-prep %v", names)
	}
	if len(prep) == 1 && len(prep[0].Writes) == 0 {
		t.Error("replay-prep record lost its writes")
	}
	if ep := EntryPoints(m.Captured(dir)); !reflect.DeepEqual(ep, []string{"cpu_engine:Backend.forward", "cpu_engine:combine"}) {
		t.Errorf("entry points %v", ep)
	}
	bc := m.ByContext(dir)
	if len(bc[Captured]) != 2 || len(bc[ReplayPrep]) != 1 {
		t.Errorf("ByContext: %d captured, %d replay-prep", len(bc[Captured]), len(bc[ReplayPrep]))
	}
}

func TestStale(t *testing.T) {
	m := load(t, "cpu_engine.map.json")
	dir := checkout(t, m, "cpu_engine.py")
	recs := m.Captured(dir)
	if s := FindStale(recs, nil); len(s) != 0 {
		t.Errorf("nothing is stale yet: %v", s)
	}
	s := FindStale(recs, func(name string) bool { return name != "cpu_engine.combine" })
	if len(s) != 1 || s[0].Name != "cpu_engine.combine" {
		t.Errorf("stale %+v, want combine", s)
	}
	os.Remove(filepath.Join(dir, "cpu_engine.py"))
	if s := FindStale(recs, nil); len(s) != 2 || !strings.Contains(s[0].Why, "missing") {
		t.Errorf("a removed file makes its functions stale: %+v", s)
	}
	// Outside both folders: external, never stale.
	other := t.TempDir()
	m.Cwd = other
	for _, r := range m.Captured(other) {
		if !r.External() {
			t.Errorf("%s should be external", r.RecordedPath)
		}
	}
	if s := FindStale(m.Captured(other), func(string) bool { return false }); len(s) != 0 {
		t.Errorf("external records reported stale: %v", s)
	}
}

func TestRuntimeFindings(t *testing.T) {
	m := load(t, "cpu_engine.map.json")
	dir := checkout(t, m, "cpu_engine.py")
	src, _ := os.ReadFile(filepath.Join(dir, "cpu_engine.py"))
	line := func(marker string) int {
		for i, l := range strings.Split(string(src), "\n") {
			if strings.Contains(l, "# "+marker) {
				return i + 1
			}
		}
		t.Fatalf("no %s", marker)
		return 0
	}
	got := map[string]RuntimeFinding{}
	for _, f := range m.RuntimeFindings(dir) {
		got[f.Rule+" "+f.Kind] = f
	}
	if f, ok := got["CG101 host-sync"]; !ok || f.Line != line("PLANT-SYNC") || f.Name != "cpu_engine.Runner.capture" {
		t.Errorf("host sync: %+v", f)
	}
	if f, ok := got["CG201 rebound"]; !ok || f.Holder != "Backend.block_table" || len(f.Chain) == 0 {
		t.Errorf("rebind: %+v", f)
	}
	if _, ok := got["CG301 freed"]; !ok {
		t.Errorf("freed input missing: %v", got)
	}
}

func TestMergeAndChildren(t *testing.T) {
	m := load(t, "stub_engine.map.json")
	if len(m.Processes) != 2 || len(m.Graphs) != 4 {
		t.Fatalf("processes %v, graphs %d: want a parent and a child, 2 graphs each", m.Processes, len(m.Graphs))
	}
	for i, g := range m.Graphs {
		if g.ID != i {
			t.Errorf("graph %d has id %d", i, g.ID)
		}
		for _, f := range g.Functions {
			if f.Graph != i {
				t.Errorf("graph %d: function %s says graph %d", i, f.Qual, f.Graph)
			}
		}
	}
	// Merge of a map with itself renumbers the second copy.
	two := Merge(m, m)
	if len(two.Graphs) != 8 || two.Graphs[7].ID != 7 || *two.Findings[len(two.Findings)-1].Graph < 4 {
		t.Errorf("Merge renumbering: %d graphs", len(two.Graphs))
	}
	if err := two.Validate(); err != nil {
		t.Error(err)
	}
	// LoadAll finds FILE.PID.json beside FILE.
	dir := t.TempDir()
	main := filepath.Join(dir, "map.json")
	if err := m.Write(filepath.Join(dir, "map.123.json")); err != nil {
		t.Fatal(err)
	}
	all, err := LoadAll(main)
	if err != nil || len(all.Graphs) != 4 {
		t.Fatalf("LoadAll of a child map alone: %v", err)
	}
	if _, err := LoadAll(filepath.Join(dir, "none.json")); err == nil {
		t.Error("no map at all should be an error")
	}
	dir2 := checkout(t, m, "stub_engine.py")
	want := []string{"stub_engine.Layer.__call__", "stub_engine.TinyModel.forward", "stub_engine.here", "stub_engine.mix", "stub_engine.mix.inner"}
	if got := Names(m.Captured(dir2)); !reflect.DeepEqual(got, want) {
		t.Errorf("captured %v, want %v", got, want)
	}
	var sb strings.Builder
	m.WriteText(&sb, dir2)
	if !strings.Contains(sb.String(), "4 graph(s)") || !strings.Contains(sb.String(), "CG101 [traced]") {
		t.Errorf("summary:\n%s", sb.String())
	}
}

// TestVersion1MapsStillRead: the committed maps are version 1 (no executed
// lines): they load, have no line coverage, and a version 2 map's ranges
// expand to their lines under the checkout.
func TestVersion1MapsStillRead(t *testing.T) {
	for _, f := range []string{"testdata/stub_engine.map.json", "testdata/cpu_engine.map.json"} {
		m, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if m.Version != 1 || m.HasLines() || m.Coverage(m.Cwd) != nil {
			t.Errorf("%s: version %d, lines %v", f, m.Version, m.HasLines())
		}
	}
	data := `{"schema": "capguard-capture-map", "version": 2, "cwd": "/trace/run", "tool": {"lines": "sys.monitoring"},
	  "graphs": [{"id": 0, "status": "captured", "lines": {"/trace/run/pkg/m.py": [[3, 5], [9, 9]], "/usr/lib/x.py": [[1, 2]]},
	              "prep_lines": {"/trace/run/pkg/m.py": [[20, 21]]}}]}`
	m, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	cov := m.Coverage("/here")
	p := filepath.Join("/here", "pkg", "m.py")
	if !m.HasLines() || !cov.Ran(Captured, p, 4, 4) || !cov.Ran(Captured, p, 9, 9) || cov.Ran(Captured, p, 6, 8) ||
		!cov.Ran(ReplayPrep, p, 21, 21) || cov.Ran(ReplayPrep, p, 3, 5) || len(cov.Captured) != 1 {
		t.Errorf("coverage %+v", cov)
	}
	bad := strings.Replace(data, "[[3, 5]", "[[5, 3]", 1)
	if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "bad range") {
		t.Errorf("a reversed range: %v", err)
	}
}
