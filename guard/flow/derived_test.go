package flow

import (
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/index"
)

// The tests below solve a one-file project once, then send one value into a
// parameter by hand at a chosen strength, solve again and read what the
// solve derived from it.

// funcNamed is the function of s's only file named name.
func funcNamed(t *testing.T, s *solver, name string) *index.Function {
	t.Helper()
	for _, f := range s.proj.Files[0].Funcs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("fixture: no function %s", name)
	return nil
}

// valueWhere is the last value of s that ok accepts.
func valueWhere(t *testing.T, s *solver, what string, ok func(Value) bool) VID {
	t.Helper()
	var found VID = -1
	for v, val := range s.values {
		if ok(val) {
			found = VID(v)
		}
	}
	if found < 0 {
		t.Fatalf("fixture: no value %s", what)
	}
	return found
}

// instancesOf is the value standing for the instances of the class named cls.
func instancesOf(t *testing.T, s *solver, cls string) VID {
	return valueWhere(t, s, "instances of "+cls, func(v Value) bool { return v.Kind == VInst && v.Cls.Name == cls })
}

// callStrength is the strength of the call edge caller -> callee (0: none).
func callStrength(s *solver, caller, callee *index.Function) uint8 {
	for k, st := range s.calls {
		if k.caller == caller && k.callee == callee {
			return st
		}
	}
	return 0
}

// sendTwice sends v into node n at hierarchy strength, then at resolved,
// solving after each, and checks the call edge caller -> callee after
// each: as strong as the firing so far, not stuck at the first.
func sendTwice(t *testing.T, s *solver, n NID, v VID, caller, callee *index.Function) {
	t.Helper()
	for _, st := range []uint8{sHierarchy, sResolved} {
		s.add(n, v, st)
		s.solve()
		if got := callStrength(s, caller, callee); got != st {
			t.Errorf("%s -> %s after a firing at strength %d: strength %d, want %d", caller.Name, callee.Name, st, got, st)
		}
	}
}

// TestPartialCallStrengthens: a call through a functools.partial is as
// strong as the strongest firing of the partial at that call, not the
// first. A partial made at one site is one value, which a call's callee
// node may get weakly (through a receiver seeded from the class hierarchy)
// before it gets it strongly: the call's edge kept the first strength, so
// the edge's kind followed the order the files were built in (lightllm's
// layer templates calling `self._copy_kv_to_mem_cache`, a partial bound in
// a subclass: hierarchy in one order, annotated in the other).
func TestPartialCallStrengthens(t *testing.T) {
	s := solvedOnce(t, `from functools import partial


def run(x):
    return x


P = partial(run)


def call_it(f, x):
    return f(x)


def use(x):
    return P.func(x)
`)
	callIt := funcNamed(t, s, "call_it")
	pv := valueWhere(t, s, "partial", func(v Value) bool { return v.Kind == VPartial })
	sendTwice(t, s, s.paramNodes(callIt)[0], pv, callIt, funcNamed(t, s, "run"))
}

// TestGetterKeyStrengthens: a subscript with a literal key of an object
// whose __getitem__ returns getattr(self, key) reads that attribute as
// strongly as the object is known at its strongest firing, not its first.
func TestGetterKeyStrengthens(t *testing.T) {
	s := solvedOnce(t, `class Cfg:
    def __getitem__(self, key):
        return getattr(self, key)


class Sampler:
    def run(self):
        return 1


def read(cfg):
    return cfg["sampler"].run()


def make():
    c = Cfg()
    c.sampler = Sampler()
    return c.missing_method_for_fixture()
`)
	read := funcNamed(t, s, "read")
	sendTwice(t, s, s.paramNodes(read)[0], instancesOf(t, s, "Cfg"), read, funcNamed(t, s, "run"))
}

// TestIterCapped: what iterating an object gives through its __iter__ is
// known no more strongly than the object: a receiver held only as a guess
// gives guesses, not resolved values (a call on them is a guess too).
func TestIterCapped(t *testing.T) {
	s := solvedOnce(t, `class Item:
    def go(self):
        return 1


class Bag:
    def __iter__(self):
        return iter([Item()])


def walk(b):
    for x in b:
        x.go()


def use():
    return Bag().__iter__()
`)
	walk := funcNamed(t, s, "walk")
	s.add(s.paramNodes(walk)[0], instancesOf(t, s, "Bag"), sName)
	s.solve()
	if got := callStrength(s, walk, funcNamed(t, s, "go")); got != sName {
		t.Errorf("walk -> Item.go through a guessed Bag: strength %d, want %d (a guess)", got, sName)
	}
}

// TestExtendCapped: `xs.extend(ys)` on a container known only as a guess
// puts ys's elements into it as guesses, as `xs.append(y)` does.
func TestExtendCapped(t *testing.T) {
	s := solvedOnce(t, `class Item:
    def go(self):
        return 1


def grow(xs, ys):
    xs.extend(ys)


def make():
    xs = []
    ys = [Item()]
    return xs, ys
`)
	src := s.proj.Files[0].Src
	listAt := func(text string) VID {
		return valueWhere(t, s, "the list "+text, func(v Value) bool { return v.Kind == VCont && v.Site != nil && v.Site.Text(src) == text })
	}
	xs, ys := listAt("[]"), listAt("[Item()]")
	ps := s.paramNodes(funcNamed(t, s, "grow"))
	s.add(ps[0], xs, sName)
	s.add(ps[1], ys, sResolved)
	s.solve()
	if got, _ := s.nodes.at(s.values[xs].Elems).pts.get(instancesOf(t, s, "Item")); got != sName {
		t.Errorf("an Item in the guessed list's elements at strength %d, want %d (a guess)", got, sName)
	}
}
