package guard

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Pathological inputs must cost in proportion to their size. Each case is
// checked at n and 2n, and the bytes the run allocates (deterministic,
// unlike wall-clock time) may grow by at most maxGrowth: linear growth
// doubles them, quadratic growth quadruples them.
const maxGrowth = 2.8

// stressSource is a captured function whose body holds expr.
func stressSource(expr string) []byte {
	return []byte(fmt.Sprintf(`import torch


def f(x):
    return x


def step(x):
    y = %s
    x.item()
    return y


g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    step(torch.zeros(1, device="cuda"))
`, expr))
}

var stressCases = []struct {
	name string
	expr func(n int) string
}{
	{"sum", func(n int) string { return strings.Repeat("x + ", n) + "x" }},
	{"attribute chain", func(n int) string { return "x" + strings.Repeat(".a", n) }},
	{"nested lambdas", func(n int) string { return strings.Repeat("lambda: ", n) + "x" }},
	{"nested parentheses", func(n int) string { return strings.Repeat("(", n) + "x" + strings.Repeat(")", n) }},
	{"nested lists", func(n int) string { return strings.Repeat("[", n) + "x" + strings.Repeat("]", n) }},
	{"nested calls", func(n int) string { return strings.Repeat("f(", n) + "x" + strings.Repeat(")", n) }},
	{"method chain", func(n int) string { return "x" + strings.Repeat(".a()", n/2) }},
	{"subscripts", func(n int) string { return "x" + strings.Repeat("[0]", n) }},
	{"conditional expressions", func(n int) string { return strings.Repeat("x if x else ", n) + "x" }},
	{"not", func(n int) string { return strings.Repeat("not ", n) + "x" }},
}

// allocated is the bytes one check of src allocates; it checks the run
// ends with the captured .item() found (the deep expression analysed).
func allocated(t *testing.T, src []byte, wantFinding bool) (uint64, *Result) {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Run(Options{Paths: []string{"stress.py"}, Overlay: map[string][]byte{"stress.py": src}, Config: &Config{}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if wantFinding {
		found := false
		for _, d := range res.Diagnostics {
			found = found || d.Rule.ID == "CG101"
		}
		if !found {
			t.Fatalf("the captured .item() is not reported; errors %v", res.Errors)
		}
	}
	return after.TotalAlloc - before.TotalAlloc, res
}

// TestStressDeepExpressions: expressions nested up to 2,400 deep (past
// what CPython compiles) are analysed in linear cost.
func TestStressDeepExpressions(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	for _, c := range stressCases {
		t.Run(c.name, func(t *testing.T) {
			a, _ := allocated(t, stressSource(c.expr(1200)), true)
			b, _ := allocated(t, stressSource(c.expr(2400)), true)
			if g := float64(b) / float64(a); g > maxGrowth {
				t.Errorf("allocated %d bytes at 1,200, %d at 2,400: %.1fx for twice the size", a, b, g)
			}
		})
	}
}

// TestStressPastDepthLimit: a file nested past syntax.MaxDepth (one
// expression of 200,000 then 400,000 terms, a 20,000-long attribute chain,
// 20,000 nested lambdas) is refused as a file error, in linear cost, and
// the other files' findings are still reported.
func TestStressPastDepthLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	other := stressSource("x")
	check := func(src []byte) uint64 {
		t.Helper()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := Run(Options{Paths: []string{"deep.py", "other.py"},
			Overlay: map[string][]byte{"deep.py": src, "other.py": other}, Config: &Config{}})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Errors) != 1 || res.Errors[0].Path != "deep.py" || !strings.Contains(res.Errors[0].Message, "nested") {
			t.Fatalf("errors %v, want deep.py refused as nested too deep", res.Errors)
		}
		found := false
		for _, d := range res.Diagnostics {
			found = found || d.Path == "other.py" && d.Rule.ID == "CG101"
		}
		if !found {
			t.Fatalf("other.py's finding is lost: %v", res.Diagnostics)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	for _, c := range []struct {
		name string
		n    int
		expr func(n int) string
	}{
		{"sum", 200_000, func(n int) string { return strings.Repeat("1+", n) + "1" }},
		{"attribute chain", 10_000, stressCases[1].expr},
		{"nested lambdas", 10_000, stressCases[2].expr},
		{"nested parentheses", 10_000, stressCases[3].expr},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.n < syntax.MaxDepth {
				t.Fatalf("size %d is under the depth limit", c.n)
			}
			a := check(stressSource(c.expr(c.n)))
			b := check(stressSource(c.expr(2 * c.n)))
			if g := float64(b) / float64(a); g > maxGrowth {
				t.Errorf("allocated %d bytes at %d, %d at %d: %.1fx for twice the size", a, c.n, b, 2*c.n, g)
			}
		})
	}
}

