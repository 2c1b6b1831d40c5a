package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/capmap"
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
	py := cpuTorch(t)
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

// TestCaptureMapFromAnotherFolder: a capture map's paths are read against
// the folder the traced run's working directory stands for, not the
// working directory of check: checked from another folder, the map's
// findings named files under that folder (which do not exist) at column 1,
// and its roots matched no file by path. Both runs must give the same
// findings, traced ones included, in the same files.
func TestCaptureMapFromAnotherFolder(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(traceTestdata, "cpu_engine.py"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cpu_engine.py", data)
	m, err := capmap.Load("../../guard/capmap/testdata/cpu_engine.map.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(filepath.Join(dir, "map.json")); err != nil {
		t.Fatal(err)
	}
	type finding struct {
		Rule, Path, Message string
		Line, Column        int
	}
	findings := func(stdout string, base string) []finding {
		var out struct{ Findings []finding }
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%v:\n%s", err, stdout)
		}
		for i := range out.Findings {
			if !filepath.IsAbs(out.Findings[i].Path) {
				out.Findings[i].Path = filepath.Join(base, out.Findings[i].Path)
			}
		}
		return out.Findings
	}
	args := []string{"check", "--no-cache", "--exit-zero", "--output-format", "json", "--capture-map"}
	stdout, stderr, _, _ := runApp(t, append(args, filepath.Join(dir, "map.json"), filepath.Join(dir, "cpu_engine.py"))...)
	wd, _ := os.Getwd()
	elsewhere := findings(stdout, wd)
	os.Chdir(dir)
	defer os.Chdir(wd)
	stdout, _, _, _ = runApp(t, append(args, "map.json", "cpu_engine.py")...)
	here := findings(stdout, dir)
	traced := 0
	for _, f := range here {
		if strings.HasPrefix(f.Message, "traced:") {
			traced++
		}
	}
	if traced < 3 {
		t.Fatalf("the run in the folder has %d traced findings, want 3 or more: %+v", traced, here)
	}
	if !reflect.DeepEqual(elsewhere, here) {
		t.Errorf("checked from another folder:\n%+v\nin the folder:\n%+v\n%s", elsewhere, here, stderr)
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

func cpuTorch(t *testing.T) string {
	t.Helper()
	py := "/usr/bin/python3"
	if p := os.Getenv("CAPGUARD_TEST_TORCH_PYTHON"); p != "" { // a python3 with torch elsewhere (the GPU machine's)
		py = p
	}
	if err := exec.Command(py, "-c", "import torch.utils._python_dispatch").Run(); err != nil {
		t.Skip("no CPU torch at " + py)
	}
	return py
}

// TestTraceHostReads: values read from CPU tensor data while the stream
// captures are CG102 findings on their lines, each way of reading (int,
// float, bool, .item(), .tolist(), .numpy()), with the value read and, where
// a Triton launch under the capture takes it, the kernel and argument; a
// value read before the capture that a launch under it takes is a
// host-value-arg finding (but not a 0 or 1). The replay wrapper is on only
// for the first --prep-replays replays of each graph, and with 0 never.
func TestTraceHostReads(t *testing.T) {
	py := cpuTorch(t)
	td, _ := filepath.Abs(traceTestdata)
	src := filepath.Join(td, "host_engine.py")
	dir := t.TempDir()
	out := filepath.Join(dir, "map.json")
	rec := filepath.Join(dir, "rec.json")
	t.Setenv("CAPGUARD_TRACE_DEVICE_TYPES", "meta") // CPU tensors are host tensors
	t.Setenv("PYTHONPATH", filepath.Join(td, "stubtriton"))
	t.Setenv("HOST_RECORD", rec)
	_, stderr, code, msg := runApp(t, "trace", "--out", out, "--", py, src)
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
	byLine := map[int]capmap.Finding{}
	for _, f := range m.Findings {
		byLine[f.Line] = f
	}
	for marker, want := range map[string]string{"PLANT-INT": "9", "PLANT-FLOAT": "0.75", "PLANT-BOOL": "1", "PLANT-ITEM": "3", "PLANT-TOLIST": "3 9 4", "PLANT-NUMPY": "3 9 4"} {
		f, ok := byLine[lineOf(t, src, marker)]
		var vals []string
		for _, v := range f.Values {
			vals = append(vals, v.String())
		}
		if !ok || f.Rule != "CG102" || f.Kind != "host-value" || strings.Join(vals, " ") != want || f.Graph == nil || *f.Graph != 0 {
			t.Errorf("%s: %+v, want CG102 host-value of graph 0 with values %s", marker, f, want)
		}
	}
	if f := byLine[lineOf(t, src, "PLANT-INT")]; f.Kernel != "_kernel" || f.Argument != "max_len" || f.Launch == nil || f.Launch.Line != lineOf(t, src, "LAUNCH-0") {
		t.Errorf("int() read under capture not linked to the launch: %+v", f)
	}
	if f := byLine[lineOf(t, src, "PLANT-PRE")]; f.Rule != "CG102" || f.Kind != "host-value-arg" || f.Argument != "max_len" || f.Graph == nil || *f.Graph != 1 {
		t.Errorf("read before the capture: %+v", f)
	}
	if f, ok := byLine[lineOf(t, src, "PLANT-ONE")]; ok {
		t.Errorf("a read of 1 linked to a launch: %+v", f)
	}
	if len(m.Findings) != 7 {
		t.Errorf("%d findings, want 7: %+v", len(m.Findings), m.Findings)
	}
	if g := m.Graphs[1]; len(g.HostReads) != 2 || g.HostReads[0].When != "before" || len(g.LaunchArgs) != 1 || len(g.LaunchArgs[0].Args) != 3 {
		t.Errorf("graph 1: reads %+v launches %+v", g.HostReads, g.LaunchArgs)
	}
	for _, g := range m.Graphs {
		if g.Replays != 3 || g.ReplaysChecked != 3 {
			t.Errorf("graph %d: %d replays seen, %d checked; want 3 of the 5 (then the original replay)", g.ID, g.Replays, g.ReplaysChecked)
		}
	}
	if got := string(readFile(t, rec)); got != `{"wrapped_before_replays": true, "original_after": true}` {
		t.Errorf("replay hook: %s", got)
	}
	_, stderr, code, _ = runApp(t, "trace", "--prep-replays", "0", "--out", out, "--", py, src)
	if code != 0 {
		t.Fatal(stderr)
	}
	if got := string(readFile(t, rec)); got != `{"wrapped_before_replays": false, "original_after": true}` {
		t.Errorf("--prep-replays 0: replay hook %s, want never wrapped", got)
	}
}

// TestTracerTorch2Ops: torch 2.x shows a dispatch mode `item` and
// `is_nonzero` for a host read (torch 1.x only `_local_scalar_dense`); the
// first GPU run (torch 2.11) missed the planted int() for that reason.
func TestTracerTorch2Ops(t *testing.T) {
	py := cpuTorch(t)
	td, _ := filepath.Abs(traceTestdata)
	src := filepath.Join(td, "torch2_ops.py")
	cmd := exec.Command(py, src)
	cmd.Env = append(os.Environ(), "CAPGUARD_TRACE_OUT="+filepath.Join(t.TempDir(), "m.json"), "CAPGUARD_TRACE_DEVICE_TYPES=meta",
		"PYTHONPATH="+filepath.Join(td, "..", "..", "trace"))
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, outb)
	}
	var res struct {
		Findings []struct {
			Rule, Kind, Op string
			Line           int
			Values         []float64
		}
		Errors []string
	}
	if err := json.Unmarshal(outb, &res); err != nil {
		t.Fatalf("%v: %s", err, outb)
	}
	want := map[int]string{lineOf(t, src, "ITEM-OP"): "item.default 7", lineOf(t, src, "NONZERO-OP"): "is_nonzero.default 1"}
	for _, f := range res.Findings {
		if w, ok := want[f.Line]; ok && f.Rule == "CG102" && len(f.Values) == 1 && w == fmt.Sprintf("%s %g", f.Op, f.Values[0]) {
			delete(want, f.Line)
		}
	}
	if len(want) != 0 || len(res.Errors) != 0 {
		t.Errorf("missing %v; findings %+v errors %v", want, res.Findings, res.Errors)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTraceFunctionDryRun: `capguard trace file.py:fn --inputs spec.toml
// --dry-run` runs verify's harness on the CPU with the tracer hooked into its
// stand-in graph: one map per batch size merged, the target under capture,
// the host read in it on its line, the replay-prep's rebinding of the
// metadata the target reads (CG201, holder Meta.sl).
func TestTraceFunctionDryRun(t *testing.T) {
	py := cpuTorch(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "r.py")
	os.WriteFile(src, []byte(`import torch

class Meta:
    pass

META = Meta()
META.sl = torch.zeros(1, dtype=torch.int32)

def prepare(seq_lens):
    META.sl = seq_lens.to(torch.int32)

def reader(q, seq_lens, seq_lens_cpu):
    L = int(seq_lens_cpu.max())  # HOST-READ
    return q.float() * 2 + META.sl[:, None, None].float() + L
`), 0o644)
	os.WriteFile(filepath.Join(dir, "r.toml"), []byte(`
[[arg]]
name = "q"
shape = ["B", 1, 8]
dtype = "float32"

[[arg]]
name = "seq_lens"
shape = ["B"]
dtype = "int64"
init = "randint 1..64"

[[arg]]
name = "seq_lens_cpu"
role = "mirror"
mirror_of = "seq_lens"

[prep]
call = "prepare"
args = ["seq_lens"]
`), 0o644)
	out := filepath.Join(dir, "map.json")
	_, stderr, code, msg := runApp(t, "trace", "--out", out, "--python", py, "--batch-sizes", "1,4", "--replays", "4", "--dry-run",
		"--inputs", filepath.Join(dir, "r.toml"), src+":reader")
	if code != 0 {
		t.Fatalf("code %d %s\n%s", code, msg, stderr)
	}
	m, err := capmap.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Graphs) != 2 || len(m.Processes) != 2 || m.TracerErrorCount != 0 {
		t.Fatalf("graphs %d processes %v errors %v: want one graph per batch size, one process each", len(m.Graphs), m.Processes, m.TracerErrors)
	}
	for _, g := range m.Graphs {
		names := map[string]bool{}
		for _, f := range g.Functions {
			names[f.Qual] = true
		}
		if !names["reader"] || g.Status != "captured" || g.Replays != 3 {
			t.Errorf("graph %d: %s, %d replays seen, functions %v", g.ID, g.Status, g.Replays, names)
		}
	}
	var read, rebound bool
	for _, f := range m.Findings {
		read = read || f.Rule == "CG101" && f.Line == lineOf(t, src, "HOST-READ") && len(f.Values) == 1
		rebound = rebound || f.Rule == "CG201" && f.Holder == "Meta.sl"
	}
	if !read || !rebound {
		t.Errorf("host read %v, rebound %v: %+v", read, rebound, m.Findings)
	}
	_, _, code, msg = runApp(t, "trace", "--dry-run", "--", "true")
	if code != 2 || !strings.Contains(msg, "--dry-run goes with") {
		t.Errorf("--dry-run with a command: code %d %q", code, msg)
	}
}

// TestTraceNeverChangesTheProgram runs state_engine.py (an engine in
// SGLang's style on the stand-in torch, whose dispatcher keeps the thread's
// dispatch keys as c10 does and whose torch.inference_mode saves and
// restores them) under every interpreter found, traced and untraced, in each
// variant. The traced program's output equals the untraced one's (the
// factory calls without a tensor argument between replays after the tracer
// unhooked run: the tracer of c611929 died there with PyTorch's "Hit Python
// dispatch key but no arguments had PyInterpreter"), with the program's own
// dispatch and function modes around regions and a thread making tensors;
// and the map has the variant's runtime findings at their lines: a stale
// tail (CG203), state stored under capture (CG201), bincount (CG104), and
// for a capture ended inside the program's own inference-mode region, the
// dispatch-state check's loud error with the state restored.
func TestTraceNeverChangesTheProgram(t *testing.T) {
	td, _ := filepath.Abs(traceTestdata)
	src := filepath.Join(td, "state_engine.py")
	type want struct {
		rule, kind, marker string
		min                int
	}
	variants := map[string][]want{
		"clean":    nil,
		"stale":    {{"CG203", "stale-tail", "PLANT-STALE", 1}},
		"stored":   {{"CG201", "stored-under-capture", "PLANT-STORED", 1}},
		"bincount": {{"CG104", "dynamic-shape", "PLANT-BINCOUNT", 1}},
		"straddle": nil,
		"compile":  nil,
	}
	for v, py := range interpreters(t) {
		for variant, wants := range variants {
			t.Run(v+"/"+variant, func(t *testing.T) {
				dir := t.TempDir()
				t.Setenv("PYTHONPATH", filepath.Join(td, "stubtorch"))
				args := []string{"state_engine.py"}
				if variant != "clean" {
					args = append(args, "--"+variant)
				}
				plain := filepath.Join(dir, "plain.txt")
				cmd := exec.Command(py, args...)
				cmd.Dir = td
				cmd.Env = append(os.Environ(), "STATE_OUT="+plain)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("untraced: %v\n%s", err, out)
				}
				traced := filepath.Join(dir, "traced.txt")
				t.Setenv("STATE_OUT", traced)
				out := filepath.Join(dir, "map.json")
				wd, _ := os.Getwd()
				os.Chdir(td)
				_, stderr, code, msg := runApp(t, append([]string{"trace", "--out", out, "--", py}, args...)...)
				os.Chdir(wd)
				if code != 0 {
					t.Fatalf("traced program failed: code %d %s\n%s", code, msg, stderr)
				}
				if a, b := string(readFile(t, plain)), string(readFile(t, traced)); a != b || !strings.Contains(a, "engine done True True") {
					t.Fatalf("the tracer changed the program's output:\nuntraced:\n%s\ntraced:\n%s", a, b)
				}
				m, err := capmap.Load(out)
				if err != nil {
					t.Fatal(err)
				}
				if m.Version != capmap.Version {
					t.Errorf("version %d, want %d", m.Version, capmap.Version)
				}
				if variant == "bincount" {
					for _, g := range m.Graphs {
						if g.Status != "capture-error" {
							t.Errorf("graph %d: status %q, want capture-error (the program saw the capture fail)", g.ID, g.Status)
						}
					}
				}
				if variant == "straddle" {
					if m.TracerErrorCount != 1 || !strings.Contains(strings.Join(m.TracerErrors, " "), "Python dispatch key set with 0 dispatch mode(s) on the stack") ||
						!strings.Contains(m.TracerErrors[0], "restored") {
						t.Errorf("straddle: want one loud dispatch-state error, restored: %v", m.TracerErrors)
					}
				} else if m.TracerErrorCount != 0 {
					t.Errorf("tracer errors: %v", m.TracerErrors)
				}
				got := map[string]int{}
				for _, f := range m.Findings {
					got[f.Rule+" "+f.Kind+" "+strconv.Itoa(f.Line)]++
				}
				n := 0
				for _, w := range wants {
					key := w.rule + " " + w.kind + " " + strconv.Itoa(lineOf(t, src, w.marker))
					if got[key] < w.min {
						t.Errorf("no %s: %v", key, got)
					}
					n += got[key]
				}
				if n != len(m.Findings) {
					t.Errorf("findings beyond the plant's: %v", got)
				}
				for _, f := range m.Findings {
					switch f.Kind {
					case "stale-tail":
						if f.Sizes == nil || f.Sizes.Stale[0] >= f.Sizes.Stale[1] || f.Sizes.Read[1] <= f.Sizes.Written[1] || f.Sizes.Earlier <= f.Sizes.Written[1] {
							t.Errorf("stale-tail sizes %+v", f.Sizes)
						}
					case "stored-under-capture":
						if len(f.BoundBy) != 2 || f.Reader == nil || f.Reader.Line != lineOf(t, src, "READ-STORED") {
							t.Errorf("stored: bound by %v, reader %+v", f.BoundBy, f.Reader)
						}
					}
				}
			})
		}
	}
}

