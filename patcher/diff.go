package patcher

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Context is the number of unchanged lines a hunk shows around a change.
const Context = 3

// UnifiedDiff returns the unified diff that turns a into b, with the headers
// `--- a/<path>` and `+++ b/<path>`, hunks with Context lines of context and
// `\ No newline at end of file` after a last line without one, so that
// `patch -p1` and `git apply` accept it. Lines are compared as they are, line
// ending included. It returns "" when a and b are equal.
func UnifiedDiff(path string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	lines := diffLines(string(a), string(b))
	var out strings.Builder
	p := diffPath(path)
	// A name with a space ends with a tab, as git writes it, for GNU patch.
	tab := ""
	if strings.Contains(p, " ") {
		tab = "\t"
	}
	fmt.Fprintf(&out, "--- %s%s\n+++ %s%s\n", quoteDiffPath("a/"+p), tab, quoteDiffPath("b/"+p), tab)
	for _, h := range hunks(lines) {
		h.write(&out)
	}
	return out.String()
}

// diffPath is the path as the diff names it: slash-separated and clean; an
// absolute path under the working folder is made relative to it, another
// loses its leading slash (the diff then applies from the root folder).
func diffPath(path string) string {
	p := filepath.Clean(path)
	if filepath.IsAbs(p) {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				p = rel
			}
		}
	}
	return strings.TrimPrefix(filepath.ToSlash(p), "/")
}

// quoteDiffPath quotes a diff header's path as git does when it holds a
// control character, a double quote, a backslash or bytes that are not
// UTF-8: "a/new\nline.py", with C escapes and octal for other bytes. git
// apply and GNU patch read such names; unquoted, a newline in a file name
// would end the header. Other names, spaces and UTF-8 included, stay as
// they are.
func quoteDiffPath(p string) string {
	if utf8.ValidString(p) && !strings.ContainsAny(p, "\"\\") && strings.IndexFunc(p, unicode.IsControl) < 0 {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		case c >= 0x80:
			// git escapes every non-ASCII byte once the name is quoted.
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// line is one line of the edit script: ' ' kept, '-' deleted, '+' inserted.
type line struct {
	op   byte
	text string // with its line ending, if it has one
}

// diffLines runs go-diff in line mode and flattens its result into lines.
func diffLines(a, b string) []line {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // exact: a fix's diff must be minimal and reproducible
	ca, cb, table := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), table)
	var out []line
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				out = append(out, line{op, l})
			}
		}
	}
	return out
}

type hunk struct {
	aStart, aLen, bStart, bLen int // 1-based starts, as the header shows them
	lines                      []line
}

// hunks groups the edit script into hunks: each change with Context lines
// around it, two changes closer than 2*Context+1 unchanged lines sharing one.
func hunks(lines []line) []hunk {
	var out []hunk
	i := 0
	aLine, bLine := 1, 1 // line numbers of lines[i]
	for i < len(lines) {
		// find the next change
		j := i
		a, b := aLine, bLine
		for j < len(lines) && lines[j].op == ' ' {
			j, a, b = j+1, a+1, b+1
		}
		if j == len(lines) {
			break
		}
		start := max(i, j-Context)
		h := hunk{aStart: a - (j - start), bStart: b - (j - start)}
		// extend while changes keep coming within 2*Context unchanged lines
		end := j
		for end < len(lines) {
			if lines[end].op != ' ' {
				end++
				continue
			}
			k := end
			for k < len(lines) && lines[k].op == ' ' {
				k++
			}
			if k == len(lines) || k-end > 2*Context {
				end = min(k, end+Context)
				break
			}
			end = k
		}
		h.lines = lines[start:end]
		for _, l := range h.lines {
			if l.op != '+' {
				h.aLen++
			}
			if l.op != '-' {
				h.bLen++
			}
		}
		out = append(out, h)
		// advance the line numbers to end
		for ; i < end; i++ {
			if lines[i].op != '+' {
				aLine++
			}
			if lines[i].op != '-' {
				bLine++
			}
		}
	}
	return out
}

func (h hunk) write(out *strings.Builder) {
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(h.aStart, h.aLen), hunkRange(h.bStart, h.bLen))
	for _, l := range h.lines {
		out.WriteByte(l.op)
		out.WriteString(l.text)
		if !strings.HasSuffix(l.text, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a hunk's range as GNU diff does: "start,len", "start"
// when len is 1, and for an empty range the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
