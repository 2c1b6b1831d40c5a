package syntax

// tree-sitter-python (the grammar go-tree-sitter ships) rejects a starred
// element whose operand is parenthesized in a bare tuple: `return a,
// *(b)`, `x = a, *((None,) * 2)`, `return *(b), a` are valid Python 3.8+
// but parse with an ERROR node, while `return a, *b` and `[a, *(b)]`
// parse. Real kernel libraries write it (padding a gradient tuple with
// `*((None,) * n)`), and a false syntax error loses the file's function.
//
// starParens is the work-around: when a parse has an error, the star of
// each such element is blanked to a space (every byte offset stays where it
// was: the element reads as the parenthesized value itself, which is what
// the analysis needs of it) and the file is parsed again; the second tree
// is used only when it has no error at all. (Blanking the parentheses
// instead does not help: the grammar rejects any starred operand that
// starts with a bracket there.)

// starParens returns src with the star of each starred element of a bare
// tuple whose operand starts with a bracket replaced by a space, and whether it
// changed anything. Strings and comments are skipped.
func starParens(src []byte) ([]byte, bool) {
	var out []byte
	prev := func(i int) (byte, string) { // previous significant byte and the word ending there
		j := i - 1
		for j >= 0 && (src[j] == ' ' || src[j] == '\t' || src[j] == '\\' || src[j] == '\n' || src[j] == '\r') {
			j--
		}
		if j < 0 {
			return 0, ""
		}
		k := j
		for k >= 0 && (isWordByte(src[k])) {
			k--
		}
		return src[j], string(src[k+1 : j+1])
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '"' || c == '\'':
			if i = skipString(src, i); i < 0 {
				return src, false // an unterminated string: leave the error to the parser
			}
			i--
			continue
		case c != '*':
			continue
		}
		if (i+1 < len(src) && src[i+1] == '*') || (i > 0 && src[i-1] == '*') {
			i++
			continue
		}
		j := i + 1
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if j >= len(src) || (src[j] != '(' && src[j] != '[' && src[j] != '{') {
			continue
		}
		p, word := prev(i)
		ok := p == ',' || word == "return" || word == "yield" || word == "in"
		if p == '=' && i >= 2 {
			k := i - 1
			for k > 0 && (src[k] == ' ' || src[k] == '\t') {
				k--
			}
			if k > 0 && !isOpByte(src[k-1]) {
				ok = true
			}
		}
		if !ok {
			continue
		}
		if matchBracket(src, j) < 0 {
			continue
		}
		if out == nil {
			out = append([]byte(nil), src...)
		}
		out[i] = ' '
	}
	if out == nil {
		return src, false
	}
	return out, true
}

func isWordByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func isOpByte(c byte) bool {
	switch c {
	case '=', '!', '<', '>', '+', '-', '*', '/', '%', '&', '|', '^', '@', ':':
		return true
	}
	return false
}

// matchBracket returns the offset of the bracket that closes the one at i,
// or -1.
func matchBracket(src []byte, i int) int {
	depth := 0
	for j := i; j < len(src); j++ {
		switch c := src[j]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return j
			}
		case '"', '\'':
			if j = skipString(src, j); j < 0 {
				return -1
			}
			j--
		case '#':
			for j < len(src) && src[j] != '\n' {
				j++
			}
		}
	}
	return -1
}
