package guard

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/fixmodel"
)

// fixesAt lists "line:CODE:applicability" of the findings that carry a fix.
func fixesAt(res *Result) []string {
	var out []string
	for _, d := range res.Diagnostics {
		if d.Fix != nil {
			out = append(out, fmt.Sprintf("%d:%s:%s", d.Start.Line, d.Rule.ID, d.Fix.Applicability))
		}
	}
	return out
}

const lazyAllocSrc = `import torch


class Sampler:
    def __init__(self):
        self.probs = None
        self.scratch = torch.zeros(8, device="cuda")

    def forward(self, logits):
        return logits.softmax(-1) * self.probs + self.scratch.sum()

    def prepare_replay(self, logits):
        n = logits.shape[0]
        if self.probs is None or self.probs.shape[0] < n:
            self.probs = torch.zeros(n, logits.shape[1], device=logits.device)
        self.scratch = logits.new_zeros(8)


def capture(g, logits):
    sampler = Sampler()
    sampler.prepare_replay(logits)
    with torch.cuda.graph(g):
        out = sampler.forward(logits)
    return out
`

// Pattern (d) of issue 18 (line 15; line 16 rebinds a fresh allocation): a lazy (re)allocation guarded by a None or shape
// test is not a rebinding of the captured tensor, and a fresh allocation is
// no new value to copy: whatever the rules report there, no fix (a copy
// into None raises, and never grows the buffer).
func TestNoFixForLazyAllocation(t *testing.T) {
	res := runSrc(t, lazyAllocSrc, &Config{ReplayPrep: []string{"m:Sampler.prepare_replay"}})
	if got := fixesAt(res); len(got) != 0 {
		t.Errorf("fixes %v, want none", got)
	}
	for _, d := range res.Diagnostics {
		if d.Rule.ID == "CG201" && !strings.Contains(d.Message, "no fix: ") {
			t.Errorf("line %d: %s: the finding does not say why it has no fix", d.Start.Line, d.Message)
		}
	}
}

// The positive twin: an unguarded rebinding of an attribute that always
// holds a buffer gets the (unsafe) prefix copy.
func TestCopyFixForBufferRebind(t *testing.T) {
	src := strings.Replace(lazyAllocSrc, "        self.scratch = logits.new_zeros(8)\n", "        self.scratch = logits[:, 0].to(torch.float32)\n", 1)
	res := runSrc(t, src, &Config{ReplayPrep: []string{"m:Sampler.prepare_replay"}})
	if got := strings.Join(fixesAt(res), " "); got != "16:CG201:unsafe" {
		t.Errorf("fixes %q, want 16:CG201:unsafe", got)
	}
}

const kernelSrc = `import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, s_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    ptrs = out_ptr + i
    tl.store(ptrs, tl.load(x_ptr + i) * tl.load(s_ptr))


def scale(x, s, out):
    """Capture-safe scale."""
    xs = x.contiguous()
    _scale_kernel[(1,)](xs, s, out, N=x.shape[0])
    return out


def scale_into(x, s, out):
    """Capture-safe scale into a contiguous copy of out."""
    o = out.contiguous()
    _scale_kernel[(1,)](x, s, o, N=x.shape[0])
    return out
`

// A conversion that may return its source (contiguous, to) is safe to
// replace only when the kernel is seen not to store through it: the store
// through a derived pointer (ptrs = out_ptr + i) counts.
func TestKernelStoresDecideAliasing(t *testing.T) {
	res := runSrc(t, kernelSrc, nil)
	if got := strings.Join(fixesAt(res), " "); got != "15:CG301:safe" {
		t.Errorf("fixes %q, want 15:CG301:safe (line 22: the kernel stores through out_ptr)", got)
	}
}

const storedStepSrc = `import torch


class Scheduler:
    def __init__(self):
        self.latents = torch.zeros(4, device="cuda")
        self.prev = None
        self.history = None

    def step(self, noise):
        sample = self.latents.to(torch.float32)
        self.history = sample
        self.latents = (sample + noise).clone()

    def smooth(self, x):
        prev = self.prev
        out = x + prev
        self.prev = x.clone()
        return out


def capture(g, noise, x):
    s = Scheduler()
    with torch.cuda.graph(g):
        s.step(noise)
        y = s.smooth(x)
    return y
`

