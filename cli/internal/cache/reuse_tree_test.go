package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// TestKernelEditsOnTree checks kernel body edits on a real project, named
// by CAPGUARD_EDIT_TREE (a package folder; skipped when unset): for up to
// CAPGUARD_EDIT_KERNELS top-level Triton kernels (default 6), a statement
// added on a body line, a line inserted after it, and a store through each
// of two of the kernel's parameters. Each edit the in-memory path
// (ReuseResult) serves must equal an analysis of the edited buffer, and
// at least one edit must be served.
//
//	CAPGUARD_EDIT_TREE=/path/to/FlagGems/src go test ./cli/internal/cache -run KernelEditsOnTree -v
func TestKernelEditsOnTree(t *testing.T) {
	opts, limit := editTree(t, "CAPGUARD_EDIT_KERNELS", 6)
	res, err := guard.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	// Body lines past the first of a top-level kernel: simple statements
	// four spaces in.
	kernel := regexp.MustCompile(`(?m)^@triton\.jit[^\n]*\n(?:@[^\n]*\n)*def (\w+)\(([^)]*)\)[^\n]*:\n`)
	stmt := regexp.MustCompile(`^    [A-Za-z_]\w* = [^#;\n]*[\w)\]]$`)
	var paths []string
	for p := range res.Digests {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	served, refused, kernels := 0, 0, 0
	for _, p := range paths {
		src := string(res.Source(p))
		for _, m := range kernel.FindAllStringSubmatchIndex(src, -1) {
			if kernels >= limit {
				break
			}
			lines := strings.SplitAfter(src[m[1]:], "\n")
			at, line := -1, ""
			off := m[1]
			for i, l := range lines {
				if len(l) > 0 && l[0] != ' ' && l[0] != '\t' && l[0] != '\n' && l[0] != '#' {
					break // the body ended
				}
				if i > 0 && stmt.MatchString(strings.TrimRight(l, "\n")) {
					at, line = off, strings.TrimRight(l, "\n")
					break
				}
				off += len(l)
			}
			if at < 0 {
				continue
			}
			kernels++
			var params []string
			for _, prm := range strings.Split(src[m[4]:m[5]], ",") {
				name := strings.TrimSpace(strings.SplitN(strings.SplitN(prm, ":", 2)[0], "=", 2)[0])
				if name != "" && !strings.Contains(prm, "constexpr") && !strings.HasPrefix(name, "*") {
					params = append(params, name)
				}
			}
			edits := map[string]string{
				"a statement added": src[:at] + line + "; _cg_k = 0" + src[at+len(line):],
				"a line inserted":   src[:at] + line + "\n    _cg_k = 1" + src[at+len(line):],
			}
			for k, prm := range params {
				if k == 2 {
					break
				}
				edits["a store through "+prm] = src[:at] + line + "\n    tl.store(" + prm + " + 0, 0)" + src[at+len(line):]
			}
			for name, edited := range edits {
				got, _, why := ReuseResult(res, res.Digests, map[string][]byte{p: []byte(edited)}, 0)
				if why != "" {
					refused++
					t.Logf("%s %s: %s: refused: %s", filepath.Base(p), src[m[2]:m[3]], name, why)
					continue
				}
				served++
				o := opts
				o.Overlay = map[string][]byte{p: []byte(edited)}
				want, err := guard.Run(o)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) || !reflect.DeepEqual(got.Settings, want.Settings) {
					t.Errorf("%s %s: %s: served, but differs from the analysis of the edit", filepath.Base(p), src[m[2]:m[3]], name)
				} else {
					t.Logf("%s %s: %s: served, equal", filepath.Base(p), src[m[2]:m[3]], name)
				}
			}
		}
	}
	t.Logf("%d kernels: %d edits served (each equal to an analysis), %d refused", kernels, served, refused)
	if served == 0 {
		t.Error("no edit was served")
	}
}

// TestLiteralEditsOnFixtures: in every file of every fixture project, a
// literal bound at module level to a name no file holds (guard.InertUnit)
// — appended, inserted before the first top-level def or class past the
// file's second line, then given
// another value — is served by the in-memory path (ReuseResult), and what
// it serves equals an analysis of the edited buffer; the same literal
// bound to a name the file defines is refused.
func TestLiteralEditsOnFixtures(t *testing.T) {
	served, refused := 0, 0
	for _, dir := range testenv.FixtureProjects(t, "../../../testdata") {
		s, r := literalEdits(t, guard.Options{Paths: []string{dir}, Digests: true}, 0)
		served, refused = served+s, refused+r
	}
	t.Logf("%d literal edits served (each equal to an analysis), %d refused", served, refused)
	if served < 200 {
		t.Errorf("%d literal edits served, want 200 or more: the test no longer covers the fixtures", served)
	}
}

