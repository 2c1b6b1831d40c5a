package flow

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// meterSubclass passes use (rounds_test.go's unknownReceiver) a subclass
// of Manager: the call the name fallback guessed for while the receiver
// was empty is then resolved.
const meterSubclass = `
from a import Manager, use


class Meter(Manager):
    def current_setting_of_manager(self):
        return 2


def main():
    return use(Meter())
`

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
	sub := meterSubclass
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

// A resumed solve says when it may not be the whole solve (premise.go),
// and where it says nothing its facts are the whole solve's, line for
// line in the fact dump. b.py's call fills the receiver the name
// fallback guessed for while it was empty: broken, and the dumps differ
// (the guess stays). A c.py that reaches nothing of a.py's decisions
// (its own class, its own call) leaves them standing: the same dump.
func TestResumeSaysWhenItMayDiffer(t *testing.T) {
	solve := func(files map[string]string, last string) (*Graph, []string) {
		path := filepath.Join(t.TempDir(), "facts.txt")
		g := Analyze(projectOf(t, files), Options{ResumeLast: last, FactDump: path})
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return g, strings.Split(string(b), "\n")
	}
	sub := meterSubclass
	files := map[string]string{"a.py": unknownReceiver, "b.py": sub}
	_, whole := solve(files, "")
	g, resumed := solve(files, "b.py")
	if g.ResumeBroken == "" {
		t.Errorf("b.py fills the receiver the fallback guessed for, and the resume says nothing")
	}
	if slices.Equal(whole, resumed) {
		t.Errorf("the resumed dump equals the whole one, though the fallback's guess stays")
	}
	own := `
class Clock:
    def tick(self):
        return 3


def main():
    c = Clock()
    return c.tick()
`
	files = map[string]string{"a.py": unknownReceiver, "c.py": own}
	_, whole = solve(files, "")
	g, resumed = solve(files, "c.py")
	if g.Resumed <= 0 || g.ResumeBroken != "" {
		t.Errorf("c.py reaches none of a.py's decisions: Resumed %v, ResumeBroken %q", g.Resumed, g.ResumeBroken)
	}
	if !slices.Equal(whole, resumed) {
		t.Errorf("a resume that kept every decision dumps other facts than the whole solve:\nwhole\n%s\nresumed\n%s", strings.Join(whole, "\n"), strings.Join(resumed, "\n"))
	}
}