// Pattern (e): a persistent buffer stored on an attribute is overwritten in
// place by the next call, so the attribute's previous value must not be
// held elsewhere (line 13: `self.history` keeps an alias of it through a
// local and a may-alias conversion: no fix); a local only computed with
// before the store is no holder (line 18: the unsafe fix, keyed per
// instance).
func TestStoredBufferNotHeldElsewhere(t *testing.T) {
	res := runSrc(t, storedStepSrc, nil)
	if got := strings.Join(fixesAt(res), " "); got != "18:CG301:unsafe" {
		t.Errorf("fixes %q, want 18:CG301:unsafe", got)
	}
	seen13 := false
	for _, d := range res.Diagnostics {
		seen13 = seen13 || d.Start.Line == 13
		if d.Start.Line == 13 && !strings.Contains(d.Message, "no fix: `self.history = sample` keeps its previous value") {
			t.Errorf("line 13: %s", d.Message)
		}
		if d.Start.Line == 18 && d.Fix != nil && !strings.Contains(d.Fix.Edits[0].NewText, "(id(self), ") {
			t.Errorf("line 18: the buffer is not keyed per instance: %s", d.Fix.Edits[0].NewText)
		}
	}
	if !seen13 {
		t.Error("no finding on line 13")
	}
}

// A value stored on the object a constructor is making, in replay-prep
// (a per-step metadata object): no buffer key keeps the captured address.
func TestNoFixInConstructor(t *testing.T) {
	src := `import torch


class StepInput:
    def __init__(self, lens):
        self.lens = lens.contiguous()


class Runner:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()

    def forward(self, inp):
        return inp.lens * 2

    def capture(self, lens):
        inp = StepInput(lens)
        with torch.cuda.graph(self.graph):
            self.out = self.forward(inp)
        self.inp = inp

    def run(self, lens):
        self.inp = StepInput(lens)
        self.graph.replay()
        return self.out
`
	res := runSrc(t, src, nil)
	if got := fixesAt(res); len(got) != 0 {
		t.Errorf("fixes %v, want none", got)
	}
	found := false
	for _, d := range res.Diagnostics {
		if d.Start.Line == 6 {
			found = true
			if !strings.Contains(d.Message, "no fix: it is stored on the object `__init__` is making") {
				t.Errorf("line 6: %s", d.Message)
			}
		}
	}
	if !found {
		t.Error("no finding on line 6")
	}
}

// A local that took the attribute's old value (here through a conditional
// and a call the value model cannot see into) and is read after the store:
// the in-place copy of a persistent buffer would change what it reads.
func TestStoredBufferOldValueReadAfter(t *testing.T) {
	src := `import torch


def exchange(memory):
    return memory


class Conv:
    def __init__(self):
        self.memory = None

    def forward(self, x, sp):
        boundary = self.memory if sp is None else None
        cache = exchange(memory=boundary)
        self.memory = x[:, -2:].contiguous()
        return x if cache is None else torch.cat([cache, x], 1)


def capture(g, x):
    c = Conv()
    with torch.cuda.graph(g):
        y = c.forward(x, None)
    return y
`
	res := runSrc(t, src, nil)
	if got := fixesAt(res); len(got) != 0 {
		t.Errorf("fixes %v, want none", got)
	}
	found := false
	for _, d := range res.Diagnostics {
		if d.Start.Line == 15 {
			found = true
			if !strings.Contains(d.Message, "no fix: `cache` still holds its previous value after the store") {
				t.Errorf("line 15: %s", d.Message)
			}
		}
	}
	if !found {
		t.Error("no finding on line 15")
	}
}

const paramOwnerSrc = `import torch


class LayerState:
    def __init__(self):
        self.prev = torch.zeros(4, device="cuda")


def smooth(state, x):
    prev = state.prev
    out = x + prev
    state.prev = x.clone()
    return out


def capture(g, x):
    layers = [LayerState(), LayerState()]
    with torch.cuda.graph(g):
        y = x
        for st in layers:
            y = smooth(st, y)
    return y
`

