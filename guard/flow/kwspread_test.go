package flow

import (
	"slices"
	"testing"
)

// Keywords keep their names through `**`: a dictionary literal, dict(),
// and a `**kwargs` parameter's container spread into a call send key k to
// the parameter named k only (or under k into the callee's own
// `**kwargs`); kwargs["k"], kwargs.get("k") and setdefault read one key;
// a key no parameter takes goes nowhere. A dictionary that got an element
// under no constant key spreads that element to every keyword parameter,
// and its other keys by name still (keyed.go, loose elements).
// `Rec(**d)` of a record without a project __init__ sets its fields by
// key.
func TestKwargsKeepNames(t *testing.T) {
	src := `
class Sched:
    def step(self):
        return 1


class Block:
    def run(self):
        return 2


class Other:
    pass


def leaf(x, scheduler=None, block=None):
    scheduler.step()
    block.run()
    x


def middle(x, **kwargs):
    leaf(x, **kwargs)
    got = kwargs.get("scheduler")
    sub = kwargs["block"]
    kwargs


def top():
    args = {"scheduler": Sched(), "block": Block()}
    middle(Other(), **args)


def conv(input_tensor):
    input_tensor


def wrong_target():
    args = {"scheduler": Sched()}
    conv(**args)


def copied(x, **kwargs):
    dense = dict(kwargs)
    dense.setdefault("block", Block())
    leaf2(x, **dense)


def leaf2(x, scheduler=None, block=None):
    scheduler
    block
    x


def top2():
    copied(Other(), scheduler=Sched())


def unkeyed_leaf(a=None, b=None):
    a
    b


def unkeyed(name):
    d = {}
    d[name] = Sched()
    d["b"] = Block()
    unkeyed_leaf(**d)


@dataclass
class Rec:
    sched: object
    block: object


def record():
    r = Rec(**{"sched": Sched(), "block": Block()})
    s2 = r.sched
    b2 = r.block
`
	g := Analyze(projectOf(t, map[string]string{"m.py": src}), Options{})
	checkValueCases(t, g, []valueCase{
		{"m.leaf", "scheduler", []string{"Sched"}, []string{"Block", "Other"}},
		{"m.leaf", "block", []string{"Block"}, []string{"Sched", "Other"}},
		{"m.leaf", "x", []string{"Other"}, []string{"Sched", "Block"}},
		{"m.middle", "got", []string{"Sched"}, []string{"Block"}},
		{"m.middle", "sub", []string{"Block"}, []string{"Sched"}},
		{"m.conv", "input_tensor", nil, []string{"Sched"}},
		{"m.leaf2", "scheduler", []string{"Sched"}, []string{"Block", "Other"}},
		{"m.leaf2", "block", []string{"Block"}, []string{"Sched", "Other"}},
		{"m.unkeyed_leaf", "a", []string{"Sched"}, []string{"Block"}},
		{"m.unkeyed_leaf", "b", []string{"Sched", "Block"}, nil},
		{"m.record", "s2", []string{"Sched"}, []string{"Block"}},
		{"m.record", "b2", []string{"Block"}, []string{"Sched"}},
	})
	if c := callees(g, "m.leaf"); !slices.Contains(c, "m.Sched.step") || !slices.Contains(c, "m.Block.run") {
		t.Errorf("m.leaf calls %v, want Sched.step and Block.run", c)
	}
}

// A dictionary keeps its keys whatever is put into it under no constant
// key (a computed key, an update from a dictionary whose keys are not
// known, a literal's computed key): a read by a constant key gets that
// key's values and the loose ones, never another key's; a read by a
// computed key, iteration and values() get every element; a dictionary
// that reads another's loose elements through an update or a ** holds
// them loose too; a list still loses its indexes to an append.
func TestDictLooseElements(t *testing.T) {
	src := `
class A:
    pass


class B:
    pass


class C:
    pass


class D:
    pass


def make(name, pairs):
    cfg = {"a": A(), "b": B()}
    cfg[name] = C()
    cfg.update({k: v for k, v in pairs})
    return cfg


def reader(name, pairs):
    cfg = make(name, pairs)
    got_a = cfg["a"]
    got_b = cfg.get("b")
    got_any = cfg[name]
    for v in cfg.values():
        each = v
    copy = {}
    copy.update(cfg)
    copy_a = copy["a"]
    spread = {**cfg}
    spread_b = spread["b"]


def literal(name):
    d = {"a": A(), name: C()}
    lit_a = d["a"]
    lit_b = d.get("b")


def late(name):
    d = {"a": A()}
    first = d["a"]
    d[name] = D()


def lists():
    xs = [A(), B()]
    xs.append(C())
    list_0 = xs[0]
`
	g := Analyze(projectOf(t, map[string]string{"m.py": src}), Options{})
	checkValueCases(t, g, []valueCase{
		{"m.reader", "got_a", []string{"A", "C"}, []string{"B"}},
		{"m.reader", "got_b", []string{"B", "C"}, []string{"A"}},
		{"m.reader", "got_any", []string{"A", "B", "C"}, nil},
		{"m.reader", "each", []string{"A", "B", "C"}, nil},
		{"m.reader", "copy_a", []string{"A", "C"}, []string{"B"}},
		{"m.reader", "spread_b", []string{"B", "C"}, []string{"A"}},
		{"m.literal", "lit_a", []string{"A", "C"}, nil},
		{"m.literal", "lit_b", []string{"C"}, []string{"A"}},
		// A reader served before the loose element arrives gets it then.
		{"m.late", "first", []string{"A", "D"}, nil},
		{"m.lists", "list_0", []string{"A", "B", "C"}, nil},
	})
}
