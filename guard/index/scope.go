package index

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// scopeOf fills a def's or lambda's Locals, Globals, Nonlocals and
// Generator flag.
func scopeOf(fn *Function) {
	fn.Locals = map[string]bool{}
	fn.Globals = map[string]bool{}
	fn.Nonlocals = map[string]bool{}
	for _, p := range fn.Params {
		fn.Locals[p.Name] = true
	}
	if fn.Body == nil {
		return
	}
	if fn.Kind == Lambda {
		scopeExpr(fn, fn.Body)
	} else {
		scope(fn, fn.Body)
	}
	for g := range fn.Globals {
		delete(fn.Locals, g)
	}
	for g := range fn.Nonlocals {
		delete(fn.Locals, g)
	}
}

// scope walks the code of a block that runs in fn (a def's body, the
// module) for the names it binds, not entering nested defs, lambdas or
// class bodies (a class body's names are the class's); the names of
// defs and classes are bound.
func scope(fn *Function, body *Node) {
	src := fn.File.Src
	stack := []*Node{body}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n.Kind() {
		case "function_definition", "class_definition":
			if name := n.Get("name"); name != nil {
				fn.Locals[name.Text(src)] = true
			}
			if n.Kind() == "class_definition" {
				// Bases and keywords run here; the body is the class's.
				if sc := n.Get("superclasses"); sc != nil {
					stack = append(stack, sc)
				}
			} else {
				// Defaults run here.
				if ps := n.Get("parameters"); ps != nil {
					for _, p := range ps.NamedChildren() {
						if v := p.Get("value"); v != nil {
							stack = append(stack, v)
						}
					}
				}
			}
			continue
		case "lambda":
			if ps := n.Get("parameters"); ps != nil {
				for _, p := range ps.NamedChildren() {
					if v := p.Get("value"); v != nil {
						stack = append(stack, v)
					}
				}
			}
			continue
		case "decorated_definition":
			for _, c := range n.Children() {
				stack = append(stack, c)
			}
			continue
		case "global_statement", "nonlocal_statement":
			for _, c := range n.NamedChildren() {
				if c.Kind() == "identifier" {
					if n.Kind() == "global_statement" {
						fn.Globals[c.Text(src)] = true
					} else {
						fn.Nonlocals[c.Text(src)] = true
					}
				}
			}
			continue
		case "yield":
			fn.Generator = true
		}
		bindsIn(fn, n)
		kids := n.Children()
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
}

// scopeExpr is scope for a lambda's body expression.
func scopeExpr(fn *Function, body *Node) {
	stack := []*Node{body}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind() == "lambda" {
			continue
		}
		if n.Kind() == "yield" {
			fn.Generator = true
		}
		bindsIn(fn, n)
		kids := n.Children()
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
}

// bindsIn records the names node n binds by itself (not through its
// children's own binding forms, which the walk visits).
func bindsIn(fn *Function, n *Node) {
	src := fn.File.Src
	add := func(t *Node) {
		for _, name := range targetNames(t, src) {
			fn.Locals[name] = true
		}
	}
	switch n.Kind() {
	case "assignment", "augmented_assignment":
		add(n.Get("left"))
		// a = b = c: tree-sitter nests the right side as an assignment.
	case "named_expression":
		add(n.Get("name"))
	case "for_statement", "for_in_clause":
		add(n.Get("left"))
	case "with_item":
		if v := syntax.Unparen(n.Get("value")); v != nil && v.Kind() == "as_pattern" {
			if a := v.Get("alias"); a != nil {
				add(a)
			}
		}
	case "except_clause":
		for _, c := range n.NamedChildren() {
			if c.Kind() == "as_pattern" {
				if a := c.Get("alias"); a != nil {
					add(a)
				}
			}
		}
		// `except E as e` in some grammar versions: identifier after "as".
		seenAs := false
		for _, c := range n.Children() {
			if c.Kind() == "as" {
				seenAs = true
				continue
			}
			if seenAs && c.Kind() == "identifier" {
				fn.Locals[c.Text(src)] = true
				seenAs = false
			}
		}
	case "import_statement":
		for _, c := range n.All("name") {
			if c.Kind() == "aliased_import" {
				fn.Locals[c.Get("alias").Text(src)] = true
			} else {
				full := c.Text(src)
				if i := strings.IndexByte(full, '.'); i >= 0 {
					full = full[:i]
				}
				fn.Locals[full] = true
			}
		}
	case "import_from_statement":
		for _, c := range n.All("name") {
			if c.Kind() == "aliased_import" {
				fn.Locals[c.Get("alias").Text(src)] = true
			} else {
				fn.Locals[c.Text(src)] = true
			}
		}
	case "delete_statement":
		for _, c := range n.NamedChildren() {
			add(c)
		}
	case "as_pattern":
		// match statements: case X() as y.
		if p := n.Parent(); p != nil && p.Kind() == "case_pattern" {
			if a := n.Get("alias"); a != nil {
				add(a)
			}
		}
	}
}

// targetNames are the identifiers an assignment target binds: `a`,
// `a, b`, `[a, *b]`, `(a, (b, c))`; attributes and subscripts bind none.
func targetNames(t *Node, src []byte) []string {
	t = syntax.Unparen(t)
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case "identifier":
		return []string{t.Text(src)}
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list":
		var out []string
		for _, c := range t.NamedChildren() {
			out = append(out, targetNames(c, src)...)
		}
		return out
	case "list_splat_pattern", "list_splat":
		for _, c := range t.NamedChildren() {
			return targetNames(c, src)
		}
	case "as_pattern_target":
		for _, c := range t.NamedChildren() {
			return targetNames(c, src)
		}
	}
	return nil
}

// TargetNames is targetNames for other layers.
func TargetNames(t *Node, src []byte) []string { return targetNames(t, src) }

// BindingNames are the names statement or clause x binds other than by a
// plain assignment: augmented assignments, for targets, a walrus, del,
// with ... as, except ... as.
func BindingNames(x *syntax.Node, src []byte) []string {
	switch x.Kind() {
	case "augmented_assignment", "for_statement", "for_in_clause":
		return TargetNames(x.Get("left"), src)
	case "named_expression":
		return TargetNames(x.Get("name"), src)
	case "delete_statement":
		var out []string
		for _, c := range x.NamedChildren() {
			out = append(out, TargetNames(c, src)...)
		}
		return out
	case "with_item", "as_pattern":
		if v := syntax.Unparen(x.Get("value")); v != nil && v.Kind() == "as_pattern" {
			return TargetNames(v.Get("alias"), src)
		}
		if a := x.Get("alias"); a != nil {
			return TargetNames(a, src)
		}
	case "except_clause":
		var out []string
		seenAs := false
		for _, c := range x.Children() {
			if c.Kind() == "as" {
				seenAs = true
			} else if seenAs && c.Kind() == "identifier" {
				out = append(out, c.Text(src))
			} else if c.Kind() == "as_pattern" {
				out = append(out, TargetNames(c.Get("alias"), src)...)
			}
		}
		return out
	}
	return nil
}
