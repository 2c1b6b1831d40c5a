package cache

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"sort"
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
func reuse(opts guard.Options, id, key string, old *entry, files, hashes []string, stats []fileStat, pkgs map[string]bool, pack string) (e *entry, ok bool) {
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
	all := func(yield func(*guard.Diagnostic) bool) {
		for _, f := range old.Files {
			for k := range f.Findings {
				if !yield(&f.Findings[k].Diagnostic) {
					return
				}
			}
		}
	}
	var kept map[string][]byte // the pack's texts, read when a kernel's text changed
	var changedDigests []*guard.FileDigest
	for _, i := range changed {
		j := prev[files[i]]
		var now *guard.FileDigest
		if src, open := opts.Overlay[files[i]]; open {
			now, ok = guard.DigestSource(files[i], src, opts.Config, opts.MaxFileSize, old.Relevance)
		} else {
			now, ok = guard.DigestFile(files[i], opts.Config, opts.MaxFileSize, old.Relevance)
		}
		if !ok {
			why = files[i] + ": no digest (a syntax error?)"
			return nil, false
		}
		fe := old.Files[j]
		ds := make([]*guard.Diagnostic, len(fe.Findings))
		for k := range fe.Findings {
			ds[k] = &fe.Findings[k].Diagnostic
		}
		oldText := func(hash string) []byte {
			if kept == nil {
				kept = readKernels(pack)
			}
			return kept[hash]
		}
		unread := func(now *guard.FileDigest, names []string) string {
			src, err := readSource(files[i], opts.Overlay)
			if err != nil {
				return err.Error()
			}
			return guard.UnreadNames(now, src, names, otherTexts(files, i, opts.Config, opts.Overlay))
		}
		moved, settings, reason := moveFile(files[i], fe.Digest, now, oldText, unread, ds, all, old.Warnings, e.Settings, guard.CaptureMapFile(opts) != "")
		if reason != "" {
			why = reason
			return nil, false
		}
		changedDigests = append(changedDigests, now)
		fe.Hash, fe.Stat, fe.Digest = hashes[i], stats[i], now
		fe.Findings = make([]diagnostic, len(moved))
		for k := range moved {
			fe.Findings[k] = diagnostic{Order: old.Files[j].Findings[k].Order, Diagnostic: moved[k]}
		}
		e.Settings = settings
		if len(fe.Findings) == 0 && !hasRoot(e.Settings, files[i]) {
			fe.Digest = sumOnly(now)
		}
		e.Files[j] = fe
	}
	// The changed files' kernels now, for the next edit.
	appendKernels(pack, changedDigests)
	return e, true
}

// moveFile moves one changed file's findings ds, and the settings' roots
// in it, from its version with digest before to the one with digest now;
// why says why not ("" when moved). all are every finding of the run and
// warnings its warnings (a text that could quote one of the file's lines
// stops the move when they move); captureMap: the run merged a capture
// map (it names lines).
func moveFile(path string, before, now *guard.FileDigest, oldText func(hash string) []byte, unread func(now *guard.FileDigest, names []string) string, ds []*guard.Diagnostic, all iter.Seq[*guard.Diagnostic], warnings []string,
	settings *guard.Settings, captureMap bool) (moved []guard.Diagnostic, s *guard.Settings, why string) {
	if before == nil || now == nil || now.Sum != before.Sum {
		return nil, nil, path + ": more than inert comments, blank lines and kernel bodies changed"
	}
	if same, why := guard.SameKernels(before, now, oldText); !same {
		return nil, nil, path + ": " + why
	}
	if names := guard.ChangedUnitNames(before, now); len(names) > 0 {
		// Literals bound at module level came, went or changed: the same
		// analysis only when nothing reads their names (guard.InertUnit)
		// and the solve counted no fact against its budget that a new
		// binding's fact could have pushed past it.
		for _, w := range warnings {
			if guard.BudgetWarning(w) {
				return nil, nil, path + ": a module-level literal changed, and the run passed its fact budget"
			}
		}
		if why := unread(now, names); why != "" {
			return nil, nil, path + ": a module-level literal changed, and its name may be read: " + why
		}
	}
	// Whether the file's lines moved: a file without findings or roots
	// kept no lines (newEntry) but their hash (guard.FileDigest.Kept); one
	// stored before it was kept is taken to have moved.
	lines := true
	var r *guard.Remap
	if before.Lines > 0 {
		var ok bool
		if r, ok = guard.NewRemap(before, now); !ok {
			return nil, nil, path + ": its lines cannot be matched"
		}
		lines = r.LinesMoved()
	} else if before.Kept != "" {
		lines = now.KeptLines() != before.Kept
	}
	if lines {
		if captureMap {
			return nil, nil, path + ": its lines moved, and the capture map names lines"
		}
		if t := quotedLines(all, warnings, settings, path); t != "" {
			return nil, nil, path + ": its lines moved, and a finding or warning could quote one: " + t
		}
	} else if t := quotesBlankLine(all); t != "" {
		// The kept lines have their numbers, so the dropped ones too; a
		// text copied across lines that holds neither a '#' (checked
		// before) nor a blank line copied no dropped line, and copies the
		// same bytes now. One with a blank line may have copied a blank
		// line whose spaces changed.
		return nil, nil, path + ": a finding's text holds a blank line: " + t
	}
	if before.Device || now.Device {
		// Lines of a kernel body were left out whatever they hold (code):
		// a capture map's coverage reads lines above a finding's, and a
		// text across lines could have copied one. No node holds such a
		// line (the blanked body is `...`, on the first line, which is
		// kept), so only a text that copies the file's lines from one node
		// to another could: a fix of a finding in the file, or a warning.
		if captureMap {
			return nil, nil, path + ": a kernel body's lines were not compared, and the capture map names lines"
		}
		if t := spansAnyLine(all, warnings, path); t != "" {
			return nil, nil, path + ": a kernel body's lines were not compared, and a text spans lines: " + t
		}
	}
	if t := quotesDocstring(all); t != "" {
		// A docstring's text is left out of the digest.
		return nil, nil, path + ": a finding's text holds triple quotes (a docstring's text is not compared): " + t
	}
	moved = make([]guard.Diagnostic, len(ds))
	for k, d := range ds {
		if r == nil {
			return nil, nil, path + ": no lines kept to move its findings"
		}
		if lines && spansLines(d) {
			return nil, nil, path + ": its lines moved, and a fix's text spans lines"
		}
		md, ok := moveDiagnostic(*d, r)
		if !ok {
			return nil, nil, path + ": a finding starts or ends where nothing was kept (a dropped line, an inert comment)"
		}
		moved[k] = md
	}
	// The roots the settings list in the file move with their lines.
	if !lines || settings == nil || !hasRoot(settings, path) {
		return moved, settings, ""
	}
	if r == nil {
		return nil, nil, path + ": no lines kept to move its roots"
	}
	cp := *settings
	cp.Roots = append([]guard.RootSetting(nil), cp.Roots...)
	for k, root := range cp.Roots {
		if root.Path != path {
			continue
		}
		var ok bool
		if cp.Roots[k].Line, ok = r.Line(root.Line); !ok {
			return nil, nil, path + ": a root's line was dropped"
		}
	}
	return moved, &cp, ""
}

