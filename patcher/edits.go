package patcher

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Edit replaces the bytes [Start, End) of the original source with NewText
// (the shape of guard.TextEdit).
type Edit struct {
	Start, End int
	NewText    string
}

// Change is one fix as the patcher applies it: all of its edits or none.
type Change struct {
	Edits []Edit
}

// Apply applies the changes to src in one pass. Changes are taken in the
// order of their first edit (then as given); a change that is malformed
// (an edit out of range, inverted, or overlapping another edit of the same
// change) or that overlaps an edit already taken is skipped. Two changes
// that make the very same edit do not conflict; the edit is made once.
// Inserted text gets the file's line ending: in a CRLF file a bare "\n" of
// NewText becomes "\r\n".
//
// It returns the new source and, for each change, "" when it was applied or
// the reason it was skipped.
func Apply(src []byte, changes []Change) ([]byte, []string) {
	return apply(src, changes, clash)
}

// clash returns the edit of taken that e duplicates (dup) or overlaps, or
// nil. taken is sorted by (Start, End) and its edits never overlap, so
// their ends are sorted too and the edits that can clash with e are found
// by binary search (a scan of every taken edit made a fix of every line of
// a big file quadratic).
func clash(taken []Edit, e Edit) (t *Edit, dup bool) {
	for k := sort.Search(len(taken), func(k int) bool { return taken[k].End >= e.Start }); k < len(taken) && taken[k].Start <= e.End; k++ {
		if e == taken[k] {
			return &taken[k], true
		}
		if overlaps(e, taken[k]) {
			return &taken[k], false
		}
	}
	return nil, false
}

// apply is Apply with the clash search as a parameter (the tests compare
// clash with a plain scan).
func apply(src []byte, changes []Change, clash func(taken []Edit, e Edit) (*Edit, bool)) ([]byte, []string) {
	reasons := make([]string, len(changes))
	type sorted struct {
		idx   int
		edits []Edit
	}
	order := make([]sorted, 0, len(changes))
	for i, c := range changes {
		edits := append([]Edit(nil), c.Edits...)
		sort.SliceStable(edits, func(a, b int) bool {
			if edits[a].Start != edits[b].Start {
				return edits[a].Start < edits[b].Start
			}
			return edits[a].End < edits[b].End
		})
		if err := checkEdits(edits, len(src)); err != nil {
			reasons[i] = err.Error()
			continue
		}
		if len(edits) == 0 {
			reasons[i] = "no edits"
			continue
		}
		order = append(order, sorted{i, edits})
	}
	sort.SliceStable(order, func(a, b int) bool { return order[a].edits[0].Start < order[b].edits[0].Start })

	var taken []Edit // sorted by (Start, End)
	for _, c := range order {
		var fresh []Edit
		conflict := ""
		for _, e := range c.edits {
			t, dup := clash(taken, e)
			if t != nil && !dup {
				conflict = fmt.Sprintf("overlaps another fix at bytes %d-%d", t.Start, t.End)
				break
			}
			if t == nil {
				fresh = append(fresh, e)
			}
		}
		if conflict != "" {
			reasons[c.idx] = conflict
			continue
		}
		for _, e := range fresh {
			i := sort.Search(len(taken), func(k int) bool {
				t := taken[k]
				return t.Start > e.Start || t.Start == e.Start && t.End > e.End // an insertion before the range it starts
			})
			taken = slices.Insert(taken, i, e)
		}
	}

	crlf := lineEnding(src) == "\r\n"
	var out bytes.Buffer
	out.Grow(len(src))
	pos := 0
	for _, e := range taken {
		out.Write(src[pos:e.Start])
		text := e.NewText
		if crlf {
			text = toCRLF(text)
		}
		out.WriteString(text)
		pos = e.End
	}
	out.Write(src[pos:])
	return out.Bytes(), reasons
}

func checkEdits(edits []Edit, n int) error {
	for i, e := range edits {
		if e.Start < 0 || e.End > n || e.Start > e.End {
			return fmt.Errorf("edit %d-%d is outside the file (%d bytes)", e.Start, e.End, n)
		}
		if i > 0 && overlaps(edits[i-1], e) {
			return fmt.Errorf("its own edits overlap at byte %d", e.Start)
		}
	}
	return nil
}

// overlaps reports whether two edits touch the same bytes, or insert at the
// same place (whose order would be ambiguous). An insertion at the start or
// the end of a replaced range does not overlap it.
func overlaps(a, b Edit) bool {
	if a.Start == a.End && b.Start == b.End {
		return a.Start == b.Start
	}
	return a.Start < b.End && b.Start < a.End
}

// lineEnding returns the file's line ending: "\r\n" when most of its lines
// end so, else "\n".
func lineEnding(src []byte) string {
	n := bytes.Count(src, []byte("\n"))
	crlf := bytes.Count(src, []byte("\r\n"))
	if crlf > 0 && crlf*2 >= n {
		return "\r\n"
	}
	return "\n"
}

// toCRLF turns every bare "\n" of s into "\r\n".
func toCRLF(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "\r\n")
}
