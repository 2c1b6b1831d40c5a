package rules

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/suppress"
	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// ruleFileRE names a rule's file: cgNNN_<rule name with underscores>.go.
var ruleFileRE = regexp.MustCompile(`^cg[0-9]{3}_[a-z0-9_]+\.go$`)

// ruleReferences type-checks files (one package) and returns, sorted, each
// use in a rule file of a package-level name, method or field declared in
// another rule file: "cg201_x.go:12: uses lineIndent (cg203_y.go)". Names
// of helpers.go, all.go and the layers below are free to use.
func ruleReferences(fset *token.FileSet, files []*ast.File, imp types.Importer) ([]string, error) {
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check("rules", fset, files, info)
	if err != nil {
		return nil, err
	}
	var out []string
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		if v, ok := obj.(*types.Var); ok && !v.IsField() && obj.Parent() != pkg.Scope() {
			continue // a local
		}
		if _, ok := obj.(*types.Label); ok {
			continue
		}
		if obj.Parent() != nil && obj.Parent() != pkg.Scope() && !isMember(obj) {
			continue // a local constant, type or function literal's name
		}
		user := filepath.Base(fset.Position(id.Pos()).Filename)
		home := filepath.Base(fset.Position(obj.Pos()).Filename)
		if user != home && ruleFileRE.MatchString(user) && ruleFileRE.MatchString(home) {
			out = append(out, fmt.Sprintf("%s:%d: uses %s (%s)", user, fset.Position(id.Pos()).Line, obj.Name(), home))
		}
	}
	sort.Strings(out)
	return out, nil
}

func isMember(o types.Object) bool {
	switch o := o.(type) {
	case *types.Var:
		return o.IsField()
	case *types.Func:
		return o.Type().(*types.Signature).Recv() != nil
	}
	return false
}

// exportImporter reads the export data `go list -export` gives for the
// packages of this module and their dependencies.
func exportImporter(t *testing.T, fset *token.FileSet) types.Importer {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if p := strings.SplitN(l, "\t", 2); len(p) == 2 && p[1] != "" {
			exports[p[0]] = p[1]
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if e, ok := exports[path]; ok {
			return os.Open(e)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
}

// TestNoRuleToRuleReference: no rule file uses a name another rule file
// declares. What two rules share goes to helpers.go or to a layer below
// (guard/analysis, guard/tensors, guard/fixmodel, guard/source,
// guard/torchapi): then a rule can change without changing another.
func TestNoRuleToRuleReference(t *testing.T) {
	fset := token.NewFileSet()
	paths, _ := filepath.Glob("*.go")
	var files []*ast.File
	rulesSeen := 0
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		if ruleFileRE.MatchString(p) {
			rulesSeen++
		}
	}
	if rulesSeen < len(All) {
		t.Fatalf("%d rule files for %d rules", rulesSeen, len(All))
	}
	refs, err := ruleReferences(fset, files, exportImporter(t, fset))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		t.Errorf("rule-to-rule reference: %s; move it to helpers.go or a layer below", r)
	}
}

