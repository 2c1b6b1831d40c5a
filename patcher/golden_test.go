package patcher

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard"
	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/fix/*.golden (and testdata/fix/flow/*.golden) from the current fixes")

// goldenModes are the two ways the fixer runs: safe fixes only (the
// default) and with --unsafe-fixes. The unsafe golden is kept only where it
// differs from the safe one.
var goldenModes = []struct {
	suffix string
	unsafe bool
}{{".golden", false}, {".unsafe.golden", true}}

// TestGolden fixes every fixture project and compares the diff with
// testdata/fix/<project><suffix>, the project named by its path under
// testdata (testdata/flow/replayprep: testdata/fix/flow/replayprep.golden). Then, for each fixed project: the fixed
// files compile with python3, the findings whose fixes were applied are
// gone, fixing again changes nothing, and patch -p1 and git apply turn the
// original tree into exactly the bytes Result.Write writes.
func TestGolden(t *testing.T) {
	t.Chdir("..")
	seen := map[string]bool{}
	for _, project := range testenv.FixtureProjects(t, "testdata") {
		var safeDiff string
		for _, mode := range goldenModes {
			rel, err := filepath.Rel("testdata", project)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.ToSlash(rel) + mode.suffix
			golden := filepath.Join("testdata", "fix", filepath.FromSlash(name))
			t.Run(name, func(t *testing.T) {
				res, err := Fix(Options{Paths: []string{project}, UnsafeFixes: mode.unsafe})
				if err != nil {
					t.Fatal(err)
				}
				diff := res.Diff()
				if !mode.unsafe {
					safeDiff = diff
				}
				keep := diff != "" && (!mode.unsafe || diff != safeDiff)
				if keep {
					seen[name] = true
				}
				if *update {
					if keep {
						os.MkdirAll(filepath.Dir(golden), 0o755)
						if err := os.WriteFile(golden, []byte(diff), 0o644); err != nil {
							t.Fatal(err)
						}
					} else {
						os.Remove(golden)
					}
				}
				want, err := os.ReadFile(golden)
				switch {
				case !keep && err == nil:
					t.Errorf("%s exists but the project has nothing (new) to fix; run go test ./patcher -run TestGolden -update", golden)
				case keep && err != nil:
					t.Errorf("no %s; run go test ./patcher -run TestGolden -update\n%s", golden, diff)
				case keep && string(want) != diff:
					t.Errorf("the diff differs from %s (go test ./patcher -run TestGolden -update rewrites it):\n%s",
						golden, UnifiedDiff(golden, want, []byte(diff)))
				}
				if diff == "" {
					return
				}
				checkFixed(t, project, res, mode.unsafe)
			})
		}
	}
	// A golden file whose project is gone is stale.
	files, _ := filepath.Glob(filepath.Join("testdata", "fix", "*.golden"))
	flow, _ := filepath.Glob(filepath.Join("testdata", "fix", testenv.FlowDir, "*.golden"))
	for _, f := range append(files, flow...) {
		rel, _ := filepath.Rel(filepath.Join("testdata", "fix"), f)
		name := filepath.ToSlash(rel)
		if !seen[name] && !*update {
			if _, err := os.Stat(filepath.Join("testdata", strings.TrimSuffix(strings.TrimSuffix(rel, ".golden"), ".unsafe"))); err != nil {
				t.Errorf("%s: no fixture project of that name", f)
			}
		}
	}
}

// checkFixed holds the properties every fix of a project must have.
func checkFixed(t *testing.T, project string, res *Result, unsafe bool) {
	t.Helper()
	overlay := map[string][]byte{}
	compiled := map[string][]byte{}
	applied := map[string]bool{}
	for _, f := range res.Changed() {
		overlay[f.Path] = f.Fixed
		compiled[f.Path] = f.Fixed
		for _, a := range f.Applied {
			applied[a.Code] = true
		}
		if !guard.ParseOK(f.Fixed) {
			t.Errorf("%s: the fixed file does not parse", f.Path)
		}
	}
	pyCompile(t, compiled)

	// Re-check: the rules whose fixes applied report nothing fixable.
	again, err := Fix(Options{Paths: []string{project}, Overlay: overlay, UnsafeFixes: unsafe})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range again.Remaining {
		if applied[r.Code] && r.Applicability != "" && (r.Applicability == "safe" || unsafe && r.Applicability == "unsafe") {
			t.Errorf("after fixing, %s:%d still has a fixable %s: %s", r.Path, r.Line, r.Code, r.Message)
		}
	}
	if d := again.Diff(); d != "" {
		t.Errorf("not idempotent: fixing the fixed project gives\n%s", d)
	}
	if !res.Converged {
		t.Error("did not converge")
	}

	// patch -p1 and git apply give exactly what Result.Write writes.
	root := t.TempDir()
	trees := map[string]string{}
	for _, tool := range []string{"write", "patch", "git"} {
		dir := filepath.Join(root, tool)
		copyTree(t, project, filepath.Join(dir, project))
		trees[tool] = dir
	}
	cwd, _ := os.Getwd()
	func() {
		os.Chdir(trees["write"])
		defer os.Chdir(cwd)
		r, err := Fix(Options{Paths: []string{project}, UnsafeFixes: unsafe})
		if err != nil {
			t.Fatal(err)
		}
		if r.Diff() != res.Diff() {
			t.Error("the copy of the project gives another diff")
		}
		if err := r.Write(); err != nil {
			t.Fatal(err)
		}
	}()
	apply := func(tool string, args ...string) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = trees[tool]
		cmd.Stdin = strings.NewReader(res.Diff())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if _, err := exec.LookPath("patch"); err == nil {
		apply("patch", "patch", "-p1", "--quiet", "--no-backup-if-mismatch")
		if a, b := readTree(t, trees["write"]), readTree(t, trees["patch"]); a != b {
			t.Errorf("patch -p1 gives other bytes than --write:\n%s", UnifiedDiff("tree", []byte(a), []byte(b)))
		}
	}
	apply("git", "git", "apply", "--whitespace=nowarn", "-")
	if a, b := readTree(t, trees["write"]), readTree(t, trees["git"]); a != b {
		t.Errorf("git apply gives other bytes than --write:\n%s", UnifiedDiff("tree", []byte(a), []byte(b)))
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readTree renders a folder's files as one string, to compare trees.
func readTree(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	files := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			data, _ := os.ReadFile(p)
			names = append(names, rel)
			files[rel] = data
		}
		return nil
	})
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "=== %s\n%s\n", n, files[n])
	}
	return b.String()
}

// TestGPUPatchedReaderCurrent keeps the patched reader that the GPU proof
// (bench/gpu_fix_proof.py) runs equal to what capguard fix makes of the
// original today. Regenerate it with
//
//	go run ./cli/capguard fix testdata/readers/bf16_index_reader.py | patch -p1 -o testdata/gpu/fix/bf16_index_reader_patched.py
func TestGPUPatchedReaderCurrent(t *testing.T) {
	t.Chdir("..")
	const orig, patched = "testdata/readers/bf16_index_reader.py", "testdata/gpu/fix/bf16_index_reader_patched.py"
	res, err := Fix(Options{Paths: []string{orig}})
	if err != nil {
		t.Fatal(err)
	}
	f := res.File(orig)
	if f == nil || !f.Changed() {
		t.Fatalf("capguard fix no longer changes %s", orig)
	}
	want, err := os.ReadFile(patched)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.Fixed, want) {
		t.Errorf("%s is stale:\n%s", patched, UnifiedDiff(patched, want, f.Fixed))
	}
}
