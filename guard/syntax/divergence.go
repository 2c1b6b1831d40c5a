package syntax

// Valid Python that tree-sitter-python (the grammar go-tree-sitter ships)
// rejects, besides starParens' starred elements. Each shape was found in a
// real repository whose file CPython compiles and capguard refused, losing
// every function in it (and with them the chains through it: a capture
// region calling a model whose file was refused reaches no project code):
//
//   - a boolean operator after a subscripted name in an annotation, the
//     pre-PEP 604 way of writing a union (`x: dict[str, Any] or None =
//     None`, `def f() -> list[int] or None:`): the grammar reads
//     `dict[...]` as a generic type, which no operator may follow;
//   - an f-string field whose format spec starts with `=` (the fill
//     character), followed by more than a width (`f"{title:=^{width}}"`):
//     the grammar reads `:=` as an assignment expression;
//   - a comment line between a decorator and its definition, indented less
//     than they are (a decorator commented out at column 0): the grammar's
//     scanner ends the block there.
//
// Each work-around rewrites bytes in place (every offset stays where it
// was) so that the tree reads what the analysis needs: `or` in an
// annotation becomes `|` (the union it means), the format spec's fill
// `=` becomes `<` (the spec is literal text to the analysis), and the
// comment becomes blank (CPython's tokenizer ignores it too). As with
// starParens, they run only on a parse with an error, and the second tree
// is used only when it has no error at all.

// grammarFixes applies every work-around (starParens and the rewrites
// above) to src: the rewritten source, and whether it changed anything.
func grammarFixes(src []byte) ([]byte, bool) {
	out, changed := starParens(src)
	if o, c := annotationOr(out); c {
		out, changed = o, true
	}
	if o, c := formatSpecFill(out); c {
		out, changed = o, true
	}
	if o, c := decoratorComments(out); c {
		out, changed = o, true
	}
	return out, changed
}

// writable returns out, copied from src on the first write.
func writable(out, src []byte) []byte {
	if out == nil {
		return append([]byte(nil), src...)
	}
	return out
}

// annotationOr rewrites ` or ` at the top level of an annotation that
// follows a subscript (`dict[str, Any] or None`) to ` |  `: a
// parameter's annotation in a def header, a return annotation, and an
// annotated assignment at the start of a logical line. Strings and
// comments are skipped.
func annotationOr(src []byte) ([]byte, bool) {
	var out []byte
	n := len(src)
	// rewrite scans the annotation src[from:to] at bracket depth 0.
	rewrite := func(from, to int) {
		depth := 0
		afterSubscript := false
		for i := from; i < to; i++ {
			switch c := src[i]; c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
				if depth == 0 && c == ']' {
					afterSubscript = true
					continue
				}
			case '"', '\'':
				if j := skipString(src, i); j > i {
					i = j - 1
				}
				continue
			case 'o':
				if depth == 0 && afterSubscript && i > from && i+2 < to && src[i+1] == 'r' &&
					(src[i-1] == ' ' || src[i-1] == '\t') && (src[i+2] == ' ' || src[i+2] == '\t') {
					out = writable(out, src)
					out[i], out[i+1] = '|', ' '
					afterSubscript = false
					continue
				}
			}
			if c := src[i]; c != ' ' && c != '\t' {
				afterSubscript = false
			}
		}
	}
	lineStart := true
	depth := 0
	for i := 0; i < n; i++ {
		c := src[i]
		switch {
		case c == '#':
			for i < n && src[i] != '\n' {
				i++
			}
			lineStart = depth == 0
			continue
		case c == '"' || c == '\'':
			j := skipString(src, i)
			if j < 0 {
				return writableOrSrc(out, src)
			}
			i = j - 1
			lineStart = false
			continue
		case c == '\n':
			if depth == 0 && (i == 0 || src[i-1] != '\\') {
				lineStart = true
			}
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			continue
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
		case c == ';' && depth == 0:
			lineStart = true
			continue
		}
		if !lineStart || !isWordByte(c) {
			lineStart = false
			continue
		}
		lineStart = false
		// A logical line starting with a word: `def NAME(...) -> R:`, or
		// `target: ANN = value` (target a name or a dotted name).
		j := i
		for j < n && isWordByte(src[j]) {
			j++
		}
		word := string(src[i:j])
		if word == "async" {
			k := j
			for k < n && (src[k] == ' ' || src[k] == '\t') {
				k++
			}
			if k+3 <= n && string(src[k:k+3]) == "def" {
				i, j, word = k, k+3, "def"
			}
		}
		if word == "def" {
			k := j
			for k < n && (src[k] == ' ' || src[k] == '\t' || isWordByte(src[k])) {
				k++
			}
			if k >= n || src[k] != '(' {
				continue
			}
			end := matchBracket(src, k)
			if end < 0 {
				continue
			}
			params(src, k+1, end, rewrite)
			// `-> R:` after the parameters.
			r := end + 1
			for r < n && (src[r] == ' ' || src[r] == '\t') {
				r++
			}
			if r+1 < n && src[r] == '-' && src[r+1] == '>' {
				if colon := headerColon(src, r+2); colon > 0 {
					rewrite(r+2, colon)
				}
			}
			i = end
			continue
		}
		if keywords[word] {
			continue
		}
		// target: ANN [= value]
		for j < n && (isWordByte(src[j]) || src[j] == '.') {
			j++
		}
		for j < n && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if j >= n || src[j] != ':' || j+1 < n && src[j+1] == '=' {
			continue
		}
		end := annotationEnd(src, j+1)
		rewrite(j+1, end)
		i = end - 1
	}
	return writableOrSrc(out, src)
}

