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
// under no constant key spreads every element to every keyword parameter.
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
		{"m.unkeyed_leaf", "a", []string{"Sched", "Block"}, nil},
		{"m.unkeyed_leaf", "b", []string{"Sched", "Block"}, nil},
		{"m.record", "s2", []string{"Sched"}, []string{"Block"}},
		{"m.record", "b2", []string{"Block"}, []string{"Sched"}},
	})
	if c := callees(g, "m.leaf"); !slices.Contains(c, "m.Sched.step") || !slices.Contains(c, "m.Block.run") {
		t.Errorf("m.leaf calls %v, want Sched.step and Block.run", c)
	}
}