// TestTraceLines: the lines executed under capture, per graph, on every
// interpreter (sys.monitoring LINE from 3.12, settrace before): the capture
// site's body and the captured functions' executed lines, not a line of a
// branch the capture did not take, nor code run by another thread.
func TestTraceLines(t *testing.T) {
	td, _ := filepath.Abs(traceTestdata)
	src := filepath.Join(td, "state_engine.py")
	for v, py := range interpreters(t) {
		t.Run(v, func(t *testing.T) {
			t.Setenv("PYTHONPATH", filepath.Join(td, "stubtorch"))
			t.Setenv("STATE_OUT", "")
			out := filepath.Join(t.TempDir(), "map.json")
			wd, _ := os.Getwd()
			os.Chdir(td)
			_, stderr, code, msg := runApp(t, "trace", "--out", out, "--", py, "state_engine.py", "--stored")
			os.Chdir(wd)
			if code != 0 {
				t.Fatalf("code %d %s\n%s", code, msg, stderr)
			}
			m, err := capmap.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			g := m.Graphs[0]
			ran := func(line int) bool {
				for _, r := range g.Lines[src] {
					if r[0] <= line && line <= r[1] {
						return true
					}
				}
				return false
			}
			for _, mk := range []string{"PLANT-STORED", "CAPTURE-SITE", "CAPTURE-META"} {
				if l := lineOf(t, src, mk); !ran(l) {
					t.Errorf("line %d (%s) not recorded: %v", l, mk, g.Lines)
				}
			}
			for _, mk := range []string{"PLANT-BINCOUNT", "NOT-CAPTURED", "BACKGROUND"} {
				if l := lineOf(t, src, mk); ran(l) {
					t.Errorf("line %d (%s) recorded: %v", l, mk, g.Lines)
				}
			}
			if m.Tool.Lines == nil || (v >= "3.12") != (*m.Tool.Lines == "sys.monitoring") {
				t.Errorf("lines recorded by %v on %s", m.Tool.Lines, v)
			}
			if len(g.PrepLines[src]) == 0 {
				t.Error("no replay-prep lines")
			}
			for path := range g.Lines {
				if path != src {
					t.Errorf("lines of %s recorded (not the program's)", path)
				}
			}
		})
	}
}