// Pattern (e) with the owner passed in: a value stored on an object the
// function is given (each layer's state, a per-layer config) gets a buffer
// per that object, as one stored on self gets one per instance; keyed by
// the site alone, every layer would share the last layer's buffer.
func TestStoredBufferKeyedPerParameterOwner(t *testing.T) {
	res := runSrc(t, paramOwnerSrc, nil)
	found := false
	for _, d := range res.Diagnostics {
		if d.Start.Line != 12 || d.Fix == nil {
			continue
		}
		found = true
		if !strings.Contains(d.Fix.Edits[0].NewText, "(id(state), ") {
			t.Errorf("line 12: the buffer is not keyed per owner object: %s", d.Fix.Edits[0].NewText)
		}
	}
	if !found {
		t.Errorf("no fix on line 12: %v", fixesAt(res))
	}
}

const savedForBackwardSrc = `import torch
import triton
import triton.language as tl


@triton.jit
def _loss_kernel(t_ptr, out_ptr):
    pass


class TokenLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target):
        """Capture-safe token loss."""
        flat = target.to(torch.int32)
        out = torch.empty_like(logits)
        _loss_kernel[(1,)](flat, out)
        ctx.save_for_backward(flat)
        return out

    @staticmethod
    def backward(ctx, grad):
        (flat,) = ctx.saved_tensors
        return grad, None
`

// A temporary saved for the backward pass outlives the call: autograd
// holds it until backward, and a second forward (another micro-batch, a
// second loss) would overwrite a buffer keyed by site first. No fix.
func TestNoFixForSavedForBackward(t *testing.T) {
	res := runSrc(t, savedForBackwardSrc, nil)
	seen := false
	for _, d := range res.Diagnostics {
		if d.Start.Line != 15 || d.Rule.ID != "CG301" {
			continue
		}
		seen = true
		if d.Fix != nil {
			t.Errorf("line 15: a fix for a tensor saved for backward: %s", d.Fix.Edits[0].NewText)
		}
		if !strings.Contains(d.Message, "saved for the backward pass") {
			t.Errorf("line 15: the message does not say why there is no fix: %s", d.Message)
		}
	}
	if !seen {
		t.Errorf("no CG301 on line 15: %v", res.Diagnostics)
	}
}

// checkFixLines runs the fixture file and holds, for each line, the CG301
// finding's fix ("safe", "unsafe") or the words its "no fix: ..." must
// contain; every line listed must have a CG301 finding.
func checkFixLines(t *testing.T, file string, want map[int]string) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	res := runSrc(t, string(src), nil)
	seen := map[int]bool{}
	for _, d := range res.Diagnostics {
		w, ok := want[d.Start.Line]
		if !ok || d.Rule.ID != "CG301" {
			continue
		}
		seen[d.Start.Line] = true
		switch {
		case w == "safe" || w == "unsafe":
			if d.Fix == nil || string(d.Fix.Applicability) != w {
				t.Errorf("line %d: want a %s fix, got %v: %s", d.Start.Line, w, d.Fix, d.Message)
			}
		case d.Fix != nil:
			t.Errorf("line %d: a fix (%s) where a tensor sharing its memory is written in place: %s", d.Start.Line, d.Fix.Edits[0].NewText, d.Message)
		case !strings.Contains(d.Message, "no fix: ") || !strings.Contains(d.Message, w):
			t.Errorf("line %d: the message does not say %q: %s", d.Start.Line, w, d.Message)
		}
	}
	for line := range want {
		if !seen[line] {
			t.Errorf("no CG301 on line %d", line)
		}
	}
}

// Pattern (f) through aliases (a linear-attention library): a conversion
// that may return its source is no fix where a tensor sharing its memory
// is written in place after it, however the sharing is made (a conditional
// output that is the input when inplace=True, a view written as out=, a
// helper that updates its parameter, a helper that launches a kernel
// storing into it); the twins that only read keep their fix.
func TestNoFixWhereAnAliasIsWrittenInPlace(t *testing.T) {
	checkFixLines(t, "../testdata/fixmodel/linear_attn.py", map[int]string{
		39:  "kernel `_token_shift_kernel` stores through its argument `out`",
		47:  "unsafe",
		55:  "passed as `out=` to `torch.mul(flat, 0.9, out=flat)`",
		65:  "safe",
		86:  "passes it to `_decay_state`, where `state.mul_(0.9)` writes it in place",
		95:  "passes it to `_launch_decay`, where kernel `_state_decay_kernel` stores through its argument `state`",
		104: "unsafe",
	})
}

