package syntax

import (
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

func TestBlankKernels(t *testing.T) {
	src := `import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"B": 64})], key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr,
               n, B: tl.constexpr):
    """Adds.

x lines at column 0 inside a docstring do not end the body
"""
    pid = tl.program_id(0)  # a comment
# a column-0 comment inside the body
    s = "def not_a_def():"
    tl.store(y_ptr + pid, tl.load(x_ptr + pid))


def add(x, y):
    add_kernel[(1,)](x, y, x.numel(), B=64)
    return y


@triton.jit
def one_liner(x): return x


@functools.lru_cache
def helper():
    return 1
`
	out, ok := BlankKernels([]byte(src))
	if !ok || len(out) != len(src) {
		t.Fatalf("blanked=%v len %d vs %d", ok, len(out), len(src))
	}
	if strings.Count(string(out), "\n") != strings.Count(src, "\n") {
		t.Fatal("line count changed")
	}
	got := string(out)
	for _, gone := range []string{"program_id", "not_a_def", "tl.store", "column 0 inside"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q not blanked:\n%s", gone, got)
		}
	}
	for _, kept := range []string{"def add_kernel(x_ptr, y_ptr,", "def add(x, y):", "add_kernel[(1,)]", "def one_liner(x): return x", "return 1", "@triton.autotune"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q lost:\n%s", kept, got)
		}
	}
	tree, err := Parse(out)
	if err != nil || tree.Syntax != "" {
		t.Fatalf("blanked source does not parse: %v %s\n%s", err, tree.Syntax, got)
	}
	// Unterminated strings: nothing is blanked after the point of doubt.
	if _, ok := BlankKernels([]byte("import triton\n@triton.jit\ndef k(x):\n    s = '''open\n")); ok {
		t.Error("blanked a file with an unterminated string")
	}
}

func FuzzBlankKernels(f *testing.F) {
	f.Add([]byte("import triton\n@triton.jit\ndef k(x):\n    return x\n\ndef g():\n    pass\n"))
	f.Add([]byte("@jit\ndef k(a,\n b):\n  '''x\n'''\n  pass\nx = 1\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		out, ok := BlankKernels(src)
		if len(out) != len(src) {
			t.Fatalf("length %d -> %d", len(src), len(out))
		}
		for i := range src {
			if (src[i] == '\n') != (out[i] == '\n') {
				t.Fatalf("line end moved at %d", i)
			}
		}
		if !ok {
			return
		}
		// Blanking never makes a file that parsed fail to parse.
		if ParseOK(src) && !ParseOK(out) {
			t.Fatalf("blanking broke a valid file:\n%s\n--->\n%s", src, out)
		}
	})
}

func TestKernelDecorator(t *testing.T) {
	for name, want := range map[string]bool{
		"triton.jit": true, "jit": true, "triton.autotune": true, "autotune": true, "heuristics": true, "tl.jit": true,
		"cute.kernel": true, "cute.jit": true, "cutlass.cute.jit": true, "T.prim_func": true, "T.macro": true,
		"tilelang.jit": true, "tir.prim_func": true, "cuda.jit": true, "numba.cuda.jit": true,
		"torch.jit": false, "torch.compile": false, "functools.lru_cache": false, "jax.jit": false, "kernel": false,
		"my.kernel": false, "T.overload": false, "staticmethod": false, "torch.jit.script": false,
	} {
		if got := torchapi.KernelDecorator(name); got != want {
			t.Errorf("KernelDecorator(%q) = %v, want %v", name, got, want)
		}
	}
}

// Kernel DSL bodies other than Triton's are blanked too; a decorator line
// with spaces around its dots and arguments still counts.
func TestBlankKernelsDSLs(t *testing.T) {
	src := `import cutlass.cute as cute
import tilelang
import tilelang.language as T


@cute.kernel
def scale_kernel(mX, n):
    tidx, _, _ = cute.arch.thread_idx()
    mX[tidx] = mX[tidx] * n


@tilelang . jit(out_idx=[1])
def build(M):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        T.clear(A)

    return main


@torch.jit.script
def kept(x):
    return x + 1
`
	out, ok := BlankKernels([]byte(src))
	if !ok {
		t.Fatal("nothing blanked")
	}
	got := string(out)
	for _, gone := range []string{"thread_idx", "T.clear", "return main"} {
		if strings.Contains(got, gone) {
			t.Errorf("kernel body text %q kept:\n%s", gone, got)
		}
	}
	if !strings.Contains(got, "return x + 1") {
		t.Errorf("a TorchScript body was blanked:\n%s", got)
	}
	if len(got) != len(src) || strings.Count(got, "\n") != strings.Count(src, "\n") {
		t.Error("offsets or lines changed")
	}
}