// TestLiteralEditsOnTree is TestLiteralEditsOnFixtures on a real project,
// named by CAPGUARD_EDIT_TREE (a package folder; skipped when unset), for
// CAPGUARD_EDIT_FILES of its files (default 12), spread over them in sorted
// order.
//
//	CAPGUARD_EDIT_TREE=/path/to/lmdeploy/lmdeploy go test ./cli/internal/cache -run LiteralEditsOnTree -v -timeout 60m
func TestLiteralEditsOnTree(t *testing.T) {
	opts, limit := editTree(t, "CAPGUARD_EDIT_FILES", 12)
	served, refused := literalEdits(t, opts, limit)
	t.Logf("%d literal edits served (each equal to an analysis), %d refused", served, refused)
	if served == 0 {
		t.Error("no edit was served")
	}
}

// editTree: the run options of the tree CAPGUARD_EDIT_TREE names (the test
// is skipped when it is unset), and the count the variable limitVar gives
// (def when unset).
func editTree(t *testing.T, limitVar string, def int) (guard.Options, int) {
	t.Helper()
	tree := os.Getenv("CAPGUARD_EDIT_TREE")
	if tree == "" {
		t.Skip("CAPGUARD_EDIT_TREE is not set")
	}
	limit := def
	fmt.Sscan(os.Getenv(limitVar), &limit)
	return guard.Options{Paths: []string{tree}, Config: &guard.Config{}, Digests: true}, limit
}

// literalEdits makes the literal edits of TestLiteralEditsOnFixtures in
// the files of the run opts (limit of them, spread in sorted order; 0: all) and
// counts those served and refused.
func literalEdits(t *testing.T, opts guard.Options, limit int) (served, refused int) {
	t.Helper()
	res, err := guard.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range res.Digests {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if limit > 0 && len(paths) > limit {
		// Spread over the tree: every k-th file.
		picked := make([]string, limit)
		for i := range picked {
			picked[i] = paths[i*len(paths)/limit]
		}
		paths = picked
	}
	for _, p := range paths {
		src := string(res.Source(p))
		tree, err := syntax.Parse([]byte(src))
		if err != nil || tree.Syntax != "" {
			continue
		}
		body := src
		if body != "" && !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		edits := [][2]string{{"appended", body + "\n_cg_unread_limit = (1, 'two', -3.0)\n"}}
		var defined string
		inserted := false
		for i, st := range tree.Root.Children() {
			if !inserted && i > 0 && st.Is("function_definition", "class_definition", "decorated_definition") &&
				strings.Count(src[:st.Start], "\n") >= 2 && src[st.Start-1] == '\n' {
				inserted = true
				edits = append(edits, [2]string{"inserted", src[:st.Start] + "_cg_unread_a = _cg_unread_b = 2\n" + src[st.Start:]})
			}
			if defined == "" && (st.Kind() == "function_definition" || st.Kind() == "class_definition") {
				if n := st.Get("name"); n != nil {
					defined = n.Text([]byte(src))
				}
			}
		}
		for _, ed := range edits {
			got, digs, why := ReuseResult(res, res.Digests, map[string][]byte{p: []byte(ed[1])}, 0)
			if why != "" {
				refused++
				t.Logf("%s: %s: refused: %s", p, ed[0], why)
				continue
			}
			served++
			literalEditEqual(t, opts, p, ed[0], ed[1], got)
			// Another value for it, from the moved result.
			again := strings.Replace(strings.Replace(ed[1], "(1, 'two', -3.0)", "{'one': 1}", 1), "_cg_unread_b = 2", "_cg_unread_b = 3", 1)
			got2, _, why := ReuseResult(got, digs, map[string][]byte{p: []byte(again)}, 0)
			if why != "" {
				t.Errorf("%s: %s: another value refused: %s", p, ed[0], why)
				continue
			}
			literalEditEqual(t, opts, p, ed[0]+", another value", again, got2)
		}
		if defined != "" {
			if _, _, why := ReuseResult(res, res.Digests, map[string][]byte{p: []byte(body + "\n" + defined + " = 1\n")}, 0); why == "" {
				t.Errorf("%s: a literal bound to %s, which the file defines, was served", p, defined)
			}
		}
	}
	return served, refused
}

// literalEditEqual: the result got that ReuseResult served for the
// buffer edited (of path p) equals an analysis of it.
func literalEditEqual(t *testing.T, opts guard.Options, p, name, edited string, got *guard.Result) {
	t.Helper()
	o := opts
	o.Overlay = map[string][]byte{p: []byte(edited)}
	want, err := guard.Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) || !reflect.DeepEqual(got.Settings, want.Settings) || !reflect.DeepEqual(got.Warnings, want.Warnings) {
		t.Errorf("%s: %s: served, but differs from the analysis of the edit", p, name)
	}
}
