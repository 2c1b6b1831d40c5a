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
	tree := os.Getenv("CAPGUARD_EDIT_TREE")
	if tree == "" {
		t.Skip("CAPGUARD_EDIT_TREE is not set")
	}
	limit := 6
	fmt.Sscan(os.Getenv("CAPGUARD_EDIT_KERNELS"), &limit)
	opts := guard.Options{Paths: []string{tree}, Config: &guard.Config{}, Digests: true}
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
