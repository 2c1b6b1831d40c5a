// Package report renders guard findings: full (source line, caret, context
// chain) and concise text for people, JSON and JSON lines for tools, SARIF
// 2.1.0 for code scanning, GitHub workflow annotations and GitLab Code
// Quality reports. It is the command line's, a layer above package guard;
// a JSON finding is guard.Diagnostic's own JSON form.
package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/cudagraph-capguard/capguard/guard"
)

// Formats lists the output formats, the default first.
var Formats = []string{"full", "concise", "json", "json-lines", "sarif", "github", "gitlab"}

// Aliases maps the older format names to current ones.
var Aliases = map[string]string{"text": "full"}

// ProjectURL is the project's home: the one place its address is written
// (guard/analysis: SARIF's informationUri, the rule pages' base).
const ProjectURL = guard.ProjectURL

// DocsURL is where the rule pages are published.
const DocsURL = guard.DocsURL

// RuleURL is the documentation page of a rule.
func RuleURL(id string) string { return guard.RuleURL(id) }

// Options say how to render a result.
type Options struct {
	Format  string // one of Formats (or an alias); "" is full
	Version string // capguard's version, for SARIF
	// Color writes ANSI colours (and OSC 8 links on rule codes) in full and
	// concise output.
	Color bool
	// Width wraps full output's messages and chains; 0 means 100.
	Width int
	// ShowFixes shows each fix's edit under its finding (full output).
	ShowFixes bool
	// UnsafeFixes counts unsafe fixes as fixable, as `--unsafe-fixes` would
	// apply them: [*] marks them and the summary counts them.
	UnsafeFixes bool
	// Quiet prints the findings only, without the summary.
	Quiet bool
	// Root is the folder SARIF and GitLab paths are relative to ("": the
	// working directory).
	Root string
	// Source returns a file's source as guard analysed it (UTF-8), for the
	// source lines of full output and SARIF's UTF-16 columns; nil reads the
	// file from disk (decoded as guard decodes it).
	Source func(path string) []byte
}

// Canonical returns a format's canonical name and whether it is known.
func Canonical(format string) (string, bool) {
	if format == "" {
		return "full", true
	}
	if a, ok := Aliases[format]; ok {
		format = a
	}
	for _, f := range Formats {
		if f == format {
			return f, true
		}
	}
	return format, false
}

// Write renders res to w in o.Format.
func Write(w io.Writer, res *guard.Result, o Options) error {
	format, ok := Canonical(o.Format)
	if !ok {
		return fmt.Errorf("unknown output format %q (want one of %s)", o.Format, strings.Join(Formats, ", "))
	}
	o.Source = sourceFunc(res, o.Source)
	switch format {
	case "full":
		return Full(w, res, o)
	case "concise":
		return Concise(w, res, o)
	case "json":
		return JSON(w, res, o)
	case "json-lines":
		return JSONLines(w, res, o)
	case "sarif":
		return SARIF(w, res, o)
	case "github":
		return GitHub(w, res, o)
	case "gitlab":
		return GitLab(w, res, o)
	}
	return nil
}

// TextPath is a path as text output shows it: as it is, or Go-quoted
// ("new\nline.py") when it holds a control character or bytes that are not
// UTF-8, so that one finding stays one line.
func TextPath(p string) string {
	if utf8.ValidString(p) && strings.IndexFunc(p, unicode.IsControl) < 0 {
		return p
	}
	return strconv.Quote(p)
}

// Fixable reports whether a finding's fix is applied by `capguard fix`
// (with --unsafe-fixes when unsafe is set).
func Fixable(d *guard.Diagnostic, unsafe bool) bool {
	if d.Fix == nil {
		return false
	}
	return d.Fix.Applicability == guard.Safe || unsafe && d.Fix.Applicability == guard.Unsafe
}

// Counts summarises a result.
type Counts struct {
	Findings     int
	FilesWith    int // files with a finding
	Checked      int // Python files checked
	Fixable      int // findings whose fix `capguard fix` applies
	HiddenUnsafe int // findings whose fix needs --unsafe-fixes (when not given)
	Errors       int // file errors
}

