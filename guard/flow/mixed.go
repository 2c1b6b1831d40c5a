package flow

// Mixed nodes. A node that turned a guess away (add: it held guessCap
// values at name strength) holds the guesses that came first, some of
// many: which ones is an accident of the solve's order. Passed on, that
// subset made every node the node reaches hold up to guessCap arbitrary
// guesses, and a call through one of them that held fewer than maxGuesses
// made call edges to an arbitrary few of the callees it may have. On a
// 275k-line video model, 98% of the nodes holding its most widespread
// instance held it as such a guess, in a node at the cap.
//
// So a mixed node passes no guess on (sendNew, sendAll), takes no new one
// (add), and makes every node its values reach mixed too: the
// destinations of its edges and of the reads through it (an attribute,
// an element, a call's result), now and when they are made later. A call
// whose callee node is mixed makes no call edge by name (mixedSites): its
// guesses are some of many, as for a call with maxGuesses of them. Values
// at a higher strength flow as before.

// markMixed makes node n mixed and spreads it to what n reaches.
func (s *solver) markMixed(n NID) {
	// Which guesses a mixed node passed on before it mixed depends on
	// the order they came in (premise.go).
	s.capped("a node mixed")
	for work := s.mixInto(nil, n); len(work) > 0; {
		m := work[len(work)-1]
		nd := s.nodes.at(m)
		work = work[:len(work)-1]
		for i := range nd.edges {
			work = s.mixInto(work, nd.edges[i].dst)
		}
		for _, ci := range s.consOf(m) {
			work = s.mixInto(work, s.mixedDst(ci))
		}
	}
}

// mixInto makes node n mixed, if it is not, and adds it to work.
func (s *solver) mixInto(work []NID, n NID) []NID {
	if n < 0 || s.nodes.at(n).mixed {
		return work
	}
	s.nodes.at(n).mixed = true
	s.mixedNodes++
	return append(work, n)
}

// mixCons makes mixed what constraint ci, watching a mixed node, reads
// into.
func (s *solver) mixCons(ci int32) { s.markMixed(s.mixedDst(ci)) }

// mixedDst is the node constraint ci reads into when it watches the node
// it reads through (a load, a call's result, an element), else noNode.
func (s *solver) mixedDst(ci int32) NID {
	c := s.cons.at(ci)
	switch c.kind {
	case cLoad, cCall, cElemLoad, cIter, cMethod, cSlice, cEnter, cSelfRet, cKwSplat:
		return c.dst
	}
	return noNode
}

// sendAll calls f for each value of node n, the guesses left out where n
// is mixed.
func (s *solver) sendAll(n NID, f func(VID, uint8)) {
	nd := s.nodes.at(n)
	if !nd.mixed {
		nd.pts.each(f)
		return
	}
	nd.pts.each(func(v VID, st uint8) {
		if st != sName {
			f(v, st)
		}
	})
}

// mixedSites are the call sites whose callee node is mixed: their guesses
// make no call edge (Analyze).
func (s *solver) mixedSites() map[*Node]bool {
	out := map[*Node]bool{}
	for i := 0; i < s.nodes.len(); i++ {
		nd := s.nodes.at(NID(i))
		if !nd.mixed {
			continue
		}
		for _, ci := range s.consOf(NID(i)) {
			if c := s.cons.at(ci); c.kind == cCall && c.site != nil {
				out[c.site] = true
			}
		}
	}
	return out
}
