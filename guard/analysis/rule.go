package analysis

import (
	"sort"
	"strings"
)

// Rule is one check: an ID, a name, a default severity, a one-line summary,
// its documentation (what it does, why it matters, example, fix) and the
// function that runs it. Each rule lives in its own file, cgNNN_name.go,
// with its documentation beside its code.
type Rule struct {
	ID       string
	Name     string
	Severity Severity
	// Summary is the one-line description used by `capguard rule` and SARIF.
	Summary string
	// Doc is the long documentation in Markdown: "What it does", "Why it
	// matters", "Example", "Fix".
	Doc string
	// Fix says whether the rule offers a fix: "" (never), "safe",
	// "unsafe", or "sometimes" (safe or unsafe depending on the site).
	Fix string
	// Contexts the rule runs in. Empty means the rule runs once per file
	// (project-level rules such as CG302 and the suppression checks).
	Contexts []Context
	// Run checks one function body (or region) in one context.
	Run func(p *Pass)
	// After is a project-wide pass that runs once the per-function passes
	// are done, over their findings (CG302 reports claims those findings
	// contradict).
	After func(a *Analysis, diags []*Diagnostic) []*Diagnostic
}

var Registry = map[string]*Rule{}

func Register(r *Rule) *Rule {
	if _, dup := Registry[r.ID]; dup {
		panic("guard: duplicate rule " + r.ID)
	}
	Registry[r.ID] = r
	return r
}

// Rules returns every rule, sorted by ID.
func Rules() []*Rule {
	out := make([]*Rule, 0, len(Registry))
	for _, r := range Registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// LookupRule finds a rule by ID ("CG301") or name ("temporary-into-kernel").
func LookupRule(idOrName string) *Rule {
	if r, ok := Registry[strings.ToUpper(idOrName)]; ok {
		return r
	}
	for _, r := range Registry {
		if r.Name == idOrName {
			return r
		}
	}
	return nil
}

func (r *Rule) RunsIn(c Context) bool {
	for _, x := range r.Contexts {
		if x == c {
			return true
		}
	}
	return false
}

// Selector chooses rules by code or prefix ("CG301", "CG3", "CG", "ALL"),
// as ruff's --select and --ignore do: a rule is enabled when the longest
// matching select prefix is longer than the longest matching ignore prefix.
type Selector struct {
	Select []string
	Ignore []string
}

func PrefixLen(list []string, id string) int {
	best := -1
	for _, p := range list {
		p = strings.ToUpper(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if p == "ALL" {
			if best < 0 {
				best = 0
			}
			continue
		}
		if strings.HasPrefix(id, p) && len(p) > best {
			best = len(p)
		}
	}
	return best
}

// Enabled reports whether rule id is selected.
func (s Selector) Enabled(id string) bool {
	sel := s.Select
	if len(sel) == 0 {
		sel = []string{"ALL"}
	}
	in := PrefixLen(sel, id)
	if in < 0 {
		return false
	}
	return PrefixLen(s.Ignore, id) < in // -1 (not ignored) is below any in
}

// ValidateCodes returns the codes that name no rule and are no prefix of one.
func ValidateCodes(codes []string) []string {
	var bad []string
	for _, c := range codes {
		u := strings.ToUpper(strings.TrimSpace(c))
		if u == "ALL" {
			continue
		}
		ok := false
		for id := range Registry {
			if strings.HasPrefix(id, u) {
				ok = true
				break
			}
		}
		if !ok {
			bad = append(bad, c)
		}
	}
	return bad
}
