package patcher

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard"
	"github.com/cudagraph-capguard/capguard/templates"
)

// DefaultMaxRounds bounds the analyse-and-fix rounds of Fix.
const DefaultMaxRounds = 5

// Options for Fix.
type Options struct {
	// Paths, Select, Ignore, ConfigPath and Config are passed to guard.Run
	// (Config, when set, is used as it is; else one is discovered).
	Paths          []string
	Select, Ignore []string
	ConfigPath     string
	Config         *guard.Config
	// Overlay maps a path (as guard names it) to contents to fix instead of
	// the disk's. Fix never reads such a file's contents from disk, but the
	// path must exist there (guard discovers the paths it checks on disk).
	Overlay map[string][]byte
	// UnsafeFixes applies unsafe fixes too. Display-only fixes never apply.
	UnsafeFixes bool
	// HelperModule, when set, overrides the configuration's helper-module:
	// files get `from <HelperModule> import persistent_buffer` instead of
	// the helper's source.
	HelperModule string
	// InlineHelper inserts the helper's source into each file that needs
	// it where no helper module is configured, instead of the shared
	// module Fix otherwise writes once per top-level package
	// (AutoHelperModule).
	InlineHelper bool
	// MaxFileSize is passed to guard.Run (bytes; 0: the config's limit,
	// negative: none).
	MaxFileSize int64
	// Progress is passed to guard.Run, every round.
	Progress func(guard.Progress)
	// MaxRounds bounds the rounds; 0 means DefaultMaxRounds.
	MaxRounds int
	// Analyze runs the checker; nil means guard.Run. Tests plug in their own.
	Analyze func(guard.Options) (*guard.Result, error)
}

// Finding is a diagnostic as the fix report shows it.
type Finding struct {
	Path          string `json:"path"`
	Code          string `json:"code"`
	Line          int    `json:"line"`
	Column        int    `json:"column"`
	Message       string `json:"message"`
	Fix           string `json:"fix,omitempty"`           // the fix's message
	Applicability string `json:"applicability,omitempty"` // the fix's, "" when there is none
	Round         int    `json:"round,omitempty"`         // the round it was applied in
}

// Skipped is a fix that was not applied, and why.
type Skipped struct {
	Finding
	Reason string `json:"reason"`
}

// File is what Fix did to one file.
type File struct {
	Path     string
	Original []byte // as read
	Fixed    []byte // the bytes --write writes; equal to Original when nothing applied
	// Encoding is the file's PEP 263 encoding as declared ("" for UTF-8):
	// fixes are made in the decoded text and Fixed is encoded back in it,
	// so Original, Fixed and Diff are in the file's own encoding.
	Encoding string
	// text is Fixed decoded (UTF-8): what guard analysed last and what the
	// fixes' offsets point into.
	text    []byte
	Diff    string // unified diff from Original to Fixed; "" when equal
	Applied []Finding
	Skipped []Skipped
	// Helper is "inserted" (the helper's source), "imported" (from the
	// helper module) or "" (not needed, or already there).
	Helper string
	// Created is set on the shared helper module Fix adds (Original is
	// nil): Write creates it, and refuses to replace a file already there.
	Created bool
	// Written is set by Result.Write once the fixed bytes are on disk;
	// WriteErr says why they are not.
	Written  bool
	WriteErr error
}

// Changed reports whether the file's bytes change.
func (f *File) Changed() bool { return !bytes.Equal(f.Original, f.Fixed) }

// Result of Fix.
type Result struct {
	Files     []*File           // files with a fix applied or skipped, sorted by path
	Errors    []guard.FileError // files that could not be analysed or fixed: nothing is written for them
	Remaining []Finding         // findings left after the last round
	// UnsafeHidden counts remaining findings whose fix is unsafe and was
	// not enabled (--unsafe-fixes would apply it).
	UnsafeHidden int
	Rounds       int  // analyse-and-fix rounds that changed something
	Converged    bool // false when fixes were still left after MaxRounds
	// Checked counts the Python files the last round checked; Warnings are
	// its run warnings (guard.Result.Warnings).
	Checked  int
	Warnings []string
}

// File returns the result for path, or nil.
func (r *Result) File(path string) *File {
	for _, f := range r.Files {
		if f.Path == path {
			return f
		}
	}
	return nil
}