// TestRuleReferencesFound keeps the check above able to fail: two rule
// files of a made-up package, one calling the other's helper and method.
func TestRuleReferencesFound(t *testing.T) {
	fset := token.NewFileSet()
	src := map[string]string{
		"cg101_one.go": "package rules\n\nfunc helperOfOne() int { return 1 }\n\ntype thing struct{ n int }\n\nfunc (t thing) size() int { return t.n }\n",
		"cg102_two.go": "package rules\n\nfunc useIt() int { var x thing; return helperOfOne() + x.size() + shared() }\n",
		"helpers.go":   "package rules\n\nfunc shared() int { return 0 }\n",
	}
	var files []*ast.File
	for _, name := range []string{"cg101_one.go", "cg102_two.go", "helpers.go"} {
		f, err := parser.ParseFile(fset, name, src[name], 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	refs, err := ruleReferences(fset, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"cg102_two.go:3: uses helperOfOne (cg101_one.go)",
		"cg102_two.go:3: uses size (cg101_one.go)",
		"cg102_two.go:3: uses thing (cg101_one.go)",
	}
	if strings.Join(refs, "\n") != strings.Join(want, "\n") {
		t.Errorf("references:\n%s\nwant:\n%s", strings.Join(refs, "\n"), strings.Join(want, "\n"))
	}
}

// TestRegistry: every rule of the explicit lists (All, and the
// suppression filter's) has its file, fixtures that expect it, a doc page
// and a README row, and All is in ID order with no rule left out of it.
func TestRegistry(t *testing.T) {
	const root = "../.."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The codes some fixture project expects (`# want: CG101`).
	wanted := map[string]bool{}
	codeRE := regexp.MustCompile(`CG[0-9]{3}`)
	for _, dir := range testenv.FixtureProjects(t, filepath.Join(root, "testdata")) {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".py") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(string(data), "\n") {
				if i := strings.Index(line, "# want:"); i >= 0 {
					for _, c := range codeRE.FindAllString(line[i:], -1) {
						wanted[c] = true
					}
				}
			}
			return nil
		})
	}
	// The rules the package's files declare (`var x = &Rule{ID: ...}`).
	declared := map[string]string{}
	idRE := regexp.MustCompile(`(?m)^var \w+ = &(?:analysis\.)?Rule\{\n\tID: "(CG[0-9]{3})", Name: "([a-z0-9-]+)"`)
	paths, _ := filepath.Glob("*.go")
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ms := idRE.FindAllStringSubmatch(string(data), -1)
		switch {
		case ruleFileRE.MatchString(p) && len(ms) != 1:
			t.Errorf("%s declares %d rules; a rule file declares one", p, len(ms))
		case !ruleFileRE.MatchString(p) && len(ms) != 0:
			t.Errorf("%s declares a rule; rules live in files named cgNNN_<name>.go", p)
		}
		for _, m := range ms {
			declared[m[1]] = p
			if want := strings.ToLower(m[1]) + "_" + strings.ReplaceAll(m[2], "-", "_") + ".go"; p != want {
				t.Errorf("%s declares %s (%s): its file is %s", p, m[1], m[2], want)
			}
		}
	}
	listed := map[string]bool{}
	for i, r := range All {
		listed[r.ID] = true
		if i > 0 && All[i-1].ID >= r.ID {
			t.Errorf("All: %s after %s; keep it in ID order", r.ID, All[i-1].ID)
		}
		if declared[r.ID] == "" {
			t.Errorf("%s is in All but no rule file declares it", r.ID)
		}
	}
	for id, p := range declared {
		if !listed[id] {
			t.Errorf("%s (%s) is not in All: the pipeline would never run it", id, p)
		}
	}
	for _, r := range append(append([]*analysis.Rule{}, All...), suppress.Rules...) {
		if !wanted[r.ID] {
			t.Errorf("%s: no fixture expects it (`# want: %s` in a testdata project)", r.ID, r.ID)
		}
		if _, err := os.Stat(filepath.Join(root, "docs", "rules", r.ID+".md")); err != nil {
			t.Errorf("%s: no doc page (go generate ./cli/capguard writes docs/rules/%s.md)", r.ID, r.ID)
		}
		if !regexp.MustCompile(`(?m)^\| ` + r.ID + ` \| ` + regexp.QuoteMeta(r.Name) + `\b`).Match(readme) {
			t.Errorf("%s: no row `| %s | %s: ... |` in README.md's rule table", r.ID, r.ID, r.Name)
		}
		for _, section := range []string{"## What it does", "## Why it matters", "## Example", "## Fix"} {
			if !strings.Contains(r.Doc, section) {
				t.Errorf("%s: its doc has no %q section", r.ID, section)
			}
		}
		if r.Summary == "" || r.Run == nil && r.After == nil && len(r.Contexts) > 0 {
			t.Errorf("%s: a rule needs a summary, and Run or After", r.ID)
		}
	}
}
