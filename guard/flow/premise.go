package flow

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
)

// A resumed solve (Options.ResumeLast) is the whole solve when no step of
// its first part that acted on what was empty, or on what a node held,
// would have acted otherwise with the added file's facts there from the
// start: the strata are monotone fixpoints over those steps' decisions,
// so the decisions are what an added file can change. The first part
// records each decision's premise (premise); the second reports, as it
// adds facts, a premise that no longer holds and any cap reached (a
// cap's outcome depends on the order facts arrive in), in
// Graph.ResumeBroken. Where it reports nothing, the resumed solve made
// the whole solve's decisions; bench/resume_facts.py checks that against the
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
	if s.resuming {
		if what, ok := s.premises[n]; ok {
			s.broke("a node that " + what + " read got a fact")
		}
	}
}

// capped is told of a cap reached while resuming.
func (s *solver) capped(what string) {
	if s.resuming {
		s.broke(what)
	}
}

// broke counts one reason the resume may differ.
func (s *solver) broke(why string) {
	if s.resumeWhy == nil {
		s.resumeWhy = map[string]int{}
	}
	s.resumeWhy[why]++
}

// resumeBroken says every reason the resume may differ, with how often
// each came up, the most frequent first ("" for none).
func (s *solver) resumeBroken() string {
	whys := make([]string, 0, len(s.resumeWhy))
	for w := range s.resumeWhy {
		whys = append(whys, w)
	}
	sort.Slice(whys, func(i, j int) bool {
		if a, b := s.resumeWhy[whys[i]], s.resumeWhy[whys[j]]; a != b {
			return a > b
		}
		return whys[i] < whys[j]
	})
	for i, w := range whys {
		whys[i] = fmt.Sprintf("%s (%d)", w, s.resumeWhy[w])
	}
	return strings.Join(whys, "; ")
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
