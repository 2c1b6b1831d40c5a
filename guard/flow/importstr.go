package flow

import (
	"bytes"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Modules and module members named by strings.
//
// `importlib.import_module(name)` returns the module a string names, and
// `getattr(module, name)` the member a string names: an engine that builds
// its model from a table of qualified class names
// (`{"llama": "pkg.models.llama.LlamaForCausalLM"}`, split at the last dot)
// reaches its model classes only that way. The argument's text is read
// where it can be: a literal names its module (resolved); an f-string whose
// holes are not module-level string constants names each module under its
// literal prefix that the pattern matches (a guess); any other value names
// each module that some string in the project names by its full dotted
// name, alone or with a member (a guess). A computed getattr on a project
// module reads each member of that module that such a string names (a
// guess), as well as what was stored under computed names.

// qualStr is a string constant of the project that may be a dotted name:
// its text, with the f-string holes that are module-level string
// constants filled in, and the file it is in (imports resolve from there).
type qualStr struct {
	file *index.File
	text string
}

// noteString records a string node of a file that reads as a dotted name.
// A string that is a whole statement (a docstring) is no value.
func (s *solver) noteString(f *index.File, n *Node) {
	if f == nil || n.End-n.Start > 512 || !bytes.Contains(f.Src[n.Start:n.End], []byte(".")) ||
		n.Parent() != nil && n.Parent().Kind() == "expression_statement" {
		return
	}
	if text, holes := s.stringPattern(f, n); holes == 0 && index.IsDottedName(text) {
		s.qualStrs = append(s.qualStrs, qualStr{file: f, text: text})
	}
}

// holeMark stands for an f-string hole the analysis cannot read.
const holeMark = "\x00"

// stringPattern is the text of a string expression: a literal, an f-string
// (a hole that is a module-level name bound to a string literal is that
// literal; any other hole is holeMark), or a `+` of two such. holes counts
// the holes left; -1 when the expression is no string.
func (s *solver) stringPattern(f *index.File, n *Node) (string, int) {
	n = syntax.Unparen(n)
	if n == nil {
		return "", -1
	}
	src := f.Src
	switch n.Kind() {
	case "string":
		var b strings.Builder
		holes := 0
		for _, c := range n.Children() {
			switch c.Kind() {
			case "string_start":
				if strings.ContainsAny(strings.ToLower(c.Text(src)), "b") {
					return "", -1
				}
			case "string_content":
				b.WriteString(c.Text(src))
			case "escape_sequence":
				return "", -1
			case "interpolation":
				// `{NAME}` of a module-level string constant, with no
				// conversion or format spec, is that constant.
				if kids := c.NamedChildren(); len(kids) == 1 && kids[0].Kind() == "identifier" {
					if lit, ok := s.literalString(f, kids[0].Text(src)); ok {
						b.WriteString(lit)
						continue
					}
				}
				b.WriteString(holeMark)
				holes++
			}
		}
		return b.String(), holes
	case "binary_operator":
		if op := n.Get("operator"); op == nil || op.Text(src) != "+" {
			return "", -1
		}
		l, lh := s.stringPattern(f, n.Get("left"))
		r, rh := s.stringPattern(f, n.Get("right"))
		switch {
		case lh < 0 && rh < 0:
			return "", -1
		case lh < 0:
			return holeMark + r, rh + 1
		case rh < 0:
			return l + holeMark, lh + 1
		}
		return l + r, lh + rh
	case "identifier":
		if t, ok := s.literalString(f, n.Text(src)); ok {
			return t, 0
		}
	}
	return "", -1
}

// literalString is the string literal a module-level name of f is bound
// to (index.LiteralOf), if it is one.
func (s *solver) literalString(f *index.File, name string) (string, bool) {
	lf, lit := s.proj.LiteralOf(f, name)
	if lit == nil {
		return "", false
	}
	return index.StringLit(lit, lf.Src)
}

// qualNames are the project modules and module members that the
// project's dotted-name strings name, worked out once.
type qualNames struct {
	mods    []*index.Module
	members map[*index.Module][]string
}

func (s *solver) qualIndex() *qualNames {
	if s.quals != nil {
		return s.quals
	}
	q := &qualNames{members: map[*index.Module][]string{}}
	seenMod := map[*index.Module]bool{}
	seenMember := map[string]bool{}
	addMod := func(m *index.Module) {
		if !seenMod[m] {
			seenMod[m] = true
			q.mods = append(q.mods, m)
		}
	}
	for _, qs := range s.qualStrs {
		if m := s.proj.Import(qs.file, qs.text, 0); m != nil && m.Regular() {
			addMod(m)
			continue
		}
		dot := strings.LastIndexByte(qs.text, '.')
		m := s.proj.Import(qs.file, qs.text[:dot], 0)
		name := qs.text[dot+1:]
		if m == nil || m.File == nil || !m.File.Top.Locals[name] {
			continue
		}
		addMod(m)
		if k := m.File.Path + "\x00" + name; !seenMember[k] {
			seenMember[k] = true
			q.members[m] = append(q.members[m], name)
		}
	}
	s.quals = q
	return q
}

// importModule: dst = importlib.import_module(name) for the call c.
func (s *solver) importModule(c *constraint, st uint8) {
	if c.owner == nil || c.site == nil {
		return
	}
	f := c.owner.File
	var argNode *Node
	if al := c.site.Get("arguments"); al != nil {
		for _, a := range al.NamedChildren() {
			if a.Kind() == "comment" || a.Kind() == "keyword_argument" {
				continue
			}
			argNode = a
			break
		}
	}
	if argNode == nil || argNode.Kind() == "list_splat" {
		return
	}
	text, holes := s.stringPattern(f, argNode)
	switch {
	case holes == 0:
		if strings.HasPrefix(text, ".") {
			return // relative to a package argument: not read
		}
		if m := s.proj.Import(f, text, 0); m != nil && m.Regular() {
			s.add(c.dst, s.mod(m), st)
		}
	case holes > 0:
		for _, m := range s.patternModules(f, text) {
			s.add(c.dst, s.mod(m), min(st, sName))
		}
	default:
		s.namedModules(c.dst, st)
	}
}

// namedModules: dst takes each module that a dotted-name string of the
// project names (an import_module of a computed name), once every string
// has been seen.
func (s *solver) namedModules(dst NID, st uint8) {
	if !s.qualsDone {
		s.lateQuals = append(s.lateQuals, lateQual{dst: dst, st: st})
		return
	}
	for _, m := range s.qualIndex().mods {
		s.add(dst, s.mod(m), min(st, sName))
	}
}

// lateQual is a read of what the project's dotted-name strings name, made
// while the constraints were built: of the modules they name (mod nil), or
// of the members of mod they name.
type lateQual struct {
	mod *index.Module
	dst NID
	st  uint8
}

// builtQuals makes the reads that waited for every string of the project:
// called once the constraints are built.
func (s *solver) builtQuals() {
	s.qualsDone = true
	for _, l := range s.lateQuals {
		if l.mod == nil {
			s.namedModules(l.dst, l.st)
		} else {
			s.namedMembers(l.mod, l.dst, l.st)
		}
	}
	s.lateQuals = nil
}

// patternModules are the project modules an f-string pattern may name:
// the modules under its literal prefix (up to the last dot before its
// first hole) whose dotted names match it, a hole standing for one or
// more dotted parts.
func (s *solver) patternModules(f *index.File, pattern string) []*index.Module {
	lit := pattern[:strings.Index(pattern, holeMark)]
	dot := strings.LastIndexByte(lit, '.')
	if dot <= 0 {
		return nil
	}
	prefix := lit[:dot]
	base := s.proj.Import(f, prefix, 0)
	if base == nil {
		return nil
	}
	var re strings.Builder
	re.WriteString("^")
	for i, part := range strings.Split(pattern[dot+1:], holeMark) {
		if i > 0 {
			re.WriteString(`[A-Za-z0-9_.]+`)
		}
		re.WriteString(regexp.QuoteMeta(part))
	}
	re.WriteString("$")
	rx, err := regexp.Compile(re.String())
	if err != nil {
		return nil
	}
	var out []*index.Module
	var walk func(m *index.Module, rel string, depth int)
	walk = func(m *index.Module, rel string, depth int) {
		if depth > 4 {
			return
		}
		for _, name := range slices.Sorted(maps.Keys(m.Children)) {
			ch := m.Children[name]
			r := name
			if rel != "" {
				r = rel + "." + name
			}
			if ch.Regular() && rx.MatchString(r) {
				out = append(out, ch)
			}
			walk(ch, r, depth+1)
		}
	}
	walk(base, "", 0)
	return out
}

// namedMembers: dst takes each member of module m that a dotted-name
// string of the project names (a computed getattr on m).
func (s *solver) namedMembers(m *index.Module, dst NID, st uint8) {
	if m == nil || m.File == nil {
		return
	}
	if !s.qualsDone {
		s.lateQuals = append(s.lateQuals, lateQual{mod: m, dst: dst, st: st})
		return
	}
	for _, name := range s.qualIndex().members[m] {
		s.copyTo(s.global(m.File, name), dst, min(st, sName))
	}
}