// Count works out a result's counts.
func Count(res *guard.Result, unsafe bool) Counts {
	c := Counts{Findings: len(res.Diagnostics), Checked: res.Files, Errors: len(res.Errors)}
	files := map[string]bool{}
	for _, d := range res.Diagnostics {
		files[d.Path] = true
		switch {
		case Fixable(d, unsafe):
			c.Fixable++
		case d.Fix != nil && d.Fix.Applicability == guard.Unsafe:
			c.HiddenUnsafe++
		}
	}
	c.FilesWith = len(files)
	return c
}

// Warnings writes the run's warnings, one `warning: ...` line each (on
// stderr, in every format).
func Warnings(w io.Writer, res *guard.Result, color bool) {
	p := painter(color)
	for _, m := range res.Warnings {
		fmt.Fprintf(w, "%s %s\n", p.warn("warning:"), m)
	}
}

// FileErrors writes the file errors, `path: error: message` each (on
// stderr, for the text formats).
func FileErrors(w io.Writer, res *guard.Result, color bool) {
	p := painter(color)
	for _, e := range res.Errors {
		fmt.Fprintf(w, "%s: %s %s\n", p.bold(TextPath(e.Path)), p.err("error:"), e.Message)
	}
}

// ErrorKind names what kind of file error e is: "syntax" (the rest of the
// file was analysed), "decode" (not valid in its encoding, or binary) or
// "io" (not read: missing, unreadable, too large, not a regular file).
func ErrorKind(e guard.FileError) string {
	switch {
	case e.Syntax:
		return "syntax"
	case e.Decode:
		return "decode"
	}
	return "io"
}

func level(s guard.Severity) string {
	if s == guard.SeverityError {
		return "error"
	}
	return "warning"
}

func plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// sourceFunc returns a source lookup: the given one, then the sources the
// result kept, then the file on disk decoded as guard decodes it (a result
// from the cache keeps none). Lookups are cached.
func sourceFunc(res *guard.Result, given func(string) []byte) func(string) []byte {
	var mu sync.Mutex
	cache := map[string][]byte{}
	return func(path string) []byte {
		if given != nil {
			if b := given(path); b != nil {
				return b
			}
		}
		if res != nil {
			if b := res.Source(path); b != nil {
				return b
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if b, ok := cache[path]; ok {
			return b
		}
		var out []byte
		if raw, err := os.ReadFile(path); err == nil {
			if dec, _, err := guard.DecodeSource(raw); err == nil {
				out = dec
			}
		}
		cache[path] = out
		return out
	}
}

// lineAt returns the text of a 1-based line of src (without its line end),
// and the byte offset where it starts.
func lineAt(src []byte, line int) (string, int, bool) {
	start, ok := lineStart(src, line)
	if !ok {
		return "", 0, false
	}
	end := start
	for end < len(src) && src[end] != '\n' {
		end++
	}
	text := strings.TrimSuffix(string(src[start:end]), "\r")
	if line == 1 && strings.HasPrefix(text, "\ufeff") {
		text, start = text[3:], start+3 // the byte order mark is not shown
	}
	return text, start, true
}

// lineIndex holds the line starts of the last source lineStart read: a
// report reads the lines of one file's findings in a row, and finding a
// line by scanning from the file's start (copying the rest of the file at
// each line, as this once did) cost each finding the file's size times
// its line: a 1.2 MB generated file with 500 findings took 20 s of CPU to
// print (TestLineAtLinear).
var lineIndex struct {
	sync.Mutex
	src    []byte
	starts []int
}

// lineStart is the offset where 1-based line starts in src.
func lineStart(src []byte, line int) (int, bool) {
	if line < 1 {
		return 0, false
	}
	lineIndex.Lock()
	defer lineIndex.Unlock()
	same := len(lineIndex.starts) > 0 && len(lineIndex.src) == len(src) &&
		(len(src) == 0 || &lineIndex.src[0] == &src[0])
	if !same {
		starts := []int{0}
		for i, c := range src {
			if c == '\n' {
				starts = append(starts, i+1)
			}
		}
		lineIndex.src, lineIndex.starts = src, starts
	}
	if line > len(lineIndex.starts) {
		return 0, false
	}
	return lineIndex.starts[line-1], true
}

// relPath is path relative to root (both made absolute), with forward
// slashes; ok is false when path is not under root.
func relPath(root, path string) (string, bool) {
	if root == "" {
		root = "."
	}
	ar, err1 := filepath.Abs(root)
	ap, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(path), false
	}
	rel, err := filepath.Rel(ar, ap)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(ap), false
	}
	return filepath.ToSlash(rel), true
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