// Changed returns the files whose bytes change.
func (r *Result) Changed() []*File {
	var out []*File
	for _, f := range r.Files {
		if f.Changed() {
			out = append(out, f)
		}
	}
	return out
}

// Applied counts the fixes applied.
func (r *Result) Applied() int {
	n := 0
	for _, f := range r.Files {
		n += len(f.Applied)
	}
	return n
}

// Diff returns the diffs of every changed file, in path order: the patch
// `capguard fix` prints.
func (r *Result) Diff() string {
	var b strings.Builder
	for _, f := range r.Files {
		b.WriteString(f.Diff)
	}
	return b.String()
}

// Write writes every changed file with WriteFile, each atomically and on
// its own: a file that cannot be written (read-only, in a read-only folder,
// edited on disk since it was read) keeps its bytes, gets WriteErr, and the
// others are still written. It returns the errors joined, or nil.
func (r *Result) Write() error {
	var errs []error
	for _, f := range r.Changed() {
		f.WriteErr = writeFixed(f)
		f.Written = f.WriteErr == nil
		if f.WriteErr != nil {
			errs = append(errs, f.WriteErr)
		}
	}
	return errors.Join(errs...)
}

// writeFixed writes f.Fixed unless the file on disk is no longer
// f.Original: the fixes were made for those bytes.
func writeFixed(f *File) error {
	if f.Created {
		return createFile(f.Path, f.Fixed)
	}
	cur, err := os.ReadFile(f.Path)
	if err != nil {
		return fmt.Errorf("%s: %w; not written", f.Path, bare(err))
	}
	if !bytes.Equal(cur, f.Original) {
		return fmt.Errorf("%s: changed on disk while capguard ran; not written (run capguard fix again)", f.Path)
	}
	return WriteFile(f.Path, f.Fixed)
}

// Fix analyses opts.Paths with guard, applies the chosen fixes in memory and
// repeats with the fixed contents until no fix is left or MaxRounds rounds
// ran. It writes nothing: see Result.Write. An error means nothing could be
// done (bad options, a configuration error); per-file problems are in
// Result.Errors and those files are left out.
func Fix(opts Options) (*Result, error) {
	analyze := opts.Analyze
	if analyze == nil {
		analyze = guard.Run
	}
	maxRounds := opts.MaxRounds
	if maxRounds <= 0 {
		maxRounds = DefaultMaxRounds
	}
	overlay := make(map[string][]byte, len(opts.Overlay))
	for p, src := range opts.Overlay {
		overlay[p] = src
	}
	gopts := guard.Options{Paths: opts.Paths, Select: opts.Select, Ignore: opts.Ignore,
		ConfigPath: opts.ConfigPath, Config: opts.Config, Overlay: overlay, MaxFileSize: opts.MaxFileSize,
		Progress: opts.Progress}

	res := &Result{Converged: true}
	files := map[string]*File{}
	modules := map[string]*helperModule{} // shared helper modules to create, by path
	refusedFile := map[string]string{}    // path -> why the patcher leaves it alone
	refusedFix := map[string]string{}     // fixKey -> why it is never tried again
	var last *guard.Result
	for round := 1; ; round++ {
		an, err := analyze(gopts)
		if err != nil {
			return nil, err
		}
		last = an
		if gopts.Config == nil {
			gopts.Config = an.Config // discovered once; later rounds use it as it is
		}
		byPath := map[string][]*guard.Diagnostic{}
		for _, d := range an.Diagnostics {
			if d.Fix != nil && allowed(d.Fix.Applicability, opts.UnsafeFixes) &&
				refusedFile[d.Path] == "" && refusedFix[fixKey(d, current(files, d.Path))] == "" {
				byPath[d.Path] = append(byPath[d.Path], d)
			}
		}
		if len(byPath) == 0 {
			break
		}
		if round > maxRounds {
			res.Converged = false
			break
		}
		module := opts.HelperModule
		if module == "" && an.Config != nil {
			module = an.Config.HelperModule
		}
		changed := false
		for _, path := range sortedKeys(byPath) {
			fileModule := module
			var auto *helperModule
			if fileModule == "" && !opts.InlineHelper {
				if auto = autoHelperModule(path); auto != nil {
					fileModule = auto.name
				}
			}
			f := files[path]
			if f == nil {
				var err error
				f, err = openFile(path, an, opts.Overlay)
				if err != nil {
					refusedFile[path] = err.Error()
					continue
				}
				files[path] = f
			}
			before := f.Helper
			out := fixFile(f, byPath[path], round, fileModule, refusedFix)
			if auto != nil && f.Helper == "imported" && before != "imported" {
				modules[auto.path] = auto
			}
			if !bytes.Equal(out, f.text) {
				enc, err := guard.EncodeSource(out, f.Encoding) // fixFile kept only encodable fixes
				if err != nil {
					refusedFile[path] = fmt.Sprintf("the fixed file cannot be written in its encoding %s: %v; not fixed", f.Encoding, err)
					delete(files, path)
					continue
				}
				f.text, f.Fixed = out, enc
				overlay[path] = enc
				changed = true
			}
		}
		if !changed {
			break
		}
		res.Rounds = round
	}

	res.Errors = append(res.Errors, last.Errors...)
	res.Checked, res.Warnings = last.Files, last.Warnings
	for _, path := range sortedKeys(refusedFile) {
		if !hasError(res.Errors, path) {
			res.Errors = append(res.Errors, guard.FileError{Path: path, Message: refusedFile[path]})
		}
	}
	sort.SliceStable(res.Errors, func(i, j int) bool { return res.Errors[i].Path < res.Errors[j].Path })
	for _, d := range last.Diagnostics {
		fd := finding(d, 0)
		res.Remaining = append(res.Remaining, fd)
		if d.Fix != nil && d.Fix.Applicability == guard.Unsafe && !opts.UnsafeFixes {
			res.UnsafeHidden++
		}
		if f := files[d.Path]; f != nil && d.Fix != nil && allowed(d.Fix.Applicability, opts.UnsafeFixes) {
			reason := refusedFix[fixKey(d, f.text)]
			if reason == "" {
				reason = fmt.Sprintf("still offered after %d rounds", res.Rounds)
			}
			f.Skipped = append(f.Skipped, Skipped{Finding: fd, Reason: reason})
		}
	}
	for _, path := range sortedKeys(files) {
		f := files[path]
		if len(f.Applied) == 0 && len(f.Skipped) == 0 {
			continue
		}
		f.Diff = UnifiedDiff(f.Path, f.Original, f.Fixed)
		res.Files = append(res.Files, f)
	}
	for _, path := range sortedKeys(modules) {
		if _, err := os.Stat(path); err == nil {
			continue // already there, with the helper (autoHelperModule checked)
		}
		body := []byte(templates.PersistentBuffer)
		res.Files = append(res.Files, &File{Path: path, Fixed: body, text: body, Created: true, Helper: "module",
			Diff: NewFileDiff(path, body)})
	}
	sort.SliceStable(res.Files, func(i, j int) bool { return res.Files[i].Path < res.Files[j].Path })
	return res, nil
}