// TestStressManyFunctions: a generated module of many small functions (the
// issue's 7 MB file of 120,000) costs in proportion to its functions.
func TestStressManyFunctions(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	module := func(n int) []byte {
		var b strings.Builder
		b.WriteString("import torch\n\n\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "def f%d(x):\n    y = x.a.b(x, %d)\n    return y + %d\n\n\n", i, i, i)
		}
		b.WriteString("def step(x):\n    x.item()\n    return f0(x)\n\n\ng = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    step(torch.zeros(1, device=\"cuda\"))\n")
		return []byte(b.String())
	}
	a, _ := allocated(t, module(2000), true)
	b, _ := allocated(t, module(4000), true)
	if g := float64(b) / float64(a); g > maxGrowth {
		t.Errorf("allocated %d bytes for 2,000 functions, %d for 4,000: %.1fx for twice the size", a, b, g)
	}
}

// TestStressRedefinitions: a file made of n copies of one reader module
// (every module-level name bound n times; each copy's launcher calls its
// kernel by name) costs linearly in n. Function bodies run after the
// import and see each name's last binding only, where merging the n
// bindings gave each of the n launchers n kernels; and the memo stores
// the host-value model reads are one table a file, not a walk of the
// file a function.
func TestStressRedefinitions(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	reader, err := os.ReadFile("../testdata/readers/bf16_index_reader.py")
	if err != nil {
		t.Fatal(err)
	}
	copies := func(n int) []byte { return bytes.Repeat(reader, n) }
	const n = 300
	a, ra := allocated(t, copies(n), false)
	b, rb := allocated(t, copies(2*n), false)
	t.Logf("allocated %d bytes for %d copies, %d for %d", a, n, b, 2*n)
	if g := float64(b) / float64(a); g > maxGrowth {
		t.Errorf("allocated %d bytes for %d copies, %d for %d: %.1fx for twice the size", a, n, b, 2*n, g)
	}
	// Each copy's findings, once: 4 a copy.
	if len(ra.Diagnostics) != 4*n || len(rb.Diagnostics) != 4*2*n {
		t.Errorf("%d findings for %d copies, %d for %d; want 4 a copy", len(ra.Diagnostics), n, len(rb.Diagnostics), 2*n)
	}
}

// TestStressMemoChain: a chain of n memos each filled from the one before
// (`_M2[0] = _M1[0]`, the first from a host read) and read in captured
// code costs linearly in n: the value model reads the file's memo stores
// once a file, and a memo's reason keeps the chain's first memo and its
// host read, not every memo between (nested in full, n reasons of up to n
// memos each).
func TestStressMemoChain(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	module := func(n int) []byte {
		var b strings.Builder
		b.WriteString("import torch\n\n")
		for i := 0; i <= n; i++ {
			fmt.Fprintf(&b, "_M%d = {}\n", i)
		}
		b.WriteString("\n\ndef fill(t):\n    _M0[0] = int(t.max())\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "    _M%d[0] = _M%d[0]\n", i, i-1)
		}
		fmt.Fprintf(&b, "\n\ndef step(x):\n    x.item()\n    return torch.empty((_M%d[0], _M1[0]), device=x.device)\n\n\n", n)
		b.WriteString("g = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    step(torch.zeros(1, device=\"cuda\"))\n")
		return []byte(b.String())
	}
	a, ra := allocated(t, module(2000), true)
	b, _ := allocated(t, module(4000), true)
	if g := float64(b) / float64(a); g > maxGrowth {
		t.Errorf("allocated %d bytes for a chain of 2,000 memos, %d for 4,000: %.1fx for twice the size", a, b, g)
	}
	// The last memo of the chain holds the host read.
	var msgs []string
	found := false
	for _, d := range ra.Diagnostics {
		msgs = append(msgs, d.Message)
		found = found || d.Rule.ID == "CG102" && strings.Contains(d.Message, "`_M2000[0]` is a memo of `_M1999[0]` is a memo of `int(...)`")
	}
	if !found {
		t.Errorf("`_M2000[0]` (filled from a host read through the chain) is not reported as a memo of a host read: %q", msgs)
	}
}

// TestStressListElements: a captured function that stores into one list
// and reads its elements n times each costs linearly in n: what an element
// of the list is (tensors.Model.elemKind, the literal's elements and every
// store into the list) is worked out once a list, not once a read.
func TestStressListElements(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	module := func(n int) []byte {
		var b strings.Builder
		b.WriteString("import torch\n\n\ndef step(x):\n    x.item()\n    parts = [None] * 4\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "    parts[%d] = x * %d\n", i%4, i)
		}
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "    x.copy_(parts[%d])\n", i%4)
		}
		b.WriteString("    return x\n\n\ng = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    step(torch.zeros(1, device=\"cuda\"))\n")
		return []byte(b.String())
	}
	a, ra := allocated(t, module(1000), true)
	b, _ := allocated(t, module(2000), true)
	if g := float64(b) / float64(a); g > maxGrowth {
		t.Errorf("allocated %d bytes for 1,000 stores and reads of one list, %d for 2,000: %.1fx for twice the size", a, b, g)
	}
	for _, d := range ra.Diagnostics {
		if d.Rule.ID == "CG103" {
			t.Errorf("line %d: an element of a list of device tensors read as host memory: %s", d.Start.Line, d.Message)
		}
	}
}
