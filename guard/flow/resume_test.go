package flow

import (
	"slices"
	"testing"
)

// ResumeLast adds one file's constraints after every other file was
// solved to the end, as a resumed solve would (the index, the classes
// and their methods, is the whole project's from the start), and that is
// not the whole solve: the strata act on what is empty, and what they
// did stays. Without b.py's call, use's receiver holds nothing when the
// name fallback runs: its guesses stay, its drops go once the callee is
// filled.
func TestResumeLastKeepsStrata(t *testing.T) {
	// a.py is rounds_test.go's unknownReceiver.
	run := func(b, last string) *Graph {
		return Analyze(projectOf(t, map[string]string{"a.py": unknownReceiver, "b.py": b}), Options{ResumeLast: last})
	}
	sorted := func(xs []string) []string { slices.Sort(xs); return xs }

	// A subclass: the fallback takes the family's method by its name (two
	// guesses); b.py then passes a Meter, which resolves the call, and
	// the guess of Manager's method stays. The whole solve never guesses.
	sub := `
from a import Manager, use


class Meter(Manager):
    def current_setting_of_manager(self):
        return 2


def main():
    return use(Meter())
`
	whole, resumed := run(sub, ""), run(sub, "b.py")
	if whole.Resumed != 0 || resumed.Resumed <= 0 {
		t.Fatalf("Resumed: whole %v, resumed %v", whole.Resumed, resumed.Resumed)
	}
	if w := sorted(callees(whole, "a.use")); !slices.Equal(w, []string{"b.Meter.current_setting_of_manager"}) {
		t.Errorf("whole solve: a.use calls %v, want only Meter's method", w)
	}
	if r := sorted(callees(resumed, "a.use")); !slices.Equal(r, []string{"a.Manager.current_setting_of_manager", "b.Meter.current_setting_of_manager"}) {
		t.Errorf("resumed solve: a.use calls %v, want Manager's method (the fallback's guess) and Meter's", r)
	}

	// An unrelated class: the fallback drops the call (two families
	// define the name) while the receiver is empty; once b.py resolves
	// it, the record's premise is gone and so is the record
	// (forgetFilledDrops): it said a call with a callee had none.
	unrelated := `
from a import use


class Meter:
    def current_setting_of_manager(self):
        return 2


def main():
    return use(Meter())
`
	whole, resumed = run(unrelated, ""), run(unrelated, "b.py")
	if len(whole.Dropped) != 0 || len(resumed.Dropped) != 0 {
		t.Errorf("dropped calls: whole %v, resumed %v; want none", whole.Dropped, resumed.Dropped)
	}
	if w, r := callees(whole, "a.use"), callees(resumed, "a.use"); !slices.Equal(w, r) {
		t.Errorf("a.use calls %v in the whole solve, %v resumed", w, r)
	}

	// A path no file has resumes nothing.
	if none := run(sub, "c.py"); none.Resumed != 0 || !slices.Equal(sorted(callees(none, "a.use")), []string{"b.Meter.current_setting_of_manager"}) {
		t.Errorf("ResumeLast c.py: Resumed %v, a.use calls %v", none.Resumed, callees(none, "a.use"))
	}
}