// fixFile applies one round of fixes to f.Fixed and returns the new bytes.
// A fix whose result would not parse is refused for good (refusedFix); one
// that overlaps another waits for the next round.
func fixFile(f *File, diags []*guard.Diagnostic, round int, module string, refusedFix map[string]string) []byte {
	src := f.text
	encodable := func(b []byte) bool {
		_, err := guard.EncodeSource(b, f.Encoding)
		return err == nil
	}
	changes := make([]Change, len(diags))
	for i, d := range diags {
		changes[i] = Change{Edits: edits(d.Fix.Edits)}
	}
	out, reasons := Apply(src, changes)
	if !guard.ParseOK(out) || !encodable(out) {
		// Find the culprits: take the fixes one by one, keeping each that
		// leaves the file parsing.
		var keep []Change
		out = src
		for i := range changes {
			if reasons[i] != "" {
				continue
			}
			try, rs := Apply(src, append(keep, changes[i]))
			if rs[len(rs)-1] == "" && guard.ParseOK(try) && encodable(try) {
				keep = append(keep, changes[i])
				out = try
				continue
			}
			reasons[i] = "the fixed file would not parse"
			if guard.ParseOK(try) {
				reasons[i] = "the fixed text cannot be written in the file's encoding " + f.Encoding
			}
			refusedFix[fixKey(diags[i], src)] = reasons[i]
		}
	}
	var applied []Finding
	needsHelper := false
	for i, d := range diags {
		if reasons[i] != "" {
			continue
		}
		applied = append(applied, finding(d, round))
		needsHelper = needsHelper || d.Fix.NeedsHelper
	}
	if needsHelper {
		// EnsureHelper returns no error only with output that parses.
		withHelper, inserted, err := EnsureHelper(out, module)
		switch {
		case err != nil:
			// Cannot happen for a file that parses; refuse the round rather
			// than leave calls to an undefined helper.
			for i, d := range diags {
				if reasons[i] == "" {
					refusedFix[fixKey(d, src)] = "the persistent-buffer helper could not be inserted"
				}
			}
			return src
		case inserted && module != "":
			f.Helper = "imported"
		case inserted:
			f.Helper = "inserted"
		}
		if !encodable(withHelper) {
			for i, d := range diags {
				if reasons[i] == "" {
					refusedFix[fixKey(d, src)] = "the persistent-buffer helper cannot be written in the file's encoding " + f.Encoding
				}
			}
			return src
		}
		out = withHelper
	}
	f.Applied = append(f.Applied, applied...)
	return out
}

