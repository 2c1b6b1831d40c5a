package pyverify

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/templates"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found (scripts/test.sh requires it)")
	}
	return py
}

// pyCompile byte-compiles files without leaving __pycache__ behind.
func pyCompile(t *testing.T, py string, files ...string) {
	t.Helper()
	if err := testenv.PyCompile(t, files...); err != nil {
		t.Error(err)
	}
}

func TestHarnessCompiles(t *testing.T) {
	py := python(t)
	p := filepath.Join(t.TempDir(), "verify_harness.py")
	os.WriteFile(p, templates.VerifyHarness, 0o644)
	pyCompile(t, py, p)
	// importable without torch: the module only imports torch inside a case
	cmd := exec.Command(py, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import verify_harness as h; assert h.PROTOCOL == "+
		"int(sys.argv[2]); assert 'torch' not in sys.modules", filepath.Dir(p), "1")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("import: %v\n%s", err, out)
	}
}

// The testdata cases of every row of DESIGN.md's measured table are valid
// Python (torch is not needed to compile them).
func TestVerifyTestdataCompiles(t *testing.T) {
	py := python(t)
	files, _ := filepath.Glob("../../testdata/verify/*.py")
	if len(files) < 5 {
		t.Fatalf("%d testdata/verify cases, want one per row of the measured table (5)", len(files))
	}
	pyCompile(t, py, files...)
	specs, _ := filepath.Glob("../../testdata/verify/*.toml")
	if len(specs) < 5 {
		t.Fatalf("%d specs", len(specs))
	}
	for _, s := range specs {
		sp, err := LoadSpec(s)
		if err != nil {
			t.Error(err)
			continue
		}
		// each spec's target is its module's file; its target line names the function
		py := strings.TrimSuffix(s, ".toml") + ".py"
		data, _ := os.ReadFile(s)
		first := strings.SplitN(string(data), "\n", 2)[0]
		if !strings.HasPrefix(first, "# target: ") {
			t.Errorf("%s: first line %q, want \"# target: <function>\"", s, first)
			continue
		}
		tg, err := ParseTarget(py + ":" + strings.TrimPrefix(first, "# target: "))
		if err == nil {
			err = tg.Check()
		}
		if err != nil {
			t.Error(err)
		}
		_ = sp
	}
}

