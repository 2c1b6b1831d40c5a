package suppress

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/internal/fold"
)

// Suppression comments:
//
//	x = t.item()  # capguard: ignore[CG101] warm-up only, never captured
//	x = t.item()  # noqa: CG101
//
// A capguard comment needs a reason after the codes; without one it
// suppresses nothing and is itself reported (CG900). A suppression applies
// to findings that start on its line or, when the comment stands alone on
// its line, on the next line. Suppressions that suppress nothing are
// reported (CG901), as ruff's RUF100 does.

var (
	capguardIgnoreRE = regexp.MustCompile(`capguard:\s*ignore\[([^\]]*)\]\s*(.*)$`)
	codeRE           = regexp.MustCompile(`[A-Z]+[0-9]+`)
	noqaRE           = regexp.MustCompile(`(?i)\bnoqa\b(?::\s*([A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?`)
)

type suppression struct {
	node    *Node
	lines   []int    // 1-based lines it covers
	codes   []string // empty: all (bare noqa)
	capg    bool
	invalid string
	used    map[string]bool
}

func suppressionsOf(f *File) []*suppression {
	var out []*suppression
	for _, c := range f.Tree.Comments {
		text := c.Text(f.Src)
		if !strings.Contains(text, "capguard:") && !fold.Contains(text, "noqa") {
			continue // neither regexp below can match: most comments
		}
		s := &suppression{node: c, used: map[string]bool{}}
		line := f.Line(c)
		alone := strings.TrimSpace(string(f.Src[f.LineStart(line):c.Start])) == ""
		s.lines = []int{line}
		if alone {
			s.lines = append(s.lines, line+1)
		}
		if m := capguardIgnoreRE.FindStringSubmatch(text); m != nil {
			s.capg = true
			for _, code := range strings.Split(m[1], ",") {
				if code = strings.ToUpper(strings.TrimSpace(code)); code != "" {
					s.codes = append(s.codes, code)
				}
			}
			reason := m[2]
			if i := strings.IndexByte(reason, '#'); i >= 0 {
				reason = reason[:i] // another tool's comment follows
			}
			if strings.TrimSpace(reason) == "" {
				s.invalid = "needs a reason after the codes: `# capguard: ignore[" + strings.Join(s.codes, ",") + "] why this is safe`"
			}
			if len(s.codes) == 0 {
				s.invalid = "names no rule: `# capguard: ignore[CG301] reason`"
			}
			out = append(out, s)
			continue
		}
		if m := noqaRE.FindStringSubmatch(text); m != nil {
			for _, code := range codeRE.FindAllString(strings.ToUpper(m[1]), -1) {
				s.codes = append(s.codes, code)
			}
			// noqa comments for other linters are not ours to judge.
			ours := len(s.codes) == 0
			for _, code := range s.codes {
				if strings.HasPrefix(code, "CG") {
					ours = true
				}
			}
			if ours {
				out = append(out, s)
			}
		}
	}
	return out
}

func (s *suppression) covers(d *Diagnostic) (string, bool) {
	if s.invalid != "" {
		return "", false
	}
	on := false
	for _, l := range s.lines {
		if d.Start.Line == l {
			on = true
		}
	}
	if !on {
		return "", false
	}
	if len(s.codes) == 0 {
		return "*", true
	}
	for _, c := range s.codes {
		if strings.HasPrefix(d.Rule.ID, c) {
			return c, true
		}
	}
	return "", false
}

var (
	ruleInvalidSuppression = &Rule{
		ID: "CG900", Name: "invalid-suppression", Severity: SeverityWarning,
		Summary: "a `# capguard: ignore[...]` comment without a reason or a rule code suppresses nothing",
		Doc:     doc("cg900_invalid_suppression.md"),
	}
	ruleUnusedSuppression = &Rule{
		ID: "CG901", Name: "unused-suppression", Severity: SeverityWarning,
		Summary: "a suppression comment that suppresses no finding",
		Doc:     doc("cg901_unused_suppression.md"),
	}
)

// Rules are the suppression filter's own rules: CG900 and CG901.
var Rules = []*Rule{ruleInvalidSuppression, ruleUnusedSuppression}

// Finish applies per-file ignores, suppressions and the selection, adds the
// suppression findings, and sorts.
func Finish(proj *Project, diags []*Diagnostic, sel Selector) []*Diagnostic {
	byPath := map[string][]*suppression{}
	files := map[string]*File{}
	for _, f := range proj.Files {
		files[f.Path] = f
		byPath[f.Path] = suppressionsOf(f)
	}
	var out []*Diagnostic
	for _, d := range diags {
		if !sel.Enabled(d.Rule.ID) {
			continue
		}
		if f := files[d.Path]; f != nil && prefixLen(proj.Cfg.FileIgnores(f.Path), d.Rule.ID) >= 0 {
			continue
		}
		suppressed := false
		for _, s := range byPath[d.Path] {
			if code, ok := s.covers(d); ok {
				s.used[code] = true
				suppressed = true
			}
		}
		if !suppressed {
			out = append(out, d)
		}
	}
	for _, f := range proj.Files {
		for _, s := range byPath[f.Path] {
			mk := func(rule *Rule, msg string) {
				if sel.Enabled(rule.ID) && prefixLen(proj.Cfg.FileIgnores(f.Path), rule.ID) < 0 {
					out = append(out, &Diagnostic{Rule: rule, Path: f.Path, Start: posOf(f, int(s.node.Start)),
						End: posOf(f, int(s.node.End)), Message: msg, Severity: rule.Severity, Context: Eager})
				}
			}
			if s.invalid != "" {
				mk(ruleInvalidSuppression, "this suppression "+s.invalid)
				continue
			}
			if len(s.codes) == 0 {
				// A bare `# noqa` suppresses capguard's findings too, but it
				// is nearly always there for another linter (flake8, ruff):
				// it is never reported as unused. 132 files of this
				// machine's Python tree carry one.
				continue
			}
			var unused []string
			for _, c := range s.codes {
				if !s.used[c] && sel.Enabled(c) && (strings.HasPrefix(c, "CG") || s.capg) {
					unused = append(unused, c)
				}
			}
			if len(unused) > 0 {
				mk(ruleUnusedSuppression, fmt.Sprintf("unused suppression of %s: no such finding on this line", strings.Join(unused, ", ")))
			}
		}
	}
	sortDiagnostics(out)
	return out
}
