package flow

import (
	"fmt"
	"strings"
	"testing"
)

// A value that holds itself: a partial of a partial of itself (a loop
// that wraps a function in partials), an nn.Sequential of itself, an
// except clause's tuple that holds itself. Each call through one derives a
// constraint that watches the value's own elements; the solver expanded
// them without end (a stack overflow on two corpus repositories). It must
// finish, with the call still resolved.
func TestSelfHoldingValues(t *testing.T) {
	src := `import functools
import torch.nn as nn


def kernel(a, b, c):
    return a


def wrap(fn, n):
    for i in range(n):
        fn = functools.partial(fn, i)
    return fn


def run():
    f = wrap(kernel, 3)
    return f()


class Block(nn.Module):
    def forward(self, x):
        return x


def stack(layers):
    seq = nn.Sequential(*layers)
    layers.append(seq)
    seq = nn.Sequential(*layers)
    return seq(1)


def stack_all():
    return stack([Block(), Block()])


errs = (ValueError,)
errs = (errs, KeyError)


def guarded():
    try:
        run()
    except errs as e:
        return e
`
	g := Analyze(projectOf(t, map[string]string{"pkg/cyc.py": src}), Options{})
	found := false
	for f, es := range g.Out {
		if f.Name != "run" {
			continue
		}
		for _, e := range es {
			if e.Callee.Name == "kernel" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("run() -> kernel through the self-holding partial not resolved")
	}
}

// Partials nested n deep: the solver's nested firings grow with n; the Go
// stack must not (past maxFireDepth they are deferred to the worklist),
// and the constraints made grow at most linearly.
func TestDeepPartialsLinear(t *testing.T) {
	cons := func(n int) int {
		t.Helper()
		var b strings.Builder
		b.WriteString("import functools\n\n\ndef kernel(*a):\n    return a\n\n\nf0 = kernel\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "f%d = functools.partial(f%d, %d)\n", i, i-1, i)
		}
		fmt.Fprintf(&b, "\n\ndef run():\n    return f%d()\n", n)
		g := Analyze(projectOf(t, map[string]string{"pkg/deep.py": b.String()}), Options{})
		ok := false
		for f, es := range g.Out {
			for _, e := range es {
				ok = ok || f.Name == "run" && e.Callee.Name == "kernel"
			}
		}
		if !ok {
			t.Errorf("%d nested partials: run() -> kernel not resolved", n)
		}
		return g.Constraints
	}
	a, b := cons(500), cons(1000)
	if b > 3*a {
		t.Errorf("constraints: %d for 500 nested partials, %d for 1000: more than linear", a, b)
	}
}
