package flow

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// calleeLines are the def lines of what the function named caller calls
// (redefined functions share a name: the line tells them apart).
func calleeLines(g *Graph, caller string) []int {
	var out []int
	for f, es := range g.Out {
		if f.FullName() == caller {
			for _, e := range es {
				out = append(out, e.Callee.Line())
			}
		}
	}
	sort.Ints(out)
	return slices.Compact(out)
}

// A function body reads a module global when it runs, after the import:
// it sees the last of the name's unconditional module-level bindings. Code
// that runs at import sees the binding in effect there; a conditional
// binding, a `global` statement, a call during the import of a function
// that reads the name, a project import between the bindings and a star
// import keep every binding. Each case: the def lines `run` calls.
func TestLastBinding(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []int
	}{{
		name: "a def redefined: the last",
		files: map[string]string{"m.py": `def f():
    pass

def f():
    pass

def run():
    f()
`},
		want: []int{4},
	}, {
		name: "a decorated def redefined, and an import redefined by a def",
		files: map[string]string{"m.py": `import functools
from os import g

@functools.lru_cache
def f():
    pass

@functools.lru_cache
def f():
    pass

def g():
    pass

def run():
    f()
    g()
`},
		want: []int{9, 12},
	}, {
		name: "module-level code reads the binding in effect: an alias",
		files: map[string]string{"m.py": `def f():
    pass

alias = f

def run():
    alias()

def f():
    pass
`},
		want: []int{1},
	}, {
		name: "... and a default value",
		files: map[string]string{"m.py": `def f():
    pass

def run(h=f, k=lambda g=f: g):
    h()
    k()()

def f():
    pass
`},
		want: []int{1, 4}, // f's first def, the lambda
	}, {
		name: "a redefinition under a condition keeps both",
		files: map[string]string{"m.py": `import os

def f():
    pass

if os.environ.get("FAST"):
    def f():
        pass

def run():
    f()
`},
		want: []int{3, 7},
	}, {
		name: "a try/except fallback keeps both",
		files: map[string]string{"m.py": `def slow():
    pass

f = slow
try:
    from fastlib import f
except ImportError:
    def f():
        pass

def run():
    f()
`},
		want: []int{1, 8},
	}, {
		name: "a global statement keeps both",
		files: map[string]string{"m.py": `def f():
    pass

def f():
    pass

def reset():
    global f
    f = None

def run():
    f()
`},
		want: []int{1, 4},
	}, {
		name: "a function called during the import that reads the name keeps both",
		files: map[string]string{"m.py": `def pick():
    return f

def f():
    pass

chosen = pick()

def f():
    pass

def run():
    chosen()
`},
		want: []int{4, 9},
	}, {
		name: "... also through a project decorator and a class made at import",
		files: map[string]string{"m.py": `def register(fn):
    fn()
    return fn

class Table:
    def __init__(self):
        self.fn = f

def f():
    pass

@register
def warm():
    return f

t = Table()

def f():
    pass

def run():
    t.fn()
`},
		want: []int{9, 18},
	}, {
		name: "a project import between the bindings keeps both (it may import back)",
		files: map[string]string{"m.py": `def f():
    pass

import other

def f():
    pass

def run():
    f()
`, "other.py": `import m

early = m.f
`},
		want: []int{1, 6},
	}, {
		name: "a call of a project module's function between the bindings keeps both (it may call back)",
		files: map[string]string{"m.py": `import other
from other import setup

def f():
    pass

other.prepare()

def f():
    pass

def g():
    pass

@setup
def h():
    pass

def g():
    pass

def run():
    f()
    g()
`, "other.py": `def prepare():
    pass

def setup(fn):
    return fn
`},
		want: []int{4, 9, 12, 19},
	}, {
		name: "... and an external one does not",
		files: map[string]string{"m.py": `import os

def f():
    pass

os.getcwd()

def f():
    pass

def run():
    f()
`},
		want: []int{8},
	}, {
		name: "a star import keeps both",
		files: map[string]string{"m.py": `from other import *

def f():
    pass

def f():
    pass

def run():
    f()
`, "other.py": `x = 1
`},
		want: []int{3, 6},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := Analyze(projectOf(t, c.files), Options{})
			if got := calleeLines(g, "m.run"); !slices.Equal(got, c.want) {
				t.Errorf("m.run calls the defs at lines %v, want %v", got, c.want)
			}
		})
	}
}

// TestLastBindingLinear: n copies of one module in one file (every name
// redefined n times, each launcher calling the kernel wrapper by name)
// give each caller one callee (the last kernel), so the call edges and the solver's facts
// grow linearly with n (the merged bindings gave n callees to each of n
// callers).
func TestLastBindingLinear(t *testing.T) {
	module := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "import torch\n\nPAGE = 16\n\n\ndef _kernel(x, page=PAGE):\n    return x * page\n\n\ndef launch(x):\n    return _kernel(x) + %d\n\n\n", i)
		}
		return b.String()
	}
	edges := func(n int) (int, int) {
		g := Analyze(projectOf(t, map[string]string{"m.py": module(n)}), Options{})
		e := 0
		for _, es := range g.Out {
			e += len(es)
		}
		return e, g.Facts
	}
	e1, f1 := edges(200)
	e2, f2 := edges(400)
	if e1 != 200 || e2 != 400 {
		t.Errorf("call edges: %d for 200 copies, %d for 400; want one a copy (each launch calls the last kernel)", e1, e2)
	}
	if g := float64(f2) / float64(f1); g > 2.2 {
		t.Errorf("points-to facts: %d for 200 copies, %d for 400: %.1fx for twice the size", f1, f2, g)
	}
}