// TestCheckCaptureMapCoverage: cover_engine.py traced on the stand-in torch,
// then checked with its map. Of three static host reads in captured code (one
// under a setting, statically a warning),
// the one on a line the capture executed is proved (resolution traced,
// "ran under capture"), the one under an `if` the capture never took is a
// warning naming the `if`, the one in a function the capture never entered
// is a warning saying so; --coverage-required drops the last two; a version
// 1 map (no lines) changes none of them; graph shows the share of lines run.
func TestCheckCaptureMapCoverage(t *testing.T) {
	td, _ := filepath.Abs(traceTestdata)
	src := filepath.Join(td, "cover_engine.py")
	var py string
	for _, p := range interpreters(t) {
		py = p
		break
	}
	t.Setenv("PYTHONPATH", filepath.Join(td, "stubtorch"))
	dir := t.TempDir()
	out := filepath.Join(dir, "map.json")
	wd, _ := os.Getwd()
	os.Chdir(td)
	defer os.Chdir(wd)
	if _, stderr, code, msg := runApp(t, "trace", "--out", out, "--", py, "cover_engine.py"); code != 0 {
		t.Fatalf("trace: code %d %s\n%s", code, msg, stderr)
	}
	type finding struct {
		Line       int
		Severity   string
		Resolution string
		Message    string
	}
	check := func(args ...string) map[int]finding {
		stdout, stderr, _, _ := runApp(t, append([]string{"check", "--format", "json", "--no-cache"}, append(args, "cover_engine.py")...)...)
		var res struct{ Findings []finding }
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("%v: %s\n%s", err, stdout, stderr)
		}
		got := map[int]finding{}
		for _, f := range res.Findings {
			if !strings.HasPrefix(f.Message, "traced:") { // the static ones
				got[f.Line] = f
			}
		}
		return got
	}
	ran, branch, never := lineOf(t, src, "COVER-RAN"), lineOf(t, src, "COVER-BRANCH"), lineOf(t, src, "COVER-NEVER")
	static := check()
	// COVER-NEVER sits under `if self.prefill_mode:`, a setting the analysis
	// does not decide: statically a warning that names it (contexts/branches.go).
	if len(static) != 3 || static[ran].Severity != "error" || static[never].Severity != "warning" || !strings.Contains(static[never].Message, "`self.prefill_mode` holds") {
		t.Fatalf("static findings: %+v", static)
	}
	got := check("--capture-map", out)
	if f := got[ran]; f.Severity != "error" || f.Resolution != "traced" || !strings.Contains(f.Message, "ran under capture in the traced run") {
		t.Errorf("executed line: %+v", f)
	}
	if f := got[branch]; f.Severity != "warning" || !strings.Contains(f.Message, "not executed under capture in the traced run: under `if adapter is not None`") {
		t.Errorf("untaken branch: %+v", f)
	}
	if f := got[never]; f.Severity != "warning" || !strings.Contains(f.Message, "the traced run never ran `Model.prefill` under capture") {
		t.Errorf("function never entered: %+v", f)
	}
	req := check("--capture-map", out, "--coverage-required")
	if _, ok := req[ran]; !ok || len(req) != 1 {
		t.Errorf("--coverage-required kept %+v, want only line %d", req, ran)
	}
	// The same map as version 1 (no lines): the static findings as they were.
	m, err := capmap.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	m.Version, m.Tool.Lines = 1, nil
	for i := range m.Graphs {
		m.Graphs[i].Lines, m.Graphs[i].PrepLines = nil, nil
	}
	old := filepath.Join(dir, "v1.json")
	if err := m.Write(old); err != nil {
		t.Fatal(err)
	}
	for line, f := range check("--capture-map", old) {
		if strings.Contains(f.Message, "traced run") || f.Severity != static[line].Severity {
			t.Errorf("version 1 map changed line %d: %+v", line, f)
		}
	}
	stdout, _, _, _ := runApp(t, "graph", "--capture-map", out, "cover_engine.py")
	if !strings.Contains(stdout, "cover_engine.Model.forward [traced]") || !strings.Contains(stdout, "[lines run: ") {
		t.Errorf("graph shows no line share:\n%s", stdout)
	}
	// The same run with Model.forward called as torch.compile'd code: the
	// tracer sees it entered (compiled) and none of its lines, nor prefill,
	// which Dynamo would inline. Nothing in them is proved or demoted.
	m, err = capmap.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Graphs {
		for j := range m.Graphs[i].Functions {
			if m.Graphs[i].Functions[j].Qual == "Model.forward" {
				m.Graphs[i].Functions[j].Compiled = true
			}
		}
		delete(m.Graphs[i].Lines, src)
	}
	comp := filepath.Join(dir, "compiled.json")
	if err := m.Write(comp); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--capture-map", comp}, {"--capture-map", comp, "--coverage-required"}} {
		got := check(args...)
		for line, f := range static {
			if g, ok := got[line]; !ok || g.Severity != f.Severity || !strings.Contains(g.Message, "as torch.compile'd code") {
				t.Errorf("%v: line %d in compiled code: %+v (static %+v)", args, line, g, f)
			}
		}
	}
}

