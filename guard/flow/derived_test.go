package flow

import (
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/index"
)

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
	var callIt, run *index.Function
	for _, f := range s.proj.Files[0].Funcs {
		switch f.Name {
		case "call_it":
			callIt = f
		case "run":
			run = f
		}
	}
	var pv VID = -1
	for v, val := range s.values {
		if val.Kind == VPartial {
			pv = VID(v)
		}
	}
	if callIt == nil || run == nil || pv < 0 {
		t.Fatalf("fixture: call_it %v, run %v, partial %v", callIt, run, pv)
	}
	f := s.paramNodes(callIt)[0]
	strength := func() uint8 {
		for k, st := range s.calls {
			if k.caller == callIt && k.callee == run {
				return st
			}
		}
		return 0
	}
	s.add(f, pv, sHierarchy)
	s.solve()
	if got := strength(); got != sHierarchy {
		t.Fatalf("call_it -> run after a hierarchy firing: strength %d, want %d", got, sHierarchy)
	}
	s.add(f, pv, sResolved)
	s.solve()
	if got := strength(); got != sResolved {
		t.Errorf("call_it -> run after a resolved firing: strength %d, want %d (the first firing's)", got, sResolved)
	}
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
	var walk, goFn *index.Function
	var bag VID = -1
	for _, f := range s.proj.Files[0].Funcs {
		switch f.Name {
		case "walk":
			walk = f
		case "go":
			goFn = f
		}
	}
	for v, val := range s.values {
		if val.Kind == VInst && val.Cls.Name == "Bag" {
			bag = VID(v)
		}
	}
	if walk == nil || goFn == nil || bag < 0 {
		t.Fatalf("fixture: walk %v, go %v, Bag instances %v", walk, goFn, bag)
	}
	s.add(s.paramNodes(walk)[0], bag, sName)
	s.solve()
	got := uint8(0)
	for k, st := range s.calls {
		if k.caller == walk && k.callee == goFn {
			got = st
		}
	}
	if got != sName {
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
	var grow *index.Function
	for _, f := range s.proj.Files[0].Funcs {
		if f.Name == "grow" {
			grow = f
		}
	}
	var xs, ys VID = -1, -1
	var item VID = -1
	for v, val := range s.values {
		switch {
		case val.Kind == VCont && val.Site != nil && val.Site.Text(s.proj.Files[0].Src) == "[]":
			xs = VID(v)
		case val.Kind == VCont && val.Site != nil && val.Site.Text(s.proj.Files[0].Src) == "[Item()]":
			ys = VID(v)
		case val.Kind == VInst && val.Cls.Name == "Item":
			item = VID(v)
		}
	}
	if grow == nil || xs < 0 || ys < 0 || item < 0 {
		t.Fatalf("fixture: grow %v, xs %v, ys %v, Item %v", grow, xs, ys, item)
	}
	ps := s.paramNodes(grow)
	s.add(ps[0], xs, sName)
	s.add(ps[1], ys, sResolved)
	s.solve()
	got, _ := s.nodes.at(s.values[xs].Elems).pts.get(item)
	if got != sName {
		t.Errorf("an Item in the guessed list's elements at strength %d, want %d (a guess)", got, sName)
	}
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
	var read, run *index.Function
	for _, f := range s.proj.Files[0].Funcs {
		switch f.Name {
		case "read":
			read = f
		case "run":
			run = f
		}
	}
	var cfg VID = -1
	for v, val := range s.values {
		if val.Kind == VInst && val.Cls.Name == "Cfg" {
			cfg = VID(v)
		}
	}
	if read == nil || run == nil || cfg < 0 {
		t.Fatalf("fixture: read %v, run %v, Cfg instances %v", read, run, cfg)
	}
	strength := func() uint8 {
		for k, st := range s.calls {
			if k.caller == read && k.callee == run {
				return st
			}
		}
		return 0
	}
	p := s.paramNodes(read)[0]
	s.add(p, cfg, sHierarchy)
	s.solve()
	if got := strength(); got != sHierarchy {
		t.Fatalf("read -> Sampler.run after a hierarchy firing: strength %d, want %d", got, sHierarchy)
	}
	s.add(p, cfg, sResolved)
	s.solve()
	if got := strength(); got != sResolved {
		t.Errorf("read -> Sampler.run after a resolved firing: strength %d, want %d (the first firing's)", got, sResolved)
	}
}