// The same in an engine's attention layer: the paged cache written through
// a view, the query rotated in place by a method; the slot and position
// conversions only read keep their fix.
func TestNoFixWhereAnEngineWritesInPlace(t *testing.T) {
	checkFixLines(t, "../testdata/fixmodel/engine_cache.py", map[int]string{
		36: "unsafe",
		37: "`pages[slots] = key` writes it in place",
		46: "safe",
		47: "safe",
		57: "safe",
		58: "passes it to `_rotate`, where `q[:, : self.head_dim // 2] *= scale` writes it in place",
	})
}

const freshOpSrc = `import torch


class Smoother:
    def __init__(self):
        self.prev_a = torch.zeros(4, device="cuda")
        self.prev_b = torch.zeros(4, device="cuda")
        self.prev_c = torch.zeros(4, device="cuda")
        self.prev_d = torch.zeros(4, device="cuda")
        self.seen = set()

    def step_aten(self, x):
        prev = self.prev_a
        out = torch.ops.aten.add(x, prev)
        self.prev_a = x.to(torch.float32)
        return out

    def step_torch(self, x):
        prev = self.prev_b
        out = torch.add(x, prev, alpha=0.5)
        self.prev_b = x.to(torch.float32)
        return out

    def step_view(self, x):
        prev = self.prev_c
        out = torch.narrow(prev, 0, 0, 2)
        self.prev_c = x.to(torch.float32)
        return out

    def step_set(self, x):
        prev = self.prev_d
        self.seen.add(prev)
        self.prev_d = x.to(torch.float32)
        return x


def capture(g, x):
    s = Smoother()
    with torch.cuda.graph(g):
        y = s.step_aten(x) + s.step_torch(x) + s.step_view(x).sum() + s.step_set(x)
    return y
`

// An out-of-place torch operation (`torch.ops.aten.add`, `torch.add`)
// returns a new tensor, so the attribute's old value read into a local and
// added to is held nowhere after the store: the stored step keeps its fix
// (the GPU-proved fix of the stored-state probe). A torch view
// (`torch.narrow`) returned, or the old value put in a set, still holds
// it: no fix. `torch.ops.aten.add` is no container's `.add`.
func TestFreshTorchOpHoldsNothing(t *testing.T) {
	res := runSrc(t, freshOpSrc, nil)
	want := map[int]string{15: "unsafe", 21: "unsafe", 27: "`out` still holds its previous value", 33: "`self.seen.add(prev)` keeps its value"}
	seen := map[int]bool{}
	for _, d := range res.Diagnostics {
		w, ok := want[d.Start.Line]
		if !ok || d.Rule.ID != "CG301" {
			continue
		}
		seen[d.Start.Line] = true
		if w == "unsafe" {
			if d.Fix == nil || d.Fix.Applicability != Unsafe {
				t.Errorf("line %d: want an unsafe fix: %s", d.Start.Line, d.Message)
			}
			continue
		}
		if d.Fix != nil || !strings.Contains(d.Message, w) {
			t.Errorf("line %d: want no fix (%s): %s", d.Start.Line, w, d.Message)
		}
	}
	for line := range want {
		if !seen[line] {
			t.Errorf("no CG301 on line %d", line)
		}
	}
}