// TestTraceCaptureOpsOff: --capture-ops=false pushes no dispatch mode under
// capture (for programs that call torch.compile'd code there): no op is
// seen (no CG104 for the bincount, no inputs), the failed captures are still
// capture errors, and the map says the ops were not watched.
func TestTraceCaptureOpsOff(t *testing.T) {
	td, _ := filepath.Abs(traceTestdata)
	var py string
	for _, p := range interpreters(t) {
		py = p
		break
	}
	t.Setenv("PYTHONPATH", filepath.Join(td, "stubtorch"))
	t.Setenv("STATE_OUT", "")
	out := filepath.Join(t.TempDir(), "map.json")
	wd, _ := os.Getwd()
	os.Chdir(td)
	_, stderr, code, msg := runApp(t, "trace", "--capture-ops=false", "--out", out, "--", py, "state_engine.py", "--bincount")
	os.Chdir(wd)
	if code != 0 {
		t.Fatalf("code %d %s\n%s", code, msg, stderr)
	}
	m, err := capmap.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tool.CaptureOps == nil || *m.Tool.CaptureOps {
		t.Errorf("tool.capture_ops %v, want false", m.Tool.CaptureOps)
	}
	for _, g := range m.Graphs {
		if g.Ops != 0 || len(g.Inputs) != 0 || g.Status != "capture-error" || len(g.Functions) == 0 {
			t.Errorf("graph %d: ops %d inputs %d status %s functions %d", g.ID, g.Ops, len(g.Inputs), g.Status, len(g.Functions))
		}
	}
	for _, f := range m.Findings {
		if f.Rule != "CG101" || f.Kind != "capture-error" {
			t.Errorf("finding %s %s without the ops watched", f.Rule, f.Kind)
		}
	}
}