// The real harness under a real interpreter, with a torch that cannot be
// imported: every case is an error naming the cause, one process runs.
func TestRealHarnessWithoutTorch(t *testing.T) {
	py := python(t)
	tg, s := fixture(t)
	shadow := t.TempDir()
	os.MkdirAll(filepath.Join(shadow, "torch"), 0o755)
	os.WriteFile(filepath.Join(shadow, "torch", "__init__.py"), []byte("raise ImportError('no torch in this test')\n"), 0o644)
	var log bytes.Buffer
	rep, err := Verify(context.Background(), tg, s, Options{Python: py, Env: []string{"PYTHONPATH=" + shadow}, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range rep.Cases {
		if c.Verdict != Error || c.Error == nil || c.Error.Kind != "no-torch" {
			t.Fatalf("case %d: %s %+v", i, c.Verdict, c.Error)
		}
	}
	if !strings.Contains(rep.Cases[0].Error.Message, "no torch in this test") || rep.Cases[0].Exit != "exit status 0" {
		t.Errorf("first case: %+v exit %q", rep.Cases[0].Error, rep.Cases[0].Exit)
	}
	if !strings.Contains(rep.Cases[1].Error.Message, "not run") {
		t.Errorf("second case ran: %+v", rep.Cases[1].Error)
	}
	if ExitCode(rep) != 2 || strings.Count(log.String(), "\n") != 3 {
		t.Errorf("exit %d, log:\n%s", ExitCode(rep), log.String())
	}
}

// torchPython finds an interpreter that can import torch (CPU is enough), for
// the dry run; the test is skipped where there is none.
func torchPython(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("CAPGUARD_TEST_TORCH_PYTHON"), "python3", "/usr/bin/python3"}
	for _, c := range cands {
		if c == "" {
			continue
		}
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if exec.Command(p, "-c", "import torch").Run() == nil {
			return p
		}
	}
	t.Skip("no interpreter with torch (set CAPGUARD_TEST_TORCH_PYTHON)")
	return ""
}

// The dry run executes the whole harness on the CPU (no capture): spec,
// mirror, prep, comparison and the rebinding check all work end to end.
func TestDryRunWithTorch(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r.py"), []byte(`import torch

class Meta:
    pass

META = Meta()

def prepare(seq_lens):
    META.sl = seq_lens.to(torch.int32)

def reader(q, seq_lens, seq_lens_cpu, scale=1.0):
    L = int(seq_lens_cpu.max())
    return q.float() * scale + META.sl[:, None, None].float() + L

class Scaler:
    def __init__(self, w, bias=0.0):
        self.w, self.bias = w, bias

    def forward(self, x, out):
        out.copy_(x * self.w + self.bias)
`), 0o644)
	os.WriteFile(filepath.Join(dir, "r.toml"), []byte(readerSpec+`
[[arg]]
name = "scale"
role = "const"
value = 2.0
kwarg = true
`), 0o644)
	os.WriteFile(filepath.Join(dir, "m.toml"), []byte(`
[[arg]]
name = "w"
role = "fixed"
shape = [8]
dtype = "float32"

[[arg]]
name = "x"
shape = ["B", 8]
dtype = "float32"
init = "rand -1..1"

[[arg]]
name = "out"
role = "output"
shape = ["B", 8]
dtype = "float32"

[construct]
args = ["w"]
kwargs = { bias = 0.5 }
`), 0o644)
	for _, c := range []struct{ target, spec string }{{"r.py:reader", "r.toml"}, {"r.py:Scaler.forward", "m.toml"}} {
		tg, _ := ParseTarget(filepath.Join(dir, c.target))
		s, err := LoadSpec(filepath.Join(dir, c.spec))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Verify(context.Background(), tg, s, Options{Python: py, DryRun: true, BatchSizes: []int{1, 4}, Replays: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, cr := range rep.Cases {
			if cr.Verdict != DryRunOK || cr.Replays != 3 || cr.Elements == 0 {
				t.Errorf("%s batch %d: %s (%+v)\n%s", c.target, cr.BatchSize, cr.Summary(), cr.Error, cr.Stderr)
			}
			if c.spec == "r.toml" && (len(cr.SuspectBuffers) != 1 || cr.SuspectBuffers[0].Name != "META.sl" || cr.SuspectBuffers[0].Replays != 3) {
				t.Errorf("%s batch %d: suspects %+v, want META.sl rebound in every replay", c.target, cr.BatchSize, cr.SuspectBuffers)
			}
			if c.spec == "m.toml" && len(cr.SuspectBuffers) != 0 {
				t.Errorf("%s: suspects %+v", c.target, cr.SuspectBuffers)
			}
		}
		if !rep.DryRun || !strings.Contains(rep.Device, "dry run") {
			t.Errorf("dry run not reported: %+v", rep)
		}
	}
}

// A CUDA error in a dry run's rerun is no fault verdict (nothing was
// captured): an error of the target on the CPU, with where it was raised
// and the state the replay-prep rebound before it (the "replay" reruns the
// target, which raises the error on its fifth call).
func TestDryRunFaultKeepsSuspects(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.py"), []byte(`import torch

class Meta:
    pass

META = Meta()
CALLS = [0]

def prepare(seq_lens):
    META.sl = seq_lens.to(torch.int32)

def reader(q):
    CALLS[0] += 1
    if CALLS[0] == 5:  # 3 warm-ups, the capture, then the first replay
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    return q + META.sl[:, None, None].float()
`), 0o644)
	os.WriteFile(filepath.Join(dir, "f.toml"), []byte(readerSpec+"\n"), 0o644)
	s, err := LoadSpec(filepath.Join(dir, "f.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.Args[1:] {
		no := false
		a.Pass = &no
	}
	tg, _ := ParseTarget(filepath.Join(dir, "f.py:reader"))
	rep, err := Verify(context.Background(), tg, s, Options{Python: py, DryRun: true, BatchSizes: []int{4}})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Verdict != Error || c.Error == nil || c.Error.Phase != "replay 0" || c.Rule != "" ||
		!strings.HasPrefix(c.Error.Message, "the target failed on the CPU: ") ||
		len(c.SuspectBuffers) != 1 || c.SuspectBuffers[0].Name != "META.sl" {
		t.Errorf("got %s, error %+v, rule %q, suspects %+v", c.Summary(), c.Error, c.Rule, c.SuspectBuffers)
	}
	if c.Error != nil && (c.Error.File == "" || !strings.Contains(c.Error.Code, "raise RuntimeError")) {
		t.Errorf("location %s:%d %q", c.Error.File, c.Error.Line, c.Error.Code)
	}
}
