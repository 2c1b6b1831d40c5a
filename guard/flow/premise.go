package flow

import "github.com/cudagraph-capguard/capguard/guard/index"

// A resumed solve (Options.ResumeLast) is the whole solve when no step of
// its first part that acted on what was empty, or on what a node held,
// would have acted otherwise with the added file's facts there from the
// start: the strata are monotone fixpoints over those steps' decisions,
// so the decisions are what an added file can change. The first part
// records each decision's premise (premise); the second reports, as it
// adds facts, a premise that no longer holds and any cap reached (a
// cap's outcome depends on the order facts arrive in), in
// Graph.ResumeBroken. Where it reports nothing, the resumed solve made
// the whole solve's decisions; bench/resume.sh checks that against the
// whole solve's fact dump.

// premise records that a decision (what) read node n's content.
func (s *solver) premise(n NID, what string) {
	if s.premises != nil && n >= 0 {
		if _, ok := s.premises[n]; !ok {
			s.premises[n] = what
		}
	}
}

// touched is told of a change to node n's facts while resuming.
func (s *solver) touched(n NID) {
	if s.resuming && s.resumeBroken == "" {
		if what, ok := s.premises[n]; ok {
			s.resumeBroken = "a node that " + what + " read got a fact"
		}
	}
}

// capped is told of a cap reached while resuming.
func (s *solver) capped(what string) {
	if s.resuming && s.resumeBroken == "" {
		s.resumeBroken = what
	}
}

// watchGeneric notes, at the end of the first part, how many calls each
// setter made generic had (setterSeeds: made generic because no call
// bound its parameters).
func (s *solver) watchGeneric() {
	s.genericInvs = map[*index.Function]int{}
	for f := range s.setters.generic {
		s.genericInvs[f] = len(s.setters.invs[f])
	}
}

// genericChanged: a setter made generic in the first part got a call in
// the second.
func (s *solver) genericChanged() bool {
	for f, n := range s.genericInvs {
		if len(s.setters.invs[f]) != n {
			return true
		}
	}
	return false
}
