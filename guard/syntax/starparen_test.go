package syntax

import "testing"

// TestStarParens: valid Python that tree-sitter-python rejects (a starred
// parenthesized element in a bare tuple) parses without a syntax error, the
// tree keeps the original offsets, and real syntax errors stay errors.
func TestStarParens(t *testing.T) {
	for _, src := range []string{
		"def f(a):\n    return a, *((None,) * 2)\n",
		"def f(a, b):\n    x = a, *(b)\n    return x\n",
		"def f(a, b):\n    return *(b), a\n",
		"def f(dx):\n    return dx, *[None] * 10\n",
		"def f(a, b):\n    return a, *{b}\n",
		"def f(a, b):\n    for x in a, *(b):\n        yield x\n",
		"def f(a, b):\n    s = '*(' # *(\n    return a, *(b if a else (1, 2))\n",
	} {
		parsesClean(t, src)
	}
	for _, src := range []string{
		"def f(a, b):\n    return a, *(b\n",
		"def f(a):\n    return a *(\n",
		"x = (1,\n",
	} {
		parsesWithError(t, src)
	}
	// Multiplication and ** are never rewritten.
	for _, src := range []string{"y = a *(b)\n", "f(**(d))\n", "y = a, b *(c)\n"} {
		if _, changed := starParens([]byte(src)); changed {
			t.Errorf("%q: rewritten", src)
		}
	}
}

func TestStarParensParseOK(t *testing.T) {
	if !ParseOK([]byte("def f(a):\n    return a, *((None,) * 2)\n")) {
		t.Error("ParseOK rejects a starred parenthesized element of a bare tuple")
	}
	if ParseOK([]byte("def f(a):\n    return a, *((None,) * 2\n")) {
		t.Error("ParseOK accepts an unclosed parenthesis")
	}
}
