package flow

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// valuesOfName are the value names the reads of name in function fn's
// body hold.
// valueCase: in function fn, the name holds each of want and none of not.
type valueCase struct {
	fn, name string
	want     []string
	not      []string
}

// checkValueCases checks each case against g (valuesOfName).
func checkValueCases(t *testing.T, g *Graph, cases []valueCase) {
	t.Helper()
	for _, c := range cases {
		got := valuesOfName(g, c.fn, c.name)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %s holds %v, want %s among them", c.fn, c.name, got, w)
			}
		}
		for _, w := range c.not {
			if slices.Contains(got, w) {
				t.Errorf("%s: %s holds %v, want no %s", c.fn, c.name, got, w)
			}
		}
	}
}

func valuesOfName(g *Graph, fn, name string) []string {
	var out []string
	for _, f := range g.Proj.Files {
		for _, x := range f.Funcs {
			if x.FullName() != fn || x.Body == nil {
				continue
			}
			syntax.Walk(x.Body, func(n *syntax.Node) bool {
				if n.Kind() == "identifier" && n.Text(f.Src) == name {
					for _, v := range g.Values(n) {
						switch {
						case v.Cls != nil:
							out = append(out, v.Cls.Qual)
						case v.Fn != nil:
							out = append(out, v.Fn.FullName())
						default:
							out = append(out, v.Ext)
						}
					}
				}
				return true
			})
		}
	}
	return out
}

// An unbound method called with its receiver first (`C.m(obj)`, through
// a variable, through `*args`) binds self; a call through a node that
// holds two classes' unbound `apply` passes its first argument only to
// the self of the class it is an instance of.
func TestSelfTakesOnlyItsClass(t *testing.T) {
	src := `
class Base:
    def apply(self, x):
        return self.run(x)

    def run(self, x):
        return x


class Rope(Base):
    def run(self, x):
        return x


class Attn:
    def apply(self, q):
        self.last = q
        return q


def pick(flag):
    return Rope if flag else Attn


def main(flag, q):
    fn = pick(flag).apply
    fn(Rope(), q)
    fn(Attn(), q)
    Base.apply(Rope(), q)
    m = Attn.apply
    args = (Attn(), q)
    m(*args)
`
	g := Analyze(projectOf(t, map[string]string{"m.py": src}), Options{})
	if got := valuesOfName(g, "m.Base.apply", "self"); !slices.Contains(got, "Rope") || slices.Contains(got, "Attn") {
		t.Errorf("Base.apply's self holds %v, want Rope and not Attn", got)
	}
	if got := valuesOfName(g, "m.Attn.apply", "self"); !slices.Contains(got, "Attn") || slices.Contains(got, "Rope") {
		t.Errorf("Attn.apply's self holds %v, want Attn and not Rope", got)
	}
	// Through self, Base.apply calls Rope.run (the receiver's override).
	if c := strings.Join(callees(g, "m.Base.apply"), " "); !strings.Contains(c, "m.Rope.run") {
		t.Errorf("Base.apply calls %s, want m.Rope.run", c)
	}
}

// A decorator object's `__call__(self, fn)` returning a wrapper is
// applied at each decoration site: a decorated method's name holds its
// own function and the wrapper, not every function that any instance of
// the decorator class decorated.
func TestDecoratorObjectPerSite(t *testing.T) {
	var b strings.Builder
	b.WriteString(`import functools


class Profile:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper


class Null:
    def __call__(self, func):
        return func

`)
	for i := 0; i < 6; i++ {
		deco := "Profile"
		if i%2 == 1 {
			deco = "Null"
		}
		fmt.Fprintf(&b, `
class Stage%d:
    @%s("stage %d")
    def step(self, x):
        return helper%d(x)


def helper%d(x):
    return x


def run%d(x):
    return Stage%d().step(x)
`, i, deco, i, i, i, i, i)
	}
	g := Analyze(projectOf(t, map[string]string{"m.py": b.String()}), Options{})
	for i := 0; i < 6; i++ {
		got := callees(g, fmt.Sprintf("m.run%d", i))
		var steps []string
		for _, c := range got {
			if strings.HasSuffix(c, ".step") {
				steps = append(steps, c)
			}
		}
		want := fmt.Sprintf("m.Stage%d.step", i)
		if len(steps) != 1 || steps[0] != want {
			t.Errorf("run%d calls the steps %v, want only %s", i, steps, want)
		}
	}
	// Stage0's step still reaches its helper, and the wrapper calls no step.
	if c := strings.Join(callees(g, "m.Stage0.step"), " "); !strings.Contains(c, "m.helper0") {
		t.Errorf("Stage0.step calls %s, want m.helper0", c)
	}
	if c := callees(g, "m.Profile.__call__.wrapper"); len(c) > 0 {
		for _, x := range c {
			if strings.HasSuffix(x, ".step") {
				t.Errorf("the shared wrapper calls %s", x)
			}
		}
	}
}

// configProject: n config classes whose fields default to one external
// constant, read through attribute chains that pass one shared helper:
// without widening, the helper's return holds every name derived from the
// constant and each of the n readers gets all of them (n squared facts).
func configProject(n int) map[string]string {
	var b strings.Builder
	b.WriteString("from omegaconf import MISSING\n\n\ndef ident(v):\n    return v\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `
class Cfg%d:
    def __init__(self):
        self.a%d = MISSING


def use%d():
    r = ident(Cfg%d().a%d.b%d)
    return r.c%d
`, i, i, i, i, i, i, i)
	}
	return map[string]string{"cfgs.py": b.String()}
}

// TestExtWidening: a node that holds extCap external names gets the
// summaries of deeper ones, so the facts grow linearly with the configs.
func TestExtWidening(t *testing.T) {
	facts := func(n int) int {
		g := Analyze(projectOf(t, configProject(n)), Options{})
		for i := range g.pts {
			exts := 0
			for _, f := range g.pts[i].facts {
				if g.s.values[f.vid()].Kind == VExt && !strings.HasSuffix(g.s.values[f.vid()].Ext, ".*") {
					exts++
				}
			}
			if exts > extCap {
				t.Fatalf("n=%d: a node holds %d external names, past extCap %d", n, exts, extCap)
			}
		}
		return g.Facts
	}
	f1, f2 := facts(200), facts(400)
	if f2 > 5*f1/2 {
		t.Errorf("facts %d at 200 configs, %d at 400: more than 2.5x per doubling", f1, f2)
	}
}
