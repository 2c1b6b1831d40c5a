package syntax

import (
	"bytes"
	"fmt"
)

// The tokenizer-level checks CPython makes and tree-sitter's grammar does
// not (it accepts an unexpected indent, and recovers from an unclosed
// bracket far below it): brackets, string literals and indentation, with
// CPython's messages and positions. lexCheck is a linear pass over the
// source; Parse combines its verdict with the parser's first error.

// lexError is a syntax error the pass found.
type lexError struct {
	off int
	msg string
}

// bracketSpan is one opening bracket and where it closes (-1: never).
type bracketSpan struct {
	open, close int
	ch          byte
}

type lexer struct {
	src      []byte
	i        int
	err      *lexError
	brackets []bracketSpan
	stack    []int // indexes into brackets of the open ones
}

func (l *lexer) fail(off int, format string, a ...any) {
	if l.err == nil || off < l.err.off {
		l.err = &lexError{off: off, msg: fmt.Sprintf(format, a...)}
	}
}

// lineOf is the 1-based line of an offset.
func lineOf(src []byte, off int) int { return bytes.Count(src[:min(off, len(src))], []byte("\n")) + 1 }

func lexCheck(src []byte) *lexer {
	l := &lexer{src: src}
	n := len(src)
	indents := []int{0}
	expectBlock := -1 // offset of the ':' that opened a block whose body has not started
	lastCode := byte(0)
	lastCodeOff := -1
	atLineStart := true
	cont := false
	for l.i < n && l.err == nil {
		if atLineStart {
			ind, p := 0, l.i
			for p < n && (src[p] == ' ' || src[p] == '\t' || src[p] == '\f') {
				switch src[p] {
				case '\t':
					ind = (ind/8 + 1) * 8
				case ' ':
					ind++
				case '\f':
					ind = 0
				}
				p++
			}
			atLineStart = false
			if p >= n || src[p] == '\n' || src[p] == '\r' || src[p] == '#' {
				l.i = p // blank or comment-only line: no indentation meaning
				continue
			}
			top := indents[len(indents)-1]
			switch {
			case ind > top:
				if expectBlock < 0 {
					l.fail(p, "unexpected indent")
					return l
				}
				indents = append(indents, ind)
			case expectBlock >= 0:
				l.fail(p, "expected an indented block after the statement on line %d", lineOf(src, expectBlock))
				return l
			case ind < top:
				for len(indents) > 1 && indents[len(indents)-1] > ind {
					indents = indents[:len(indents)-1]
				}
				if indents[len(indents)-1] != ind {
					l.fail(p, "unindent does not match any outer indentation level")
					return l
				}
			}
			expectBlock = -1
			l.i = p
		}
		c := src[l.i]
		switch {
		case c == '\n' || c == '\r':
			if c == '\r' && l.i+1 < n && src[l.i+1] == '\n' {
				l.i++
			}
			l.i++
			// The next line starts a logical line (its indentation counts)
			// unless a bracket or a backslash continues this one.
			atLineStart = len(l.stack) == 0 && !cont
			if atLineStart && lastCode == ':' {
				expectBlock = lastCodeOff
			}
			cont = false
			continue
		case c == '#':
			for l.i < n && src[l.i] != '\n' && src[l.i] != '\r' {
				l.i++
			}
			continue
		case c == '\\' && l.i+1 < n && (src[l.i+1] == '\n' || src[l.i+1] == '\r'):
			cont = true
			l.i++
			continue
		case c == ' ' || c == '\t' || c == '\f':
			l.i++
			continue
		}
		cont = false
		lastCode, lastCodeOff = c, l.i
		switch {
		case c == '(' || c == '[' || c == '{':
			l.push(c)
			l.i++
		case c == ')' || c == ']' || c == '}':
			if !l.pop(c) {
				return l
			}
			l.i++
		case c == '\'' || c == '"':
			l.str(l.i, false)
			lastCode = '"'
		case isWord(c):
			start := l.i
			for l.i < n && isWord(src[l.i]) {
				l.i++
			}
			if l.i < n && (src[l.i] == '\'' || src[l.i] == '"') && isStringPrefix(src[start:l.i]) {
				l.str(start, bytes.ContainsAny(src[start:l.i], "fFtT"))
				lastCode = '"'
			} else {
				lastCode = 'a'
			}
		default:
			l.i++
		}
	}
	if l.err == nil && (expectBlock >= 0 || len(l.stack) == 0 && !cont && lastCode == ':') {
		// At the end of the file CPython reports it on the statement's line.
		l.fail(max(expectBlock, lastCodeOff), "expected an indented block after the statement on line %d", lineOf(src, max(expectBlock, lastCodeOff)))
	}
	return l
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func isStringPrefix(p []byte) bool {
	if len(p) > 2 {
		return false
	}
	seen := map[byte]bool{}
	for _, c := range bytes.ToLower(p) {
		if seen[c] || c != 'r' && c != 'u' && c != 'b' && c != 'f' && c != 't' {
			return false
		}
		seen[c] = true
	}
	return len(p) == 1 || !seen['u'] && !(seen['b'] && (seen['f'] || seen['t'])) && !(seen['f'] && seen['t'])
}

func (l *lexer) push(c byte) {
	l.brackets = append(l.brackets, bracketSpan{open: l.i, close: -1, ch: c})
	l.stack = append(l.stack, len(l.brackets)-1)
}

var closing = map[byte]byte{'(': ')', '[': ']', '{': '}'}

// pop closes the innermost bracket with c, or records CPython's error.
func (l *lexer) pop(c byte) bool {
	if len(l.stack) == 0 {
		l.fail(l.i, "unmatched '%c'", c)
		return false
	}
	b := &l.brackets[l.stack[len(l.stack)-1]]
	if closing[b.ch] != c {
		if lineOf(l.src, b.open) != lineOf(l.src, l.i) {
			l.fail(l.i, "closing parenthesis '%c' does not match opening parenthesis '%c' on line %d", c, b.ch, lineOf(l.src, b.open))
		} else {
			l.fail(l.i, "closing parenthesis '%c' does not match opening parenthesis '%c'", c, b.ch)
		}
		return false
	}
	b.close = l.i
	l.stack = l.stack[:len(l.stack)-1]
	return true
}

// str consumes a string literal whose prefix starts at start (l.i is at
// its opening quote); fstr: an f- or t-string, whose replacement fields
// are expressions.
func (l *lexer) str(start int, fstr bool) {
	src, n := l.src, len(l.src)
	q := src[l.i]
	triple := l.i+2 < n && src[l.i+1] == q && src[l.i+2] == q
	open := l.i
	if triple {
		l.i += 3
	} else {
		l.i++
	}
	for l.i < n {
		c := src[l.i]
		switch {
		case c == '\\' && fstr && l.i+1 < n && (src[l.i+1] == '{' || src[l.i+1] == '}'):
			// A backslash escapes no brace: `rf"\{{"` is a backslash and
			// a literal brace, `f"\{x}"` a backslash and a field.
			l.i++
			continue
		case c == '\\':
			// An escape, or a line continued inside the string: a
			// backslash before "\r\n" escapes both (Python reads CRLF
			// as one newline; apex's CRLF sources).
			l.i += escapeLen(src, l.i)
			continue
		case c == q && (!triple || l.i+2 < n && src[l.i+1] == q && src[l.i+2] == q):
			if triple {
				l.i += 3
			} else {
				l.i++
			}
			return
		case (c == '\n' || c == '\r') && !triple:
			l.fail(start, "unterminated %sstring literal (detected at line %d)", fkind(fstr), lineOf(src, l.i))
			l.i = n
			return
		case fstr && c == '{':
			if l.i+1 < n && src[l.i+1] == '{' {
				l.i += 2
				continue
			}
			l.i++
			l.field()
			if l.err != nil {
				return
			}
			continue
		}
		l.i++
	}
	if triple {
		l.fail(start, "unterminated triple-quoted %sstring literal (detected at line %d)", fkind(fstr), lineOf(src, n))
	} else {
		l.fail(start, "unterminated %sstring literal (detected at line %d)", fkind(fstr), lineOf(src, open))
	}
}

func fkind(f bool) string {
	if f {
		return "f-"
	}
	return ""
}

// field consumes an f-string replacement field after its '{': an
// expression (nested strings and brackets), then a format spec after a
// top-level ':' (literal text with nested fields), to the closing '}'.
func (l *lexer) field() {
	src, n := l.src, len(l.src)
	depth := 0
	for l.i < n {
		c := src[l.i]
		switch {
		case c == '(' || c == '[' || c == '{':
			depth++
		case (c == ')' || c == ']') && depth > 0:
			depth--
		case c == '}':
			if depth == 0 {
				l.i++
				return
			}
			depth--
		case c == ':' && depth == 0:
			l.i++
			for l.i < n {
				switch src[l.i] {
				case '{':
					l.i++
					l.field()
					if l.err != nil {
						return
					}
					continue
				case '}':
					l.i++
					return
				case '\n', '\r', '\'', '"':
					return // the spec ends with the string: the string reports it
				}
				l.i++
			}
			return
		case c == '\'' || c == '"':
			l.str(l.i, false)
			if l.err != nil {
				return
			}
			continue
		case isWord(c):
			start := l.i
			for l.i < n && isWord(src[l.i]) {
				l.i++
			}
			if l.i < n && (src[l.i] == '\'' || src[l.i] == '"') && isStringPrefix(src[start:l.i]) {
				l.str(start, bytes.ContainsAny(src[start:l.i], "fFtT"))
				if l.err != nil {
					return
				}
			}
			continue
		}
		l.i++
	}
}

// openBracketAt is the innermost bracket open at offset off that was
// opened on an earlier line, if any.
func (l *lexer) openBracketAt(off int) (bracketSpan, bool) {
	var best bracketSpan
	found := false
	for _, b := range l.brackets {
		if b.open < off && (b.close < 0 || b.close >= off) && (!found || b.open > best.open) {
			best, found = b, true
		}
	}
	if found && lineOf(l.src, best.open) == lineOf(l.src, off) {
		return best, false
	}
	return best, found
}

// position is the 1-based line and column (bytes) of an offset.
func position(src []byte, off int) (int, int) {
	off = min(off, len(src))
	line := lineOf(src, off)
	ls := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, off - ls + 1
}

// pythonSyntax combines the tokenizer-level pass with the parser's first
// error (the node from offset ps to pe, ps -1 when the parser found none;
// msg its message). tree-sitter's error node often starts at its
// statement, before the token CPython stops at, so a tokenizer error
// before the node's end wins; a parser error inside a bracket opened on an
// earlier line, or one where the parser ran into the end of the file, is
// reported at that bracket ("'(' was never closed"), as CPython
// does; else the parser's.
func pythonSyntax(src []byte, ps, pe int, msg string) string {
	l := lexCheck(src)
	at := func(off int, what string) string {
		line, col := position(src, off)
		return fmt.Sprintf("syntax error at line %d, column %d: %s", line, col, what)
	}
	never := func(b bracketSpan) string { return at(b.open, fmt.Sprintf("'%c' was never closed", b.ch)) }
	if ps < 0 {
		switch {
		case l.err != nil:
			return at(l.err.off, l.err.msg)
		case len(l.stack) > 0:
			return never(l.brackets[l.stack[len(l.stack)-1]])
		}
		return ""
	}
	if l.err != nil && l.err.off < max(pe, ps+1) {
		return at(l.err.off, l.err.msg)
	}
	if b, ok := l.openBracketAt(ps); ok {
		return never(b)
	}
	if len(l.stack) > 0 && onlyBlank(src[min(max(pe, ps), len(src)):]) {
		// The parser ran into the end of the file inside a bracket.
		return never(l.brackets[l.stack[len(l.stack)-1]])
	}
	return msg
}

// onlyBlank reports whether b holds nothing but white space and comments.
func onlyBlank(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\f', '\r', '\n':
		case '#':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		default:
			return false
		}
	}
	return true
}

// LexOK reports whether src passes the tokenizer-level checks (brackets,
// string literals, indentation) without building a tree.
func LexOK(src []byte) bool {
	l := lexCheck(src)
	return l.err == nil && len(l.stack) == 0
}

// escapeLen is the length of the escape that starts with the backslash at
// src[i]: 3 for a backslash before "\r\n" (a line ending Python reads as one
// newline), else 2.
func escapeLen(src []byte, i int) int {
	if i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n' {
		return 3
	}
	return 2
}