func writableOrSrc(out, src []byte) ([]byte, bool) {
	if out == nil {
		return src, false
	}
	return out, true
}

// keywords are the words that start a compound statement's header or a
// simple statement: a colon after them is no annotation.
var keywords = map[string]bool{
	"else": true, "try": true, "finally": true, "except": true, "lambda": true, "class": true,
	"if": true, "elif": true, "while": true, "for": true, "with": true, "match": true, "case": true,
	"return": true, "yield": true, "del": true, "assert": true, "raise": true, "import": true,
	"from": true, "global": true, "nonlocal": true, "pass": true, "break": true, "continue": true,
	"await": true, "not": true, "print": true, "type": true,
}

// params calls rewrite with each parameter annotation of the parameter
// list src[from:to]: from a top-level ':' to the parameter's top-level
// '=' or ','.
func params(src []byte, from, to int, rewrite func(int, int)) {
	depth := 0
	ann := -1
	inDefault := false // after a parameter's '=': a lambda's ':' there is no annotation
	for i := from; i < to; i++ {
		switch c := src[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '"', '\'':
			if j := skipString(src, i); j > i {
				i = j - 1
			}
		case '#':
			for i < to && src[i] != '\n' {
				i++
			}
		case ':':
			if depth == 0 && ann < 0 && !inDefault {
				ann = i + 1
			}
		case '=', ',':
			if depth == 0 && ann >= 0 {
				rewrite(ann, i)
				ann = -1
			}
			if depth == 0 {
				inDefault = c == '='
			}
		}
	}
	if ann >= 0 {
		rewrite(ann, to)
	}
}

// headerColon is the offset of the ':' that ends a def header, from
// offset i (after `->`), or -1.
func headerColon(src []byte, i int) int {
	j, ok := topLevel(src, i, false, func(j, depth int) bool { return depth == 0 && (src[j] == ':' || src[j] == '\n') })
	if !ok || j >= len(src) || src[j] != ':' {
		return -1
	}
	return j
}

// annotationEnd is where an annotated assignment's annotation that starts
// at i ends: its top-level '=' or the end of its logical line.
func annotationEnd(src []byte, i int) int {
	j, _ := topLevel(src, i, false, func(j, depth int) bool {
		c := src[j]
		return depth <= 0 && (c == '=' || c == '#' || c == ';' || c == '\n' && (j == 0 || src[j-1] != '\\'))
	})
	return j
}

// formatSpecFill rewrites, in each f-string replacement field whose format
// spec starts with '=' (`{x:=^{w}}`, `{x:=10}`), that '=' to '<': CPython
// reads a top-level `:=` there as the start of the spec (an assignment
// expression in a field needs parentheses), and the spec is text to the
// analysis.
func formatSpecFill(src []byte) ([]byte, bool) {
	var out []byte
	n := len(src)
	for i := 0; i < n; i++ {
		c := src[i]
		if c == '#' {
			for i < n && src[i] != '\n' {
				i++
			}
			continue
		}
		if c != '"' && c != '\'' {
			continue
		}
		j := skipString(src, i)
		if j < 0 {
			return writableOrSrc(out, src)
		}
		if fPrefix(src, i) {
			out = specFills(src, out, i, j)
		}
		i = j - 1
	}
	return writableOrSrc(out, src)
}