// TestTraceDispatchStateRealTorch: dispatch_engine.py on real (CPU) torch,
// traced and untraced: the same output, a factory call without a tensor
// argument after every inference-mode step (past the unhook) works, and no
// mode is left on either stack (the tracer of c611929 died there with
// PyTorch's "Hit Python dispatch key but no arguments had PyInterpreter").
func TestTraceDispatchStateRealTorch(t *testing.T) {
	py := cpuTorch(t)
	td, _ := filepath.Abs(traceTestdata)
	src := filepath.Join(td, "dispatch_engine.py")
	dir := t.TempDir()
	plain, traced := filepath.Join(dir, "plain.txt"), filepath.Join(dir, "traced.txt")
	cmd := exec.Command(py, src)
	cmd.Env = append(os.Environ(), "DISPATCH_OUT="+plain)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("untraced: %v\n%s", err, out)
	}
	t.Setenv("CAPGUARD_TRACE_DEVICE_TYPES", "cpu")
	t.Setenv("DISPATCH_OUT", traced)
	out := filepath.Join(dir, "map.json")
	_, stderr, code, msg := runApp(t, "trace", "--alloc-stacks=false", "--out", out, "--", py, src)
	if code != 0 {
		t.Fatalf("traced program failed: code %d %s\n%s", code, msg, stderr)
	}
	a, b := string(readFile(t, plain)), string(readFile(t, traced))
	if a != b || !strings.Contains(b, "state 0 0 ") {
		t.Fatalf("the tracer changed the program:\nuntraced %s\ntraced %s", a, b)
	}
	m, err := capmap.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.TracerErrorCount != 0 || len(m.Graphs) != 2 || m.Graphs[0].ReplaysChecked == 0 {
		t.Errorf("tracer errors %v, graphs %d", m.TracerErrors, len(m.Graphs))
	}
	got := map[string]bool{}
	for _, f := range m.Findings {
		got[fmt.Sprintf("%s %s %d", f.Rule, f.Kind, f.Line)] = true
	}
	for _, w := range []string{
		fmt.Sprintf("CG203 stale-tail %d", lineOf(t, src, "PREP-COPY")),
		fmt.Sprintf("CG201 stored-under-capture %d", lineOf(t, src, "STORED")),
	} {
		if !got[w] {
			t.Errorf("no %s: %v", w, got)
		}
	}
	if len(got) != 2 {
		t.Errorf("findings %v, want the two", got)
	}
}

