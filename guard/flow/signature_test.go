package flow

import (
	"slices"
	"sort"
	"testing"
)

// A call goes only to the candidates whose signature takes its arguments.
func TestSignatureRefuses(t *testing.T) {
	src := `import functools

class A:
    def step(self, x, y=None): pass

class B:
    def step(self, x, *, state): pass

class C:
    def step(self, *args, **kwargs): pass

def deco(fn):
    @functools.wraps(fn)
    def inner(*a, **k):
        k.pop("extra", None)
        return fn(*a, **k)
    return inner

class D:
    @deco
    def step(self, x): pass

class E:
    def step(self, x, y, z): pass

objs = [A(), B(), C(), D(), E()]

def by_keyword():
    for o in objs:
        o.step(1, state=2)

def by_position():
    for o in objs:
        o.step(1, 2)

def by_splat(kw):
    for o in objs:
        o.step(1, **kw)

def too_many():
    for o in objs:
        o.step(1, 2, 3)

def decorated_extra():
    for o in objs:
        o.step(1, extra=3)
`
	g := Analyze(projectOf(t, map[string]string{"m.py": src}), Options{})
	for caller, want := range map[string][]string{
		"m.by_keyword":      {"m.B.step", "m.C.step", "m.D.step", "m.deco.inner"},
		"m.by_position":     {"m.A.step", "m.C.step", "m.D.step", "m.deco.inner"},
		"m.by_splat":        {"m.A.step", "m.B.step", "m.C.step", "m.D.step", "m.E.step", "m.deco.inner"},
		"m.too_many":        {"m.C.step", "m.D.step", "m.E.step", "m.deco.inner"},
		"m.decorated_extra": {"m.C.step", "m.D.step", "m.deco.inner"},
	} {
		got := callees(g, caller)
		sort.Strings(got)
		got = slices.Compact(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s calls %v, want %v", caller, got, want)
		}
	}
}
