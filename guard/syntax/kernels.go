package syntax

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// BlankKernels returns src with the bodies of its top-level kernels (a def
// at column 0 with a torchapi.KernelDecorator: Triton, CuTe DSL, TileLang/TVM,
// Numba CUDA) replaced by `...` and spaces, line ends kept, so that
// every byte offset, line and column of the rest of the file is unchanged,
// and whether it blanked anything. A kernel body is device code: no rule
// looks inside one and nothing calls into it from Python, and it is often
// most of a kernel library (37% of FlagGems' lines), so the parser and
// every later layer skip it. A syntax error inside a kernel body is not
// reported.
//
// It works on tokens, not lines: strings (triple-quoted ones spanning
// lines included), comments, brackets and backslash continuations are
// followed, so a column-0 line inside a string does not end a body. Where
// the file is not what it expects (an unterminated string or bracket), it
// blanks nothing after that point.
func BlankKernels(src []byte) ([]byte, bool) {
	if !bytes.Contains(src, []byte("triton")) && !bytes.Contains(src, []byte("jit")) && !bytes.Contains(src, []byte("cute")) &&
		!bytes.Contains(src, []byte("prim_func")) && !bytes.Contains(src, []byte("macro")) {
		return src, false
	}
	lines := logicalLines(src)
	if lines == nil {
		return src, false
	}
	var out []byte
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l.indent != 0 || src[l.start] != '@' {
			continue
		}
		// A run of decorators, then the def.
		kernel := false
		j := i
		for ; j < len(lines) && lines[j].indent == 0 && src[lines[j].start] == '@'; j++ {
			if kernelDecorator.Match(src[lines[j].start:lines[j].end]) {
				kernel = true
			}
		}
		if j >= len(lines) || !kernel || lines[j].indent != 0 || !isDef(src[lines[j].start:lines[j].end]) {
			i = j - 1
			continue
		}
		def := lines[j]
		// The header ends at the logical line's end; a one-line def has its
		// body on the same line (nothing to blank).
		if !endsWithColon(src[def.start:def.end]) {
			i = j
			continue
		}
		k := j + 1
		for k < len(lines) && lines[k].indent > 0 {
			k++
		}
		if k == j+1 {
			i = j
			continue
		}
		body0, bodyEnd := lines[j+1].start, lines[k-1].end
		// "..." goes where the first statement starts; it needs three bytes
		// on that physical line.
		eol := body0
		for eol < len(src) && src[eol] != '\n' && src[eol] != '\r' {
			eol++
		}
		if eol-body0 < 3 {
			i = k - 1
			continue
		}
		if out == nil {
			out = append([]byte(nil), src...)
		}
		for p := body0; p < bodyEnd; p++ {
			if out[p] != '\n' && out[p] != '\r' {
				out[p] = ' '
			}
		}
		copy(out[body0:], "...")
		i = k - 1
	}
	if out == nil {
		return src, false
	}
	return out, true
}

// decoratorRE takes a decorator line's dotted name (spaces around dots
// allowed).
var decoratorRE = regexp.MustCompile(`^@\s*([A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*)`)

var kernelDecorator = kernelLine{}

type kernelLine struct{}

// Match: the decorator line names a kernel decorator.
func (kernelLine) Match(line []byte) bool {
	m := decoratorRE.FindSubmatch(line)
	if m == nil {
		return false
	}
	return torchapi.KernelDecorator(strings.Join(strings.Fields(string(m[1])), ""))
}

func isDef(l []byte) bool {
	return bytes.HasPrefix(l, []byte("def ")) || bytes.HasPrefix(l, []byte("async def "))
}

// endsWithColon reports whether a logical line's code (comments removed by
// the caller's tokenizer being conservative: a trailing comment) ends with
// ':'.
func endsWithColon(l []byte) bool {
	l = bytes.TrimRight(l, " \t\r\n\\")
	if i := lastCodeHash(l); i >= 0 {
		l = bytes.TrimRight(l[:i], " \t")
	}
	return len(l) > 0 && l[len(l)-1] == ':'
}

// lastCodeHash finds a comment's '#' outside strings on a header line.
func lastCodeHash(l []byte) int {
	var q byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case q != 0:
			if c == '\\' {
				i++
			} else if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#':
			return i
		}
	}
	return -1
}

// line is one logical line: its first code byte (after the indentation),
// the end of its last physical line (before the newline), and its
// indentation in columns (tabs to 8).
type line struct {
	start, end int
	indent     int
}

// logicalLines splits src into logical lines, skipping blank and
// comment-only lines; nil when a string or bracket is left open.
func logicalLines(src []byte) []line {
	var out []line
	n := len(src)
	i := 0
	for i < n {
		// Indentation of a new logical line.
		ind, p := 0, i
		for p < n && (src[p] == ' ' || src[p] == '\t' || src[p] == '\f') {
			if src[p] == '\t' {
				ind = (ind/8 + 1) * 8
			} else if src[p] == ' ' {
				ind++
			}
			p++
		}
		if p >= n {
			break
		}
		if src[p] == '\n' || src[p] == '\r' || src[p] == '#' {
			for p < n && src[p] != '\n' {
				p++
			}
			i = p + 1
			continue
		}
		start := p
		depth := 0
		for p < n {
			c := src[p]
			switch {
			case c == '#':
				for p < n && src[p] != '\n' {
					p++
				}
				continue
			case c == '\\' && p+1 < n && (src[p+1] == '\n' || src[p+1] == '\r'):
				p += 2
				if p < n && src[p-1] == '\r' && src[p] == '\n' {
					p++
				}
				continue
			case c == '(' || c == '[' || c == '{':
				depth++
			case c == ')' || c == ']' || c == '}':
				if depth > 0 {
					depth--
				}
			case c == '\'' || c == '"':
				q := skipString(src, p)
				if q < 0 {
					return nil
				}
				p = q
				continue
			case c == '\n':
				if depth == 0 {
					goto done
				}
			}
			p++
		}
		if depth > 0 {
			return nil
		}
	done:
		end := p
		if end > start && src[end-1] == '\r' {
			end--
		}
		out = append(out, line{start: start, end: end, indent: ind})
		i = p + 1
	}
	return out
}

// skipString returns the offset just past the string literal starting at
// src[p] (a quote; prefixes are ordinary letters before it), or -1 when it
// does not end.
func skipString(src []byte, p int) int {
	q := src[p]
	n := len(src)
	raw := p > 0 && (src[p-1] == 'r' || src[p-1] == 'R') || p > 1 && (src[p-2] == 'r' || src[p-2] == 'R') && isPrefix(src[p-1])
	if p+2 < n && src[p+1] == q && src[p+2] == q {
		for i := p + 3; i+2 < n+0 && i < n; i++ {
			if src[i] == '\\' && !raw {
				i++
				continue
			}
			if src[i] == '\\' && raw {
				i++
				continue
			}
			if i+2 < n && src[i] == q && src[i+1] == q && src[i+2] == q {
				return i + 3
			}
		}
		return -1
	}
	for i := p + 1; i < n; i++ {
		switch src[i] {
		case '\\':
			i += escapeLen(src, i) - 1
		case q:
			return i + 1
		case '\n':
			return -1 // an unterminated one-line string: a syntax error
		}
	}
	return -1
}

func isPrefix(c byte) bool {
	switch c {
	case 'b', 'B', 'f', 'F', 'u', 'U':
		return true
	}
	return false
}
