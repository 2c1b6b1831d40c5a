package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/capguard/capguard/guard/capmap"
)

const traceTestdata = "../../templates/testdata/trace"

// interpreters returns the Python interpreters of this machine by version
// (3.10 and 3.11 take the setprofile path, 3.12+ sys.monitoring).
func interpreters(t *testing.T) map[string]string {
	out := map[string]string{}
	home, _ := os.UserHomeDir()
	for _, v := range []string{"3.10", "3.11", "3.12", "3.13"} {
		cands, _ := filepath.Glob(filepath.Join(home, ".pyenv", "versions", v+".*", "bin", "python3"))
		if p, err := exec.LookPath("python" + v); err == nil {
			cands = append(cands, p)
		}
		for _, p := range cands {
			if exec.Command(p, "-c", "pass").Run() == nil { // a pyenv shim may name a version it lacks
				out[v] = p
				break
			}
		}
	}
	if len(out) == 0 {
		t.Skip("no python3.10-3.13 on this machine")
	}
	return out
}

func TestTraceNeedsACommand(t *testing.T) {
	_, _, code, msg := runApp(t, "trace")
	if code != 2 || !strings.Contains(msg, "give the command") {
		t.Errorf("code %d msg %q", code, msg)
	}
}

func TestTraceExitStatus(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.json")
	_, stderr, code, _ := runApp(t, "trace", "--out", out, "--", "sh", "-c", "exit 3")
	if code != 3 || !strings.Contains(stderr, "no map was written") {
		t.Errorf("code %d, stderr %q: want the child's 3 and a note that nothing was traced", code, stderr)
	}
	_, _, code, _ = runApp(t, "trace", "--out", out, "--", "sh", "-c", "kill -TERM $$")
	if code != 128+15 {
		t.Errorf("killed by SIGTERM: code %d, want 143", code)
	}
}

// TestTraceStubTorch runs the stand-in engine on stand-in torch under every
// interpreter found: the user's PYTHONPATH and sitecustomize keep working,
// the child process's map is merged, the functions that ran under capture
// equal the engine's own record, a background thread's code is not
// recorded, and the host sync under capture is a finding on its line.
func TestTraceStubTorch(t *testing.T) {
	td, _ := filepath.Abs(traceTestdata)
	for v, py := range interpreters(t) {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			site := filepath.Join(dir, "site")
			os.Mkdir(site, 0o755)
			marker := filepath.Join(dir, "own-sitecustomize-ran")
			os.WriteFile(filepath.Join(site, "sitecustomize.py"), []byte("open("+pyStr(marker)+", 'w').close()\n"), 0o644)
			t.Setenv("PYTHONPATH", filepath.Join(td, "stubtorch")+string(os.PathListSeparator)+site)
			rec := filepath.Join(dir, "record")
			t.Setenv("STUB_RECORD", rec)
			out := filepath.Join(dir, "map.json")
			wd, _ := os.Getwd()
			os.Chdir(td)
			_, stderr, code, msg := runApp(t, "trace", "--out", out, "--", py, "stub_engine.py", "--sync")
			os.Chdir(wd)
			if code != 0 {
				t.Fatalf("code %d %s\n%s", code, msg, stderr)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Error("the program's own sitecustomize did not run")
			}
			m, err := capmap.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Processes) != 2 || len(m.Graphs) != 4 {
				t.Fatalf("processes %v graphs %d: want parent and child, 2 graphs each", m.Processes, len(m.Graphs))
			}
			if kids, _ := capmap.ChildFiles(out); len(kids) != 0 {
				t.Errorf("child maps left after merging: %v", kids)
			}
			if m.TracerErrorCount != 0 {
				t.Errorf("tracer errors: %v", m.TracerErrors)
			}
			want := readLines(t, rec)
			for _, f := range [][]capmap.Graph{m.Graphs[:2], m.Graphs[2:]} {
				got := map[string]bool{}
				for _, g := range f {
					for _, fn := range g.Functions {
						if fn.Qual == "noise" || fn.Qual == "busy" {
							t.Errorf("graph %d recorded %s from another thread", g.ID, fn.Qual)
						}
						got[capmap.NormQual(fn.Qual)] = true
					}
				}
				delete(got, "here") // the record's own helper
				var names []string
				for n := range got {
					names = append(names, n)
				}
				sort.Strings(names)
				if v >= "3.11" && strings.Join(names, " ") != strings.Join(want, " ") {
					t.Errorf("map %v, record %v", names, want)
				}
			}
			if g := m.Graphs[0]; g.API != "torch.cuda.graph" || g.Site == nil || g.Site.Qual != "Runner.capture_with" && v >= "3.11" {
				t.Errorf("graph 0: api %q site %+v", g.API, g.Site)
			}
			sync := lineOf(t, filepath.Join(td, "stub_engine.py"), "PLANT-SYNC")
			found := false
			for _, f := range m.Findings {
				found = found || f.Rule == "CG101" && f.Line == sync
			}
			if !found {
				t.Errorf("no CG101 at line %d: %+v", sync, m.Findings)
			}
			if !strings.Contains(stderr, "graph(s) captured") {
				t.Errorf("no summary on stderr: %s", stderr)
			}
		})
	}
}