// current returns the text guard analysed last for path: the fixed text of
// a file already read, else nil (the key of a fix never refused).
func current(files map[string]*File, path string) []byte {
	if f := files[path]; f != nil {
		return f.text
	}
	return nil
}

// openFile starts a File from the text guard analysed (its offsets point
// into it; Write refuses the file if the disk no longer holds it). A file
// in another encoding than UTF-8 is read again as bytes, and refused unless
// they decode to that text.
func openFile(path string, an *guard.Result, overlay map[string][]byte) (*File, error) {
	text := an.Source(path)
	var raw []byte
	enc := ""
	if text == nil { // an Analyze that keeps no sources (tests)
		var err error
		if raw, err = readSource(path, overlay); err != nil {
			return nil, err
		}
		if text, enc, err = guard.DecodeSource(raw); err != nil {
			return nil, err
		}
	} else if enc = guard.DeclaredEncoding(text); guard.IsUTF8(enc) {
		raw = text
	} else {
		var err error
		if raw, err = readSource(path, overlay); err != nil {
			return nil, err
		}
		if dec, _, err := guard.DecodeSource(raw); err != nil || !bytes.Equal(dec, text) {
			return nil, fmt.Errorf("changed on disk while capguard ran; not fixed (run capguard fix again)")
		}
	}
	for _, e := range an.Errors {
		if e.Path == path && e.Syntax {
			return nil, fmt.Errorf("has a syntax error; not fixed")
		}
	}
	if !guard.ParseOK(text) {
		return nil, fmt.Errorf("has a syntax error; not fixed")
	}
	return &File{Path: path, Original: raw, Fixed: raw, Encoding: enc, text: text}, nil
}

func edits(in []guard.TextEdit) []Edit {
	out := make([]Edit, len(in))
	for i, e := range in {
		out[i] = Edit{Start: e.Start, End: e.End, NewText: e.NewText}
	}
	return out
}

func allowed(a guard.Applicability, unsafe bool) bool {
	return a == guard.Safe || (a == guard.Unsafe && unsafe)
}

// fixKey identifies a fix across rounds (its offsets move as other fixes
// apply): the rule, the fix's message, and each edit's old and new text.
func fixKey(d *guard.Diagnostic, src []byte) string {
	var b strings.Builder
	b.WriteString(d.Path + "\x00" + d.Rule.ID + "\x00" + d.Fix.Message)
	for _, e := range d.Fix.Edits {
		old := ""
		if src != nil && e.Start >= 0 && e.Start <= e.End && e.End <= len(src) {
			old = string(src[e.Start:e.End])
		}
		b.WriteString("\x00" + old + "\x00" + e.NewText)
	}
	return b.String()
}

func finding(d *guard.Diagnostic, round int) Finding {
	f := Finding{Path: d.Path, Line: d.Start.Line, Column: d.Start.Column, Message: d.Message, Round: round}
	if d.Rule != nil {
		f.Code = d.Rule.ID
	}
	if d.Fix != nil {
		f.Fix, f.Applicability = d.Fix.Message, string(d.Fix.Applicability)
	}
	return f
}

func readSource(path string, overlay map[string][]byte) ([]byte, error) {
	if src, ok := overlay[path]; ok {
		return src, nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return src, nil
}

// checkEncoding refuses a source the patcher cannot read: bytes that are
// not valid in its PEP 263 encoding (UTF-8 without a declaration).
func checkEncoding(src []byte) error {
	_, _, err := guard.DecodeSource(src)
	return err
}

func hasError(errs []guard.FileError, path string) bool {
	for _, e := range errs {
		if e.Path == path {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
