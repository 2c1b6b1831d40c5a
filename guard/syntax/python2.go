package syntax

import (
	"fmt"
	"regexp"
	"strings"
)

// Python2Syntax names the first Python 2 construct in a tree that parsed
// cleanly, or "". tree-sitter's Python grammar still accepts some Python 2
// syntax that Python 3 refuses: the print and exec statements, `<>`, `10L`,
// `0777`, backquotes, `ur”` strings, `raise E, v` and tuple parameters.
// Python 3 reads such a file as a syntax error, and so does capguard.
func Python2Syntax(root *Node, src []byte) string {
	if root == nil {
		return ""
	}
	var bad *Node
	what := ""
	Walk(root, func(n *Node) bool {
		if bad != nil {
			return false
		}
		switch w := python2Node(n, src); {
		case w != "":
			bad, what = n, w
			return false
		}
		return true
	})
	if bad == nil {
		return ""
	}
	row, col := RowCol(src, int(bad.Start))
	return fmt.Sprintf("syntax error at line %d, column %d: %s (Python 2 syntax; capguard reads Python 3)", row+1, col+1, what)
}

var octalRE = regexp.MustCompile(`^0[0-9_]*[1-9][0-9_]*$`)

func python2Node(n *Node, src []byte) string {
	switch n.Kind() {
	case "print_statement":
		for _, c := range n.Children() {
			if c.Kind() == "chevron" {
				// `print >>f, x` is also a Python 3 expression: a tuple of a shift.
				return ""
			}
		}
		return "print statement"
	case "exec_statement":
		return "exec statement"
	case "<>":
		return "`<>` operator"
	case "integer":
		t := n.Text(src)
		switch {
		case strings.HasSuffix(t, "l") || strings.HasSuffix(t, "L"):
			return fmt.Sprintf("long integer literal %s", t)
		case octalRE.MatchString(t):
			return fmt.Sprintf("old octal literal %s", t)
		}
	case "string_start":
		t := strings.ToLower(n.Text(src))
		switch {
		case strings.HasPrefix(t, "`"):
			return "backquote repr"
		case strings.Contains(t, "u") && strings.Contains(t, "r"):
			return fmt.Sprintf("string prefix %s", n.Text(src))
		}
	case "string":
		if strings.HasPrefix(n.Text(src), "`") {
			return "backquote repr"
		}
	case "raise_statement":
		for _, c := range n.Children() {
			if c.Kind() == "expression_list" {
				return "`raise E, value`"
			}
		}
	case "tuple_pattern":
		if p := n.Parent(); p != nil && (p.Kind() == "parameters" || p.Kind() == "lambda_parameters") {
			return "tuple parameter"
		}
	}
	return ""
}