// fPrefix: the string whose quote is at q has an f (or t) in its prefix.
func fPrefix(src []byte, q int) bool {
	for k := q - 1; k >= 0 && k >= q-2; k-- {
		switch src[k] {
		case 'f', 'F', 't', 'T':
			return k == 0 || !isWordByte(src[k-1]) || isPrefix(src[k-1]) || src[k-1] == 'r' || src[k-1] == 'R'
		case 'r', 'R', 'b', 'B', 'u', 'U':
			continue
		}
		return false
	}
	return false
}

// specFills rewrites the fill '=' of the fields of the f-string src[from:to].
func specFills(src, out []byte, from, to int) []byte {
	depth := 0 // brackets inside a field
	in := false
	for i := from + 1; i < to-1; i++ {
		c := src[i]
		if !in {
			if c == '{' {
				if i+1 < to && src[i+1] == '{' {
					i++
					continue
				}
				in, depth = true, 0
			}
			continue
		}
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']':
			depth--
		case '}':
			if depth == 0 {
				in = false
			} else {
				depth--
			}
		case '"', '\'':
			// a nested string of another quote
			if j := skipString(src, i); j > i && j <= to {
				i = j - 1
			}
		case '!':
			if depth == 0 && i+1 < to && src[i+1] != '=' {
				in = false // a conversion, then perhaps a spec: left as it is
			}
		case ':':
			if depth == 0 {
				if i+1 < to && src[i+1] == '=' {
					out = writable(out, src)
					out[i+1] = '<'
				}
				in = false // the spec: literal text (its nested fields are left as they are)
			}
		}
	}
	return out
}

// decoratorComments blanks each comment line that sits between a
// decorator and the definition it decorates and is indented less than the
// definition: CPython's tokenizer ignores a comment line's indentation,
// the grammar's scanner ends the block at it.
func decoratorComments(src []byte) ([]byte, bool) {
	var out []byte
	n := len(src)
	decoIndent := -1 // the indentation of the decorator line before, or -1
	for ls := 0; ls < n; {
		le := ls
		for le < n && src[le] != '\n' {
			le++
		}
		k := ls
		for k < le && (src[k] == ' ' || src[k] == '\t') {
			k++
		}
		indent := k - ls
		switch {
		case k == le || src[k] == '\r':
			// blank line
		case src[k] == '#':
			if decoIndent > 0 && indent < decoIndent {
				out = writable(out, src)
				for p := k; p < le && src[p] != '\r'; p++ {
					out[p] = ' '
				}
			}
		case src[k] == '@':
			decoIndent = indent
			// A decorator spanning lines: skip to its end.
			if e := lineEndOutsideBrackets(src, k); e > le {
				le = e
			}
		default:
			decoIndent = -1
		}
		ls = le + 1
	}
	return writableOrSrc(out, src)
}

// lineEndOutsideBrackets is the offset of the newline that ends the
// logical line starting at i (brackets closed), or len(src).
func lineEndOutsideBrackets(src []byte, i int) int {
	j, ok := topLevel(src, i, true, func(j, depth int) bool {
		return depth <= 0 && src[j] == '\n' && (j == 0 || src[j-1] != '\\')
	})
	if !ok {
		return len(src)
	}
	return j
}

// topLevel walks src from offset i over brackets and string literals (and
// comments, with comments set) to the first offset j where stop(j, depth)
// holds, depth being how many brackets are open since i: j and true, or
// len(src) and true at the end, or the offset of an unterminated string's
// quote and false.
func topLevel(src []byte, i int, comments bool, stop func(j, depth int) bool) (int, bool) {
	depth := 0
	for ; i < len(src); i++ {
		switch src[i] {
		case '(', '[', '{':
			depth++
			continue
		case ')', ']', '}':
			depth--
			continue
		case '"', '\'':
			j := skipString(src, i)
			if j < 0 {
				return i, false
			}
			i = j - 1
			continue
		case '#':
			if comments {
				for i < len(src) && src[i] != '\n' {
					i++
				}
				i--
				continue
			}
		}
		if stop(i, depth) {
			return i, true
		}
	}
	return len(src), true
}