// Writes into a conversion's source reach the caller with or without a
// copy: they stop the fix only where the converted tensor is read after
// them (line 31), not where one launch reads the result and writes the
// source (line 24, an in-place elementwise op); a kernel's tl.constexpr
// parameter is no pointer, even when its value comes from the result
// through a helper (line 41). A helper whose returns alias none of its
// parameters returns a new tensor, and a binding made before the
// conversion on another path holds no alias of it (line 63); one that
// returns a view of its parameter does (line 71). Values a kernel loads
// through a pointer are data, not addresses derived from it (line 86:
// the loaded indices pick where another tensor is written), and a store
// into a local on one branch of an if is no store into the alias that
// local is bound to on the other (line 93), nor, once the local is bound
// to a new tensor on every path, into its earlier alias (line 107), nor
// into an alias bound on a branch that returns before the store (line
// 120).
func TestSourceWritesAndConstexprParams(t *testing.T) {
	checkFixLines(t, "../testdata/fixmodel/inplace_kernels.py", map[int]string{
		24:  "safe",
		31:  "`x.mul_(2)` writes it in place, and `xc` is read after that: a copy would not see that write",
		41:  "unsafe",
		63:  "unsafe",
		71:  "kernel `_gate_kernel` stores through its argument `rows`",
		86:  "safe",
		93:  "unsafe",
		107: "unsafe",
		120: "unsafe",
	})
}

const dataRebindSrc = `import torch
from torch import nn


class QuantLinear(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.weight = nn.Parameter(w)

    def forward(self, x):
        return x @ self.weight

    def process_weights_after_loading(self, w):
        self.weight.data = w.to(torch.bfloat16)

    def repack(self, n):
        self.weight.data = torch.zeros(n, n, device=self.weight.device)

    def reshape_for_kernel(self, w):
        self.weight.data = w.t()

    def reset(self):
        self.weight.data = torch.zeros_like(self.weight)
`

// Pattern (c): `.data = y` becomes `.data.copy_(y)` only where y is proved
// to have the parameter's shape, dtype, device and layout (line 23: a
// zeros_like). A dtype cast (line 14), a new shape (line 17) or a
// transposed view (line 20) would raise in copy_ or silently undo the
// change: no fix.
func TestDataRebindNeedsSameMeta(t *testing.T) {
	res := runSrc(t, dataRebindSrc, &Config{PostCapture: []string{"m:QuantLinear.process_weights_after_loading", "m:QuantLinear.repack", "m:QuantLinear.reshape_for_kernel", "m:QuantLinear.reset"}})
	seen := map[int]bool{}
	for _, d := range res.Diagnostics {
		if d.Rule.ID != "CG201" {
			continue
		}
		seen[d.Start.Line] = true
		switch d.Start.Line {
		case 23:
			if d.Fix == nil || d.Fix.Applicability != Safe || d.Fix.Edits[0].NewText != "self.weight.data.copy_(torch.zeros_like(self.weight))" {
				t.Errorf("line 23: want the safe copy_: %v %s", d.Fix, d.Message)
			}
		default:
			if d.Fix != nil || !strings.Contains(d.Message, "no fix: `self.weight.data.copy_(...)` would keep the old shape, dtype and layout") {
				t.Errorf("line %d: want no fix: %v %s", d.Start.Line, d.Fix, d.Message)
			}
		}
	}
	for _, line := range []int{14, 17, 20, 23} {
		if !seen[line] {
			t.Errorf("no CG201 on line %d: %v", line, res.Diagnostics)
		}
	}
}

// TestKernelParsedOncePerParameter: a kernel launched from many functions,
// each with a temporary that may alias a buffer, is parsed again (its body
// is device code the checker blanks) once a run for each parameter a launch
// asks about, not once a launch: 40 launchers, the same fixes as one.
func TestKernelParsedOncePerParameter(t *testing.T) {
	var b strings.Builder
	b.WriteString(kernelSrc)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, `

def scale_%d(x, s, out):
    """Capture-safe scale."""
    xs = x.contiguous()
    _scale_kernel[(1,)](xs, s, out, N=x.shape[0])
    return out
`, i)
	}
	before := fixmodel.KernelParses()
	res := runSrc(t, b.String(), nil)
	parses := fixmodel.KernelParses() - before
	if n := len(fixesAt(res)); n != 41 {
		t.Fatalf("%d fixes, want 41 (one for each launcher that converts x)", n)
	}
	if parses < 1 || parses > 3 {
		t.Errorf("the kernel was parsed %d times for 41 launches, want once for each parameter asked (at most 3)", parses)
	}
}