// sumOnly is a digest without its lines: all a file without findings
// needs (reuse compares sums; it has no finding to move).
func sumOnly(d *guard.FileDigest) *guard.FileDigest {
	if d == nil {
		return nil
	}
	return &guard.FileDigest{Sum: d.Sum, Device: d.Device, Kernels: d.Kernels, Units: d.Units, Kept: d.KeptLines()}
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

// spansAnyLine returns a text of the run (a warning, or a text of a
// finding in the file path or of its fix) that holds a line break, ""
// when none does.
func spansAnyLine(all iter.Seq[*guard.Diagnostic], warnings []string, path string) string {
	for _, w := range warnings {
		if strings.Contains(w, "\n") {
			return w
		}
	}
	for d := range all {
		if d.Path != path {
			continue
		}
		texts := append([]string{d.Message, d.Condition}, d.Assumes...)
		if d.Fix != nil {
			texts = append(texts, d.Fix.Message)
			for _, ed := range d.Fix.Edits {
				texts = append(texts, ed.NewText)
			}
		}
		for _, t := range texts {
			if strings.Contains(t, "\n") {
				return t
			}
		}
	}
	return ""
}

// blankInside: a blank line inside a text.
var blankInside = regexp.MustCompile(`\n[ \t\r\f]*\n`)

// quotesBlankLine returns a text of a finding (its fix's new texts too)
// holding a blank line, "" when none does.
func quotesBlankLine(all iter.Seq[*guard.Diagnostic]) string {
	for d := range all {
		texts := append([]string{d.Message, d.Condition}, d.Assumes...)
		if d.Fix != nil {
			texts = append(texts, d.Fix.Message)
			for _, ed := range d.Fix.Edits {
				texts = append(texts, ed.NewText)
			}
		}
		for _, t := range texts {
			if blankInside.MatchString(t) {
				return t
			}
		}
	}
	return ""
}

// quotesDocstring returns a text of a finding (its fix's new texts too)
// that could quote a docstring (it holds triple quotes), "" when none
// does.
func quotesDocstring(all iter.Seq[*guard.Diagnostic]) string {
	for d := range all {
		texts := append([]string{d.Message, d.Condition}, d.Assumes...)
		if d.Fix != nil {
			texts = append(texts, d.Fix.Message)
			for _, ed := range d.Fix.Edits {
				texts = append(texts, ed.NewText)
			}
		}
		for _, t := range texts {
			if strings.Contains(t, `"""`) || strings.Contains(t, "'''") {
				return t
			}
		}
	}
	return ""
}

// lineRef finds a text's references to a line: "path.py:12" (contexts'
// reasons), "pkg.mod.fn (line 12)" (severity's assumptions), "pkg.mod.fn,
// line 12" and "pkg.mod, line 12" (the contexts' remote calls, backward
// chains and graphed callables name the function or module whose line it
// is), and any other "line 12".
var lineRef = regexp.MustCompile(`(\S*\.py):\d|([A-Za-z_][\w.]*)(?: \(line|, line) \d|(?i:\bline\s*\d)|\n`)

// quotedLines returns a text of the run (a finding's, a warning or a
// setting's reason) that could quote a line number of the file path, or
// code across its lines (a text holding a line break), "" when none does.
func quotedLines(all iter.Seq[*guard.Diagnostic], warnings []string, settings *guard.Settings, path string) string {
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
	for _, w := range warnings {
		if names(w) {
			return w
		}
	}
	if s := settings; s != nil {
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
	for d := range all {
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
	return ""
}

// moveDiagnostic moves a finding's positions (its start, end and fix
// edits) with their lines.
func moveDiagnostic(d guard.Diagnostic, r *guard.Remap) (guard.Diagnostic, bool) {
	var ok bool
	if d.Start, ok = r.Pos(d.Start); !ok {
		return d, false
	}
	if d.End, ok = r.Pos(d.End); !ok {
		return d, false
	}
	if fix := d.Fix; fix != nil {
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
		if fix.Edits == nil {
			moved.Edits = nil
		}
		d.Fix = &moved
	}
	return d, true
}

// ReuseResult is reuse for a result kept in memory (capguard server): res
// is a run's result with its digests (Options.Digests), changed the new
// contents of the files that changed since (by path, as findings name
// them), maxFileSize the run's option. It returns res with the changed
// files' findings, fix edits and roots moved and their sources replaced,
// and the digests now, when every changed file differs only in inert
// comments and blank lines; else why not.
func ReuseResult(res *guard.Result, digests map[string]*guard.FileDigest, changed map[string][]byte, maxFileSize int64) (*guard.Result, map[string]*guard.FileDigest, string) {
	if res == nil || digests == nil || len(changed) == 0 || len(changed) > maxReuseEdits {
		return nil, nil, "no result, or no file or too many files changed"
	}
	for _, d := range res.Diagnostics {
		if quotesComment(d) {
			return nil, nil, "a finding's text holds a '#'"
		}
	}
	all := func(yield func(*guard.Diagnostic) bool) {
		for _, d := range res.Diagnostics {
			if !yield(d) {
				return
			}
		}
	}
	captureMap := res.Config != nil && res.Config.CaptureMap != ""
	diags := append([]*guard.Diagnostic(nil), res.Diagnostics...)
	settings := res.Settings
	now := make(map[string]*guard.FileDigest, len(digests))
	for p, d := range digests {
		now[p] = d
	}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if res.Source(p) == nil {
			return nil, nil, p + ": not parsed by the run"
		}
		d, ok := guard.DigestSource(p, changed[p], res.Config, maxFileSize, res.Relevance)
		if !ok {
			return nil, nil, p + ": no digest (a syntax error?)"
		}
		var idx []int
		var ds []*guard.Diagnostic
		for k, x := range diags {
			if x.Path == p {
				idx = append(idx, k)
				ds = append(ds, x)
			}
		}
		before := digests[p]
		oldText := func(hash string) []byte {
			if before == nil {
				return nil
			}
			return before.KernelText(hash)
		}
		unread := func(now *guard.FileDigest, names []string) string {
			return guard.UnreadNames(now, changed[p], names, func(yield func(string, []byte) bool) {
				for q := range digests {
					if q == p {
						continue
					}
					text := changed[q]
					if text == nil {
						text = res.Source(q)
					}
					if !yield(q, text) {
						return
					}
				}
				if c := res.Config; c != nil && c.Path != "" {
					if text, err := os.ReadFile(c.Path); err == nil {
						yield(c.Path, text)
					}
				}
			})
		}
		moved, s, why := moveFile(p, before, d, oldText, unread, ds, all, res.Warnings, settings, captureMap)
		if why != "" {
			return nil, nil, why
		}
		for n, k := range idx {
			m := moved[n]
			diags[k] = &m
		}
		settings, now[p] = s, d
	}
	return res.Moved(diags, settings, changed), now, ""
}

// otherTexts are the texts of the run's files but files[skip], read from
// disk, and the configuration's (guard.UnreadNames).
func otherTexts(files []string, skip int, cfg *guard.Config, overlay map[string][]byte) func(yield func(string, []byte) bool) {
	return func(yield func(string, []byte) bool) {
		for i, f := range files {
			if i == skip {
				continue
			}
			text, err := readSource(f, overlay)
			if err != nil {
				text = []byte("\x00") // unreadable now: it could hold anything
			}
			if !yield(f, text) {
				return
			}
		}
		if cfg != nil && cfg.Path != "" {
			if text, err := os.ReadFile(cfg.Path); err == nil {
				yield(cfg.Path, text)
			}
		}
	}
}

// readSource is a file's bytes as the run reads them: its buffer, else
// the disk's.
func readSource(path string, overlay map[string][]byte) ([]byte, error) {
	if src, open := overlay[path]; open {
		return src, nil
	}
	return os.ReadFile(path)
}