// TestTraceCPUTorch runs the CPU engine on real (CPU) torch: the dispatch
// mode sees the captured ops' inputs, the replay checks find the freed
// input and the rebound one (with its holder), the in-place write makes
// replay-prep, and `.item()` under capture is a finding on its line.
func TestTraceCPUTorch(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import torch.utils._python_dispatch").Run(); err != nil {
		t.Skip("no CPU torch at /usr/bin/python3")
	}
	td, _ := filepath.Abs(traceTestdata)
	out := filepath.Join(t.TempDir(), "map.json")
	t.Setenv("CAPGUARD_TRACE_DEVICE_TYPES", "cpu")
	_, stderr, code, msg := runApp(t, "trace", "--out", out, "--", py, filepath.Join(td, "cpu_engine.py"), "--sync")
	if code != 0 {
		t.Fatalf("code %d %s\n%s", code, msg, stderr)
	}
	m, err := capmap.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.TracerErrorCount != 0 {
		t.Errorf("tracer errors: %v", m.TracerErrors)
	}
	src := filepath.Join(td, "cpu_engine.py")
	kinds := map[string]capmap.Finding{}
	for _, f := range m.Findings {
		kinds[f.Kind] = f
	}
	if f := kinds["rebound"]; f.Rule != "CG201" || f.Holder != "Backend.block_table" {
		t.Errorf("rebind: %+v", f)
	}
	if f := kinds["freed"]; f.Rule != "CG301" {
		t.Errorf("freed: %+v", f)
	}
	if f := kinds["host-sync"]; f.Line != lineOf(t, src, "PLANT-SYNC") {
		t.Errorf("sync: %+v", f)
	}
	prep := m.ReplayPrep(td)
	if len(prep) != 1 || prep[0].Qual != "Backend.prepare_replay" {
		t.Fatalf("replay-prep %+v", prep)
	}
	if w := prep[0].Writes; len(w) == 0 || w[0].Line != lineOf(t, src, "PLANT-PREP") {
		t.Errorf("replay-prep writes %+v", w)
	}
	// check --capture-map: the rebind, in a function static analysis alone
	// does not put in replay-prep, is found with the map.
	stdout, _, _, _ := runApp(t, "check", src)
	if strings.Contains(stdout, "CG201") {
		t.Fatalf("static analysis alone already finds the rebind:\n%s", stdout)
	}
	stdout, stderr, _, _ = runApp(t, "check", "--capture-map", out, src)
	if !strings.Contains(stdout, "CG201") || !strings.Contains(stdout, "traced:") {
		t.Errorf("check --capture-map:\n%s\n%s", stdout, stderr)
	}
}

func TestCheckCaptureMapStale(t *testing.T) {
	// The committed map names functions of cpu_engine.py; a checkout where
	// combine is gone lists it as stale.
	m, err := capmap.Load("../../guard/capmap/testdata/cpu_engine.map.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, _ := os.ReadFile(filepath.Join(traceTestdata, "cpu_engine.py"))
	data = []byte(strings.Replace(string(data), "def combine(", "def combined(", 1))
	os.WriteFile(filepath.Join(dir, "cpu_engine.py"), data, 0o644)
	mp := filepath.Join(dir, "map.json")
	m.Write(mp)
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	_, stderr, _, _ := runApp(t, "check", "--capture-map", mp, "cpu_engine.py")
	if !strings.Contains(stderr, "stale") || !strings.Contains(stderr, "cpu_engine.combine") {
		t.Errorf("stale names not reported:\n%s", stderr)
	}
	_, _, code, msg := runApp(t, "check", "--capture-map", filepath.Join(dir, "nope.json"), "cpu_engine.py")
	if code != 2 || !strings.Contains(msg, "capture-map") {
		t.Errorf("missing map: code %d %q", code, msg)
	}
}

func pyStr(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func readLines(t *testing.T, p string) []string {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		out = append(out, strings.ReplaceAll(l, ".<locals>", ""))
	}
	sort.Strings(out)
	return out
}

func lineOf(t *testing.T, path, marker string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "# "+marker) {
			return i + 1
		}
	}
	t.Fatalf("%s: no %s", path, marker)
	return 0
}
