package flow

import "testing"

// An instance of a project class that derives from a builtin container
// keeps its elements (storage.go): indexing, get, values(), iteration and
// stores reach them where no project class defines the method; an override
// of __setitem__ runs and its super().__setitem__ stores; a constructor
// without a project __init__ fills it as dict(...) does; a class that
// defines __getitem__ itself keeps its own.
func TestContainerSubclassStorage(t *testing.T) {
	src := `
from collections import OrderedDict


class A:
    pass


class B:
    pass


class C:
    pass


class Cfg(dict):
    pass


class Locked(dict):
    def __setitem__(self, k, v):
        super().__setitem__(k, v)


class Cache(OrderedDict):
    pass


class Table(dict):
    pass


class Items(list):
    pass


class Own(dict):
    def __getitem__(self, k):
        return C()


def f(name):
    cfg = Cfg({"a": A()}, b=B())
    got_a = cfg["a"]
    got_b = cfg.get("b")
    for v in cfg.values():
        each = v
    lk = Locked()
    lk["c"] = C()
    lk_c = lk["c"]
    lk_a = lk.get("a")
    cache = Cache()
    cache[name] = A()
    cached = cache["x"]
    xs = Items()
    xs.append(B())
    for x in xs:
        item = x
    table = Table()
    table.__setitem__("a", A())
    table_a = table["a"]
    table_b = table.get("b")
    own = Own()
    put(own)
    own_a = own["a"]


def put(o):
    o["a"] = A()
`
	g := Analyze(projectOf(t, map[string]string{"m.py": src}), Options{})
	checkValueCases(t, g, []valueCase{
		{"m.f", "got_a", []string{"A"}, []string{"B"}},
		{"m.f", "got_b", []string{"B"}, []string{"A"}},
		{"m.f", "each", []string{"A", "B"}, nil},
		{"m.f", "lk_c", []string{"C"}, nil},
		// The override stores under its parameter: a loose element.
		{"m.f", "lk_a", []string{"C"}, nil},
		{"m.f", "cached", []string{"A"}, nil},
		{"m.f", "item", []string{"B"}, nil},
		{"m.f", "own_a", []string{"C"}, []string{"A"}},
		// __setitem__ called by name stores under its constant key.
		{"m.f", "table_a", []string{"A"}, nil},
		{"m.f", "table_b", nil, []string{"A"}},
	})
}
