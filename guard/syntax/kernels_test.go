package syntax

import (
	"strings"
	"testing"
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
