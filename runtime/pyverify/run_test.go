package pyverify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const readerPy = `import torch

class Meta:
    pass

META = Meta()

def prepare(seq_lens):
    META.sl = seq_lens.to(torch.int32)

def reader(q, seq_lens, seq_lens_cpu):
    return q * 2

class Reader:
    def __init__(self, k, page=16):
        self.k = k

    def forward(self, q):
        return q
`

const readerSpec = `
[[arg]]
name = "q"
shape = ["B", 1, 128]
dtype = "bfloat16"

[[arg]]
name = "seq_lens"
shape = ["B"]
dtype = "int64"
init = "randint 1..256"

[[arg]]
name = "seq_lens_cpu"
role = "mirror"
mirror_of = "seq_lens"

[prep]
call = "prepare"
args = ["seq_lens"]
`

// fixture writes reader.py and spec.toml into a temporary folder.
func fixture(t *testing.T) (Target, *Spec) {
	t.Helper()
	dir := t.TempDir()
	py := filepath.Join(dir, "reader.py")
	if err := os.WriteFile(py, []byte(readerPy), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(dir, "spec.toml")
	if err := os.WriteFile(sp, []byte(readerSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := ParseTarget(py + ":reader")
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadSpec(sp)
	if err != nil {
		t.Fatal(err)
	}
	return tg, s
}

// fake returns options that run the test binary as the interpreter in the
// given mode, and the file it logs its processes to.
func fake(t *testing.T, mode string) (Options, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "procs.log")
	return Options{
		Python:  self,
		Timeout: 20 * time.Second,
		Env:     []string{"PYVERIFY_FAKE_PYTHON=1", "PYVERIFY_FAKE=" + mode, "PYVERIFY_FAKE_LOG=" + log},
	}, log
}

func procs(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func verdicts(r *Report) string {
	var v []string
	for _, c := range r.Cases {
		v = append(v, string(c.Verdict))
	}
	return strings.Join(v, " ")
}

func TestVerdictsAndExitCodes(t *testing.T) {
	tg, s := fixture(t)
	cases := []struct {
		mode     string
		verdicts string
		exit     int
	}{
		{"*:clean", "clean clean clean", 0},
		{"*:user-prints", "clean clean clean", 0},
		{"4:stale,*:clean", "clean stale-read clean", 1},
		{"32:fault,*:clean", "clean clean fault", 1},
		{"1:crash-replay,*:clean", "fault clean clean", 1},
		{"1:crash-capture,*:clean", "capture-error clean clean", 1},
		{"*:capture-sync", "capture-error capture-error capture-error", 1},
		{"1:garbage,*:clean", "error clean clean", 2},
		{"1:badjson,*:clean", "error clean clean", 2},
		{"1:crash-start,*:clean", "error clean clean", 2},
		{"1:garbage,4:stale,*:clean", "error stale-read clean", 1},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			o, log := fake(t, c.mode)
			rep, err := Verify(context.Background(), tg, s, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := verdicts(rep); got != c.verdicts {
				t.Errorf("verdicts %q, want %q", got, c.verdicts)
				for _, cr := range rep.Cases {
					t.Logf("%d: %s %+v", cr.BatchSize, cr.Summary(), cr.Error)
				}
			}
			if got := ExitCode(rep); got != c.exit {
				t.Errorf("exit %d, want %d", got, c.exit)
			}
			if n := len(procs(t, log)); n != 3 && c.mode != "1:crash-start,*:clean" {
				t.Errorf("%d processes, want one per batch size (3)", n)
			}
		})
	}
}

func TestOneProcessPerCase(t *testing.T) {
	tg, s := fixture(t)
	for _, jobs := range []int{1, 3} {
		o, log := fake(t, "*:clean")
		o.BatchSizes = []int{1, 2, 4, 8, 16}
		o.Jobs = jobs
		if _, err := Verify(context.Background(), tg, s, o); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(must(os.ReadFile(log)))), "\n")
		pids, batches := map[string]bool{}, map[string]bool{}
		for _, l := range lines {
			f := strings.Fields(l)
			pids[f[0]], batches[f[1]] = true, true
		}
		if len(lines) != 5 || len(pids) != 5 || len(batches) != 5 {
			t.Errorf("jobs %d: %d runs in %d processes over %d batch sizes, want 5 each:\n%s", jobs, len(lines), len(pids), len(batches), lines)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestStaleEvidence(t *testing.T) {
	tg, s := fixture(t)
	o, _ := fake(t, "*:stale")
	o.BatchSizes = []int{4}
	rep, err := Verify(context.Background(), tg, s, o)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Verdict != StaleRead || c.Replays != 5 || c.Diverged != 2 || c.MismatchedElements != 11+13 || c.MaxDifference != 3.5 {
		t.Errorf("got %+v", c)
	}
	if c.FirstMismatch == nil || c.FirstMismatch.Replay != 1 || c.FirstMismatch.Want != "-inf" {
		t.Errorf("first mismatch %+v", c.FirstMismatch)
	}
	if c.ReplayMs != 0.02 || c.EagerMs != 0.1 || c.Elements != 1024 {
		t.Errorf("times/elements %v %v %v", c.ReplayMs, c.EagerMs, c.Elements)
	}
	if rep.Torch != "2.11.0+fake" || rep.Device != "Fake H200" {
		t.Errorf("env %q %q", rep.Torch, rep.Device)
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	for _, want := range []string{"batch 4    stale-read: 2/5 replays diverged, 24 elements, max diff 3.5", "first mismatch: replay 1, out[0 1]: replay 1.5, eager -inf"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRebindFaultNamesSuspect(t *testing.T) {
	tg, s := fixture(t)
	o, _ := fake(t, "*:rebind-fault")
	o.BatchSizes = []int{4}
	rep, err := Verify(context.Background(), tg, s, o)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Verdict != Fault || c.Rule != "CG201" || len(c.SuspectBuffers) != 1 || c.SuspectBuffers[0].Name != "META.sl" {
		t.Errorf("got %s rule %q suspects %+v", c.Verdict, c.Rule, c.SuspectBuffers)
	}
	if c.Error == nil || !strings.Contains(c.Error.Message, "illegal memory access") {
		t.Errorf("error %+v", c.Error)
	}
}

func TestTimeouts(t *testing.T) {
	tg, s := fixture(t)
	for _, c := range []struct {
		mode    string
		verdict Verdict
	}{{"*:hang", Error}, {"*:hang-replay", Fault}} {
		o, _ := fake(t, c.mode)
		o.BatchSizes = []int{4}
		o.Timeout = time.Second
		start := time.Now()
		rep, err := Verify(context.Background(), tg, s, o)
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("%s: took %s with a 1s timeout", c.mode, el)
		}
		cr := rep.Cases[0]
		if cr.Verdict != c.verdict || cr.Error == nil || cr.Error.Kind != "timeout" {
			t.Errorf("%s: %s %+v", c.mode, cr.Verdict, cr.Error)
		}
	}
}

func TestGlobalErrorStopsTheRest(t *testing.T) {
	tg, s := fixture(t)
	for _, mode := range []string{"no-torch", "no-gpu", "bad-target"} {
		o, log := fake(t, "*:"+mode)
		rep, err := Verify(context.Background(), tg, s, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := verdicts(rep); got != "error error error" {
			t.Errorf("%s: %s", mode, got)
		}
		if n := len(procs(t, log)); n != 1 {
			t.Errorf("%s: %d processes, want 1 (the others are not run)", mode, n)
		}
		if !strings.Contains(rep.Cases[2].Error.Message, "not run") || rep.Cases[2].Error.Kind != mode {
			t.Errorf("%s: %+v", mode, rep.Cases[2].Error)
		}
		if ExitCode(rep) != 2 {
			t.Errorf("%s: exit %d", mode, ExitCode(rep))
		}
	}
}

func TestNoPython(t *testing.T) {
	tg, s := fixture(t)
	_, err := Verify(context.Background(), tg, s, Options{Python: "/nonexistent/python3.99"})
	if !errors.Is(err, ErrNoPython) || !strings.Contains(err.Error(), "--python") {
		t.Errorf("err %v", err)
	}
}

func TestCaptureErrorRules(t *testing.T) {
	tg, s := fixture(t)
	for mode, rule := range map[string]string{"capture-sync": "CG101", "capture-debug": "CG101", "capture-pinned": "CG103", "capture-nonzero": "CG104"} {
		o, _ := fake(t, "*:"+mode)
		o.BatchSizes = []int{1}
		rep, err := Verify(context.Background(), tg, s, o)
		if err != nil {
			t.Fatal(err)
		}
		if c := rep.Cases[0]; c.Verdict != CaptureError || c.Rule != rule {
			t.Errorf("%s: %s %q (%s), want capture-error %s", mode, c.Verdict, c.Rule, c.RuleReason, rule)
		}
	}
}

// The case file the harness gets: shapes resolved for the batch size,
// inclusive ranges made exclusive, the prep in the target's own file.
func TestCaseFile(t *testing.T) {
	tg, s := fixture(t)
	o, _ := fake(t, "*:clean")
	dump := t.TempDir()
	o.Env = append(o.Env, "PYVERIFY_FAKE_DUMP="+dump)
	o.BatchSizes = []int{4}
	o.Replays = 7
	if _, err := Verify(context.Background(), tg, s, o); err != nil {
		t.Fatal(err)
	}
	var c harnessCase
	if err := json.Unmarshal(must(os.ReadFile(filepath.Join(dump, "case-4.json"))), &c); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(tg.Path)
	if c.Replays != 7 || c.Warmup != 3 || !c.SyncDebug || c.Target.Path != abs || c.Target.Qualname != "reader" {
		t.Errorf("case %+v", c)
	}
	if c.Prep == nil || c.Prep.Path != abs || c.Prep.Function != "prepare" || len(c.Prep.Args) != 1 {
		t.Errorf("prep %+v", c.Prep)
	}
	q, sl, m := c.Args[0], c.Args[1], c.Args[2]
	if q.Role != "static" || q.Init != "randn" || len(q.Shape) != 3 || q.Shape[0] != 4 || q.Device != "cuda" || !q.Pass {
		t.Errorf("q %+v", q)
	}
	if sl.Init != "randint" || *sl.Low != 1 || *sl.High != 257 || sl.Shape[0] != 4 {
		t.Errorf("seq_lens %+v", sl)
	}
	if m.Role != "mirror" || m.MirrorOf != "seq_lens" {
		t.Errorf("mirror %+v", m)
	}
}

func TestVerifyFixedUsesTheFixedCopy(t *testing.T) {
	tg, s := fixture(t)
	o, _ := fake(t, "*:clean")
	dump := t.TempDir()
	o.Env = append(o.Env, "PYVERIFY_FAKE_DUMP="+dump)
	o.BatchSizes = []int{4}
	orig := string(must(os.ReadFile(tg.Path)))
	var asked []string
	fixer := func(paths []string) (map[string][]byte, string, error) {
		asked = paths
		return map[string][]byte{paths[0]: []byte(orig + "\n# fixed\n")}, "--- a/reader.py\n+++ b/reader.py\n", nil
	}
	cmp, err := VerifyFixed(context.Background(), tg, s, o, fixer)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != tg.Path {
		t.Errorf("fixer asked for %v", asked)
	}
	// the dump holds the fixed run's case (the last one written)
	var c harnessCase
	json.Unmarshal(must(os.ReadFile(filepath.Join(dump, "case-4.json"))), &c)
	abs, _ := filepath.Abs(tg.Path)
	if c.Target.Path == abs || filepath.Base(c.Target.Path) != "reader.py" || c.Prep.Path != c.Target.Path {
		t.Errorf("fixed run loads %q (prep %q), want a copy of reader.py for both", c.Target.Path, c.Prep.Path)
	}
	if !strings.Contains(c.Target.SysPath[0], filepath.Dir(abs)) {
		t.Errorf("sys.path %v lacks the original folder", c.Target.SysPath)
	}
	if got := string(must(os.ReadFile(tg.Path))); got != orig {
		t.Errorf("the user's file changed")
	}
	if cmp.Original.Variant != "original" || cmp.Fixed.Variant != "fixed" || len(cmp.Changed) != 1 || cmp.ExitCode() != 0 {
		t.Errorf("comparison %+v", cmp)
	}
	var b bytes.Buffer
	WriteSideBySide(&b, cmp.Original, cmp.Fixed, cmp.Patch)
	if !strings.Contains(b.String(), "original") || !strings.Contains(b.String(), "+++ b/reader.py") {
		t.Errorf("side by side:\n%s", b.String())
	}
	// a fixer error stops the run with it
	if _, err := VerifyFixed(context.Background(), tg, s, o, func([]string) (map[string][]byte, string, error) {
		return nil, "", errors.New("syntax error")
	}); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("fixer error: %v", err)
	}
}
