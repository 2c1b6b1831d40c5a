package cache

import (
	"fmt"
	"os"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard"
)

// Reused: the stored result of the run before an edit that changed only
// inert comments (guard.FileDigest), its offsets moved past the edited
// comments; nothing was analysed.
const Reused Status = "reused"

// maxReuseEdits bounds the files an edit may change for reuse to be tried
// (each is read and parsed again to compare its digest).
const maxReuseEdits = 16

// reuse returns the entry for the current files when the stored run old
// differs from them only in the contents of a few files whose digests are
// unchanged: the same files in the same order, the same package facts
// (key is the current key; old.Key must be the key of the current files
// with the old contents), each changed file parsing to the same tree but
// for the text of its inert comments. The findings of the changed files
// have their offsets moved by the comments' change in length (lines do
// not move: a comment holds no newline; a column moves only after a
// comment on its line). It declines (ok false) whenever a stored finding
// holds a '#' in its text (a message quoting code that spans a comment
// would quote the old comment) or has an offset inside an inert comment.
func reuse(opts guard.Options, id, key string, old *entry, files, hashes []string, stats []fileStat, pkgs map[string]bool) (e *entry, ok bool) {
	why := ""
	defer func() {
		if !ok && why != "" && os.Getenv("CAPGUARD_TIMING") != "" {
			fmt.Fprintf(os.Stderr, "capguard: cache: stored result not reused: %s\n", why)
		}
	}()
	prev := make(map[string]int, len(old.Files))
	for j, f := range old.Files {
		prev[f.Path] = j
	}
	oldHashes := make([]string, len(files))
	var changed []int
	for i, f := range files {
		j, found := prev[f]
		if !found || old.Files[j].Hash == "" {
			why = f + " is new"
			return nil, false
		}
		oldHashes[i] = old.Files[j].Hash
		if hashes[i] != oldHashes[i] {
			changed = append(changed, i)
			if len(changed) > maxReuseEdits {
				why = "more than " + fmt.Sprint(maxReuseEdits) + " files changed"
				return nil, false
			}
		}
	}
	if len(changed) == 0 || resultKey(id, files, oldHashes, pkgs) != old.Key {
		why = "the files or packages changed"
		return nil, false
	}
	for _, f := range old.Files {
		for _, d := range f.Findings {
			if quotesComment(&d.Diagnostic) {
				why = "a finding's text holds a '#'"
				return nil, false
			}
		}
	}
	// Copy what changes: the file entries (findings moved, new hashes,
	// stats and digests).
	e = &entry{}
	*e = *old
	e.Key = key
	e.Files = append([]fileEntry(nil), old.Files...)
	for _, i := range changed {
		j := prev[files[i]]
		before := old.Files[j].Digest
		now, ok := guard.DigestFile(files[i], opts.Config, opts.MaxFileSize)
		if !ok || before == nil || now.Sum != before.Sum || len(now.Comments) != len(before.Comments) {
			why = files[i] + ": more than inert comments changed"
			return nil, false
		}
		fe := old.Files[j]
		fe.Hash, fe.Stat, fe.Digest = hashes[i], stats[i], now
		fe.Findings = make([]diagnostic, len(old.Files[j].Findings))
		for k, d := range old.Files[j].Findings {
			moved, ok := moveDiagnostic(d, before.Comments, now.Comments)
			if !ok {
				why = files[i] + ": a finding starts or ends inside an edited comment"
				return nil, false
			}
			fe.Findings[k] = moved
		}
		e.Files[j] = fe
	}
	return e, true
}

// quotesComment reports whether a finding's text could hold a comment's.
func quotesComment(d *guard.Diagnostic) bool {
	if strings.Contains(d.Message, "#") || strings.Contains(d.Condition, "#") {
		return true
	}
	for _, a := range d.Assumes {
		if strings.Contains(a, "#") {
			return true
		}
	}
	if d.Fix != nil {
		if strings.Contains(d.Fix.Message, "#") {
			return true
		}
		for _, ed := range d.Fix.Edits {
			if strings.Contains(ed.NewText, "#") {
				return true
			}
		}
	}
	return false
}

// moveDiagnostic moves a stored finding's offsets (its start, end and fix
// edits) from the old comments' lengths to the new ones'.
func moveDiagnostic(d diagnostic, before, now [][3]int) (diagnostic, bool) {
	var ok bool
	if d.Diagnostic.Start, ok = movePos(d.Diagnostic.Start, before, now); !ok {
		return d, false
	}
	if d.Diagnostic.End, ok = movePos(d.Diagnostic.End, before, now); !ok {
		return d, false
	}
	if fix := d.Diagnostic.Fix; fix != nil {
		moved := *fix
		moved.Edits = make([]guard.TextEdit, len(fix.Edits))
		for k, ed := range fix.Edits {
			if ed.Start, ok = moveOffset(ed.Start, before, now); !ok {
				return d, false
			}
			if ed.End, ok = moveOffset(ed.End, before, now); !ok {
				return d, false
			}
			if ed.From, ok = movePos(ed.From, before, now); !ok {
				return d, false
			}
			if ed.To, ok = movePos(ed.To, before, now); !ok {
				return d, false
			}
			moved.Edits[k] = ed
		}
		d.Diagnostic.Fix = &moved
	}
	return d, true
}

// moveOffset is off after the comments' change in length; false when off
// is inside a comment (past its '#').
func moveOffset(off int, before, now [][3]int) (int, bool) {
	delta := 0
	for k, c := range before {
		if off <= c[0] {
			break
		}
		if off < c[1] {
			return 0, false
		}
		delta += (now[k][1] - now[k][0]) - (c[1] - c[0])
	}
	return off + delta, true
}

// movePos moves a position: its offset, and its column past a comment
// on its own line.
func movePos(p guard.Pos, before, now [][3]int) (guard.Pos, bool) {
	off, ok := moveOffset(p.Offset, before, now)
	if !ok {
		return p, false
	}
	for k, c := range before {
		if c[2] == p.Line && c[1] <= p.Offset {
			p.Column += (now[k][1] - now[k][0]) - (c[1] - c[0])
		}
	}
	p.Offset = off
	return p, true
}