// TestTraceCompiledCallsRealTorch: compile_engine.py on real (CPU) torch
// with torch.compile, traced and untraced: Dynamo compiles exactly as many
// graphs traced as untraced (a mode of the tracer's on the stack while a
// compiled call runs fails the guards of the entry the program compiled
// without it: the warm-up in a replay-prep window and the capture recompiled,
// and on the H200 nano-vllm's capture failed inside Inductor), the outputs
// are the same, no mode is left, and the map records the compiled function
// under capture as compiled, without its lines.
func TestTraceCompiledCallsRealTorch(t *testing.T) {
	py := cpuTorch(t)
	td, _ := filepath.Abs(traceTestdata)
	src := filepath.Join(td, "compile_engine.py")
	dir := t.TempDir()
	type result struct {
		Skip         string
		Outputs      [][]float64
		UniqueGraphs int `json:"unique_graphs"`
		FramesOK     int `json:"frames_ok"`
		State        []any
	}
	read := func(p string) result {
		var r result
		if err := json.Unmarshal(readFile(t, p), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	plainOut, tracedOut := filepath.Join(dir, "plain.json"), filepath.Join(dir, "traced.json")
	gen := filepath.Join(dir, "inductor")
	t.Setenv("TORCHINDUCTOR_CACHE_DIR", gen) // the engine imports a module written there, as Inductor does
	cmd := exec.Command(py, src)
	cmd.Env = append(os.Environ(), "COMPILE_OUT="+plainOut)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("untraced: %v\n%s", err, out)
	}
	plain := read(plainOut)
	if plain.Skip != "" {
		t.Skip(plain.Skip)
	}
	t.Setenv("CAPGUARD_TRACE_DEVICE_TYPES", "cpu")
	t.Setenv("COMPILE_OUT", tracedOut)
	out := filepath.Join(dir, "map.json")
	_, stderr, code, msg := runApp(t, "trace", "--alloc-stacks=false", "--out", out, "--", py, src)
	if code != 0 {
		t.Fatalf("traced program failed: code %d %s\n%s", code, msg, stderr)
	}
	traced := read(tracedOut)
	if plain.UniqueGraphs == 0 || traced.UniqueGraphs != plain.UniqueGraphs || traced.FramesOK != plain.FramesOK {
		t.Errorf("Dynamo compiled %d graphs (%d frames) traced, %d (%d) untraced: the tracer made the program recompile",
			traced.UniqueGraphs, traced.FramesOK, plain.UniqueGraphs, plain.FramesOK)
	}
	if fmt.Sprint(traced.Outputs) != fmt.Sprint(plain.Outputs) || fmt.Sprint(traced.State) != fmt.Sprint(plain.State) {
		t.Errorf("outputs or state differ:\nuntraced %v %v\ntraced %v %v", plain.Outputs, plain.State, traced.Outputs, traced.State)
	}
	m, err := capmap.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.TracerErrorCount != 0 || len(m.Graphs) != 3 {
		t.Fatalf("tracer errors %v, graphs %d", m.TracerErrors, len(m.Graphs))
	}
	if m.Tool.CompiledCalls == nil || *m.Tool.CompiledCalls != "modes off in compiled calls" || m.Tool.CompiledCallsHidden == 0 {
		t.Errorf("compiled calls %v, hidden %d", m.Tool.CompiledCalls, m.Tool.CompiledCallsHidden)
	}
	body, call := lineOf(t, src, "COMPILED-BODY"), lineOf(t, src, "CALLS-COMPILED")
	for _, g := range m.Graphs {
		ran := func(l int) bool {
			for _, r := range g.Lines[src] {
				if r[0] <= l && l <= r[1] {
					return true
				}
			}
			return false
		}
		if !ran(call) || ran(body) {
			t.Errorf("graph %d: the call's line ran %v (want true), the compiled body's %v (want false)", g.ID, ran(call), ran(body))
		}
		for _, f := range g.Functions {
			if f.Qual == "rms_norm" && !f.Compiled {
				t.Errorf("graph %d: rms_norm recorded as run by Python, not compiled", g.ID)
			}
			if f.Qual == "TinyModel.forward" && f.Compiled {
				t.Errorf("graph %d: TinyModel.forward recorded as compiled", g.ID)
			}
			if strings.HasPrefix(f.Path, gen) {
				t.Errorf("graph %d: generated code recorded as the program's: %s %s", g.ID, f.Path, f.Qual)
			}
		}
	}
}

// TestTraceCompiledCallsStandIn: the same as TestTraceCompiledCallsRealTorch
// on any torch with mode stacks, through a stand-in of Dynamo's compile
// context whose guards are Dynamo's ingredients (the function-mode stack,
// the dispatch stack and Python key, the shape): every compiled call sees the
// state it sees untraced (the warm-up inside the replay-prep window, the call
// under capture, the call in replay prep), so nothing "recompiles"; the
// stand-in of torch.set_default_device's mode keeps the bottom of the stack
// (its second call, inside the window, raised with the tracer's mode under
// it); the function entered inside the compiled call is recorded as compiled;
// the tracer's code is handed to Dynamo's skip_code.
func TestTraceCompiledCallsStandIn(t *testing.T) {
	py := cpuTorch(t)
	td, _ := filepath.Abs(traceTestdata)
	src := filepath.Join(td, "standin_compile_engine.py")
	dir := t.TempDir()
	type result struct {
		Outputs  []float64
		Compiles int
		Seen     [][]any
		State    []any
		Skipped  []string
	}
	read := func(p string) result {
		var r result
		if err := json.Unmarshal(readFile(t, p), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	plainOut, tracedOut := filepath.Join(dir, "plain.json"), filepath.Join(dir, "traced.json")
	cmd := exec.Command(py, src)
	cmd.Env = append(os.Environ(), "COMPILE_OUT="+plainOut)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("untraced: %v\n%s", err, out)
	}
	plain := read(plainOut)
	t.Setenv("CAPGUARD_TRACE_DEVICE_TYPES", "cpu")
	t.Setenv("COMPILE_OUT", tracedOut)
	out := filepath.Join(dir, "map.json")
	_, stderr, code, msg := runApp(t, "trace", "--alloc-stacks=false", "--out", out, "--", py, src)
	if code != 0 {
		t.Fatalf("traced program failed: code %d %s\n%s", code, msg, stderr)
	}
	traced := read(tracedOut)
	if plain.Compiles != 3 || traced.Compiles != plain.Compiles || fmt.Sprint(traced.Seen) != fmt.Sprint(plain.Seen) {
		t.Errorf("compiled calls saw another state traced: %d compiles (untraced %d)\ntraced %v\nuntraced %v",
			traced.Compiles, plain.Compiles, traced.Seen, plain.Seen)
	}
	if fmt.Sprint(traced.Outputs) != fmt.Sprint(plain.Outputs) || fmt.Sprint(traced.State) != fmt.Sprint(plain.State) {
		t.Errorf("outputs or state differ:\nuntraced %v %v\ntraced %v %v", plain.Outputs, plain.State, traced.Outputs, traced.State)
	}
	skipped := strings.Join(traced.Skipped, " ")
	if !strings.Contains(skipped, "_compiled_enter") || !(strings.Contains(skipped, "_py_start") || strings.Contains(skipped, "_profile")) {
		t.Errorf("the tracer's callbacks are not handed to skip_code: %v", traced.Skipped)
	}
	m, err := capmap.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.TracerErrorCount != 0 || len(m.Graphs) != 3 || m.Tool.CompiledCallsHidden == 0 {
		t.Fatalf("tracer errors %v, graphs %d, compiled calls hidden %d", m.TracerErrors, len(m.Graphs), m.Tool.CompiledCallsHidden)
	}
	for _, g := range m.Graphs {
		found := false
		for _, f := range g.Functions {
			if f.Qual == "rms_norm" {
				found = f.Compiled
			}
		}
		if !found {
			t.Errorf("graph %d: rms_norm not recorded as compiled: %+v", g.ID, g.Functions)
		}
	}
}
