package flow

import "testing"

// solvedOnce builds a solver for src (one file, m.py) and runs the first
// solve, before any seeding round.
func solvedOnce(t *testing.T, src string) *solver {
	t.Helper()
	s := newSolver(projectOf(t, map[string]string{"m.py": src}))
	s.budget, s.ceiling = factBudget, factCeiling
	s.build(s.proj.Files)
	s.builtQuals()
	s.solve()
	if len(s.methodSites) == 0 {
		t.Fatal("no method site recorded")
	}
	return s
}

const unknownReceiver = `
class Manager:
    def current_setting_of_manager(self):
        return 1


def use(mgr):
    return mgr.current_setting_of_manager()
`

// TestFallbackCountsChangesOnly: the name fallback counts a call only when
// seeding it changed the solve. A receiver that turns its seeds away (a
// mixed node takes no new guess) is seeded again every round and changes
// nothing: counting it ran the seeding rounds to their limit (lmdeploy's
// and DeepSpeed's solves did three rounds more, for identical findings).
func TestFallbackCountsChangesOnly(t *testing.T) {
	s := solvedOnce(t, unknownReceiver)
	for _, ms := range s.methodSites {
		if ms.recv >= 0 {
			s.markMixed(ms.recv)
		}
	}
	first := s.nameFallback()
	s.solve()
	v := s.version()
	if again := s.nameFallback(); again != 0 {
		t.Errorf("a second name fallback that seeds nothing new counted %d calls (the first: %d), want 0", again, first)
	}
	if s.version() != v {
		t.Errorf("the second fallback changed the solve: %v -> %v", v, s.version())
	}
	// Without the mix, the seed is new: counted once.
	if n := solvedOnce(t, unknownReceiver).nameFallback(); n != 1 {
		t.Errorf("name fallback counted %d calls, want 1 (a new seed)", n)
	}
}
