package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard"
)

// Reused: the stored result of the run before an edit that changed only
// inert comments and blank lines (guard.FileDigest), its findings moved to
// the lines and offsets they have now; nothing was analysed.
const Reused Status = "reused"

// maxReuseEdits bounds the files an edit may change for reuse to be tried
// (each is read and parsed again to compare its digest).
const maxReuseEdits = 16

// reuse returns the entry for the current files when the stored run old
// differs from them only in the contents of a few files whose digests are
// unchanged: the same files in the same order, the same package facts
// (key is the current key; old.Key must be the key of the current files
// with the old contents), each changed file holding the same code lines
// in the same order but for inert comments and blank lines. The findings
// of the changed files move with their lines (guard.Remap). It declines
// (ok false) whenever a stored finding holds a '#' in its text (a message
// quoting code that spans a comment would quote the old comment), starts
// or ends where nothing kept is (a dropped line, an inert comment), or,
// when a changed file's lines moved, whenever some text could quote a
// line number of that file or code spanning lines (mayQuoteLines), or a
// capture map (keyed by line) is merged.
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
		if !ok || before == nil || now.Sum != before.Sum {
			why = files[i] + ": more than inert comments and blank lines changed"
			return nil, false
		}
		fe := old.Files[j]
		fe.Hash, fe.Stat, fe.Digest = hashes[i], stats[i], now
		// Whether the file's lines moved: a file without findings kept no
		// lines (newEntry), so it is taken to have moved.
		moved := true
		var r *guard.Remap
		if before.Lines > 0 {
			if r, ok = guard.NewRemap(before, now); !ok {
				why = files[i] + ": its lines cannot be matched"
				return nil, false
			}
			moved = r.LinesMoved()
		}
		if moved {
			if guard.CaptureMapFile(opts) != "" {
				why = files[i] + ": its lines moved, and the capture map names lines"
				return nil, false
			}
			if t := quotedLines(old, files[i]); t != "" {
				why = files[i] + ": its lines moved, and a finding or warning could quote one: " + t
				return nil, false
			}
		}
		fe.Findings = make([]diagnostic, len(old.Files[j].Findings))
		for k, d := range old.Files[j].Findings {
			if r == nil {
				why = files[i] + ": no lines kept to move its findings"
				return nil, false
			}
			if moved && spansLines(&d.Diagnostic) {
				why = files[i] + ": its lines moved, and a fix's text spans lines"
				return nil, false
			}
			md, ok := moveDiagnostic(d, r)
			if !ok {
				why = files[i] + ": a finding starts or ends where nothing was kept (a dropped line, an inert comment)"
				return nil, false
			}
			fe.Findings[k] = md
		}
		if len(fe.Findings) == 0 && !hasRoot(e.Settings, files[i]) {
			fe.Digest = sumOnly(now)
		}
		e.Files[j] = fe
		// The roots the settings list in the file move with their lines.
		if moved && e.Settings != nil {
			if r == nil {
				for _, root := range e.Settings.Roots {
					if root.Path == files[i] {
						why = files[i] + ": no lines kept to move its roots"
						return nil, false
					}
				}
				continue
			}
			s := *e.Settings
			s.Roots = append([]guard.RootSetting(nil), s.Roots...)
			for k, root := range s.Roots {
				if root.Path != files[i] {
					continue
				}
				if s.Roots[k].Line, ok = r.Line(root.Line); !ok {
					why = files[i] + ": a root's line was dropped"
					return nil, false
				}
			}
			e.Settings = &s
		}
	}
	return e, true
}

// sumOnly is a digest without its lines: all a file without findings
// needs (reuse compares sums; it has no finding to move).
func sumOnly(d *guard.FileDigest) *guard.FileDigest {
	if d == nil {
		return nil
	}
	return &guard.FileDigest{Sum: d.Sum}
}

// hasRoot: the settings list a root in the file.
func hasRoot(s *guard.Settings, path string) bool {
	if s != nil {
		for _, r := range s.Roots {
			if r.Path == path {
				return true
			}
		}
	}
	return false
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

// spansLines: a fix whose new text spans lines could have copied code
// across a blank line that is now gone (or new).
func spansLines(d *guard.Diagnostic) bool {
	if d.Fix == nil {
		return false
	}
	for _, ed := range d.Fix.Edits {
		if strings.Contains(ed.NewText, "\n") {
			return true
		}
	}
	return false
}

// lineRef finds a text's references to a line: "path.py:12" (contexts'
// reasons) and "pkg.mod.fn (line 12)" (severity's assumptions), and any
// other "line 12".
var lineRef = regexp.MustCompile(`(\S*\.py):\d|([A-Za-z_][\w.]*) \(line \d|(?i:\bline\s*\d)|\n`)

// quotedLines returns a text of the stored run (a finding's or a warning)
// that could quote a line number of the file path, or code across its
// lines (a text holding a line break), "" when none does.
func quotedLines(old *entry, path string) string {
	base := filepath.Base(path)
	stem := strings.TrimSuffix(base, ".py")
	if stem == "__init__" {
		stem = filepath.Base(filepath.Dir(path))
	}
	names := func(text string) bool {
		for _, m := range lineRef.FindAllStringSubmatch(text, -1) {
			switch {
			case m[1] != "":
				if filepath.Base(m[1]) == base {
					return true
				}
			case m[2] != "":
				// A qualified name: the file's module is one of its
				// dotted parts.
				for _, part := range strings.Split(m[2], ".") {
					if part == stem {
						return true
					}
				}
			default:
				return true
			}
		}
		return false
	}
	for _, w := range old.Warnings {
		if names(w) {
			return w
		}
	}
	if s := old.Settings; s != nil {
		for _, p := range s.Presets {
			if names(p.Why) {
				return p.Why
			}
		}
		for _, r := range s.Roots {
			if names(r.Why) {
				return r.Why
			}
		}
	}
	for _, f := range old.Files {
		for _, cd := range f.Findings {
			d := &cd.Diagnostic
			texts := append([]string{d.Message, d.Condition}, d.Assumes...)
			if d.Fix != nil {
				texts = append(texts, d.Fix.Message)
			}
			for _, t := range texts {
				if names(t) {
					return t
				}
			}
		}
	}
	return ""
}

// moveDiagnostic moves a stored finding's positions (its start, end and
// fix edits) with their lines.
func moveDiagnostic(d diagnostic, r *guard.Remap) (diagnostic, bool) {
	var ok bool
	if d.Diagnostic.Start, ok = r.Pos(d.Diagnostic.Start); !ok {
		return d, false
	}
	if d.Diagnostic.End, ok = r.Pos(d.Diagnostic.End); !ok {
		return d, false
	}
	if fix := d.Diagnostic.Fix; fix != nil {
		moved := *fix
		moved.Edits = make([]guard.TextEdit, len(fix.Edits))
		for k, ed := range fix.Edits {
			// Normalize set From and To at Start and End.
			if ed.From.Offset != ed.Start || ed.To.Offset != ed.End {
				return d, false
			}
			if ed.From, ok = r.Pos(ed.From); !ok {
				return d, false
			}
			if ed.To, ok = r.Pos(ed.To); !ok {
				return d, false
			}
			ed.Start, ed.End = ed.From.Offset, ed.To.Offset
			moved.Edits[k] = ed
		}
		d.Diagnostic.Fix = &moved
	}
	return d, true
}
