package flow

import (
	"slices"
	"sort"
	"testing"
)

// Each case: the functions `caller` calls, exactly.
func TestPassThroughReturns(t *testing.T) {
	cases := []struct {
		name, src, caller string
		want              []string
	}{{
		name: "identity helper: each call gets its own argument",
		src: `def keep(x):
    return x

def f1(): pass
def f2(): pass

a = keep(f1)
b = keep(f2)

def run():
    a()
`,
		caller: "m.run", want: []string{"m.f1"},
	}, {
		name: "a branch of a conditional expression",
		src: `def pick(x, flag):
    return x if flag else dflt

def dflt(): pass
def f1(): pass
def f2(): pass

a = pick(f1, True)
b = pick(f2, True)

def run():
    a()
`,
		caller: "m.run", want: []string{"m.dflt", "m.f1"},
	}, {
		name: "through a returned call of another pass-through, and a lambda",
		src: `def attach(wrapped, original, meta=None):
    wrapped.meta = meta
    return wrapped

def api(func=None, *, meta=None):
    if func is None:
        return lambda f: attach(f, f, meta=meta)
    return attach(func, func, meta=meta)

@api
def f1(): pass

@api(meta=1)
def f2(): pass

def run():
    f1()
`,
		caller: "m.run", want: []string{"m.f1"},
	}, {
		name: "a parameter the call leaves out is its default",
		src: `def attach(wrapped):
    return wrapped

def api(func=None, *, meta=None):
    return attach(func)

def f1(): pass

x = api(f1)
y = api(meta=2)

def run():
    y()
`,
		caller: "m.run", want: nil,
	}, {
		name: "a method returning self gives the receiver",
		src: `class A:
    def to(self, d):
        return self
    def go(self): pass

class B:
    def to(self, d):
        return self
    def go(self): pass

def helper(x):
    return x

a = helper(A()).to(1)
b = helper(B()).to(1)

def run():
    a.go()
`,
		caller: "m.run", want: []string{"m.A.go"},
	}, {
		name: "negative: a rebound parameter is not passed through",
		src: `def swap(x):
    x = other
    return x

def other(): pass
def f1(): pass
def f2(): pass

a = swap(f1)
b = swap(f2)

def run():
    a()
`,
		caller: "m.run", want: []string{"m.f1", "m.f2", "m.other"},
	}, {
		name: "negative: a splat may give the parameter anything",
		src: `def keep(x):
    return x

def f1(): pass
def f2(): pass

a = keep(f1)
args = [f2]
b = keep(*args)

def run():
    b()
`,
		caller: "m.run", want: []string{"m.f1", "m.f2"},
	}, {
		name: "an element of *args a wrapper forwards to a pass-through",
		src: `def read_dict(d, kinds, keys, default=None):
    for k in keys:
        if k in d:
            return d[k]
    return default

class Config:
    def __init__(self):
        self.d = {}

    def read(self, *args):
        return read_dict(self.d, *args)

def f1(): pass
def f2(): pass

cfg = Config()
a = cfg.read(int, ["a"], f1)
b = cfg.read(int, ["b"], f2)

def run():
    a()
`,
		caller: "m.run", want: []string{"m.f1"},
	}, {
		name: "an element the wrapper's caller leaves out is the callee's default",
		src: `def dflt(): pass
def f1(): pass

def pick(kinds, keys, default=dflt):
    return default

def wrap(*args):
    return pick(*args)

a = wrap(int, ["a"], f1)
b = wrap(int, ["b"])

def run():
    b()
`,
		caller: "m.run", want: []string{"m.dflt"},
	}, {
		name: "negative: a splat at the wrapper's call may give the element anything",
		src: `def pick(kinds, keys, default=None):
    return default

def wrap(*args):
    return pick(*args)

def f1(): pass
def f2(): pass

a = wrap(int, ["a"], f1)
rest = [int, ["b"], f2]
b = wrap(*rest)

def run():
    b()
`,
		caller: "m.run", want: []string{"m.f1", "m.f2"},
	}, {
		name: "negative: a rebound *args is not forwarded as it came",
		src: `def pick(kinds, keys, default=None):
    return default

def wrap(*args):
    args = args[:2] + (f2,)
    return pick(*args)

def f1(): pass
def f2(): pass

a = wrap(int, ["a"], f1)

def run():
    a()
`,
		caller: "m.run", want: []string{"m.f1", "m.f2"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := Analyze(projectOf(t, map[string]string{"m.py": c.src}), Options{})
			got := callees(g, c.caller)
			sort.Strings(got)
			got = slices.Compact(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s calls %v, want %v", c.caller, got, c.want)
			}
		})
	}
}

// A property getter that returns self, read without a call's arguments,
// still gives the receiver (retFull).
func TestPassThroughWithoutCall(t *testing.T) {
	src := `class Ctx:
    def __enter__(self):
        return self
    def __exit__(self, *a): pass
    def go(self): pass

def run():
    with Ctx() as c:
        c.go()
`
	g := Analyze(projectOf(t, map[string]string{"m.py": src}), Options{})
	if got := callees(g, "m.run"); !slices.Contains(got, "m.Ctx.go") {
		t.Errorf("m.run calls %v, want m.Ctx.go among them", got)
	}
}

// A return after `if p is None: return ...` runs only for other p: a call
// that passes None (or leaves p to its default None) does not get it, a
// decoration site (the definition itself) gets only it.
func TestNegativeReturnGuards(t *testing.T) {
	src := `def wrap(fn):
    return fn

def other(x):
    return x

def api(func=None, *, meta=None):
    if func is None:
        return wrap
    return other

def f1(): pass

d = api(meta=1)

@api
def f2(): pass

def run():
    d(f1)

def run2():
    f2(1)
`
	g := Analyze(projectOf(t, map[string]string{"m.py": src}), Options{})
	for caller, want := range map[string][]string{
		"m.run":  {"m.wrap"},
		"m.run2": {"m.other"},
	} {
		got := callees(g, caller)
		sort.Strings(got)
		got = slices.Compact(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s calls %v, want %v", caller, got, want)
		}
	}
}
