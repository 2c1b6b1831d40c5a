package cache

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cudagraph-capguard/capguard/guard"
)

// project writes files under a new folder and returns it.
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		write(t, filepath.Join(dir, name), src)
	}
	return dir
}

func write(t *testing.T, p, src string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A capture in a.py calls b.helper; b.py holds no token that makes it
// relevant on its own: only the call chain does.
var chainProject = map[string]string{
	"pkg/__init__.py": "",
	"pkg/a.py":        "import torch\nfrom pkg.b import helper\n\ndef step(g, x):\n    with torch.cuda.graph(g):\n        helper(x)\n",
	"pkg/b.py":        "def helper(x):\n    return x + 1\n",
}

func run(t *testing.T, dir, cacheDir string, cfg *guard.Config) (*guard.Result, Status) {
	t.Helper()
	if cfg == nil {
		cfg = &guard.Config{}
	}
	res, st, err := Run(guard.Options{Paths: []string{filepath.Join(dir, "pkg")}, Config: cfg}, Options{Dir: cacheDir, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return res, st
}

func codes(res *guard.Result) string {
	var out []string
	for _, d := range res.Diagnostics {
		out = append(out, filepath.Base(d.Path)+":"+d.Rule.ID)
	}
	return strings.Join(out, " ")
}

func TestCacheHitAndInvalidation(t *testing.T) {
	dir := project(t, chainProject)
	cacheDir := filepath.Join(t.TempDir(), "cache")
	res, st := run(t, dir, cacheDir, nil)
	if st != Miss || codes(res) != "" {
		t.Fatalf("first run: %s, findings %q", st, codes(res))
	}
	res, st = run(t, dir, cacheDir, nil)
	if st != Hit || codes(res) != "" || res.Files != 3 {
		t.Fatalf("unchanged: %s, findings %q, files %d", st, codes(res), res.Files)
	}
	// Edit the file only the call chain makes relevant: a host sync in the
	// helper the capture calls. The cached result must not be used.
	write(t, filepath.Join(dir, "pkg/b.py"), "def helper(x):\n    return x.item()\n")
	res, st = run(t, dir, cacheDir, nil)
	if st != Miss || codes(res) != "b.py:CG101" {
		t.Fatalf("after editing b.py: %s, findings %q", st, codes(res))
	}
	cached, st := run(t, dir, cacheDir, nil)
	if st != Hit || codes(cached) != "b.py:CG101" {
		t.Fatalf("cached: %s, findings %q", st, codes(cached))
	}
	// The cached finding is the analysed one, chain, fix and all.
	a, b := res.Diagnostics[0], cached.Diagnostics[0]
	if a.Message != b.Message || a.Start != b.Start || a.End != b.End || strings.Join(a.Chain, ",") != strings.Join(b.Chain, ",") ||
		a.Context != b.Context || a.Severity != b.Severity || a.Rule != b.Rule {
		t.Errorf("cached finding %+v differs from %+v", b, a)
	}
	// A new file, then a removed one.
	write(t, filepath.Join(dir, "pkg/c.py"), "import torch\n\ndef g(x):\n    with torch.cuda.graph(x):\n        x.tolist()\n")
	if res, st = run(t, dir, cacheDir, nil); st != Miss || !strings.Contains(codes(res), "c.py:CG101") {
		t.Fatalf("new file: %s, %q", st, codes(res))
	}
	os.Remove(filepath.Join(dir, "pkg/c.py"))
	if res, st = run(t, dir, cacheDir, nil); st != Miss || strings.Contains(codes(res), "c.py") {
		t.Fatalf("removed file: %s, %q", st, codes(res))
	}
	// Another configuration: a miss, and its own entry.
	if _, st = run(t, dir, cacheDir, &guard.Config{Ignore: []string{"CG101"}}); st != Miss {
		t.Fatalf("other config: %s", st)
	}
	if _, st = run(t, dir, cacheDir, nil); st != Hit {
		t.Fatalf("first config again: %s", st)
	}
}

// Module names come from __init__.py files outside the checked folder too:
// adding one above it renames every module, and is a miss.
func TestCachePackageAbove(t *testing.T) {
	dir := project(t, chainProject)
	cacheDir := t.TempDir()
	run(t, dir, cacheDir, nil)
	write(t, filepath.Join(dir, "__init__.py"), "")
	if _, st := run(t, dir, cacheDir, nil); st != Miss {
		t.Fatalf("after an __init__.py above: %s", st)
	}
}

// An edit that keeps the size and the modification time (set back) is
// still seen: the change time moves.
func TestCacheSameSizeSameMtime(t *testing.T) {
	noRacyWindow(t)
	dir := project(t, chainWith("def helper(x):\n    return x.abs()\n"))
	cacheDir := t.TempDir()
	b := filepath.Join(dir, "pkg/b.py")
	past := time.Now().Add(-time.Hour)
	os.Chtimes(b, past, past)
	time.Sleep(20 * time.Millisecond)
	run(t, dir, cacheDir, nil)
	time.Sleep(20 * time.Millisecond)
	write(t, b, "def helper(x):\n    return x.cpu()\n") // the same size, in place (the same inode)
	os.Chtimes(b, past, past)
	res, st := run(t, dir, cacheDir, nil)
	if st != Miss || codes(res) != "b.py:CG101" {
		t.Fatalf("%s, %q", st, codes(res))
	}
}

// A re-run on an unchanged tree reads no file once the stats are settled:
// it stats them and reuses their hashes.
func TestCacheReadsNothingWhenUnchanged(t *testing.T) {
	old := racyWindow
	racyWindow = 0
	defer func() { racyWindow = old }()
	dir := project(t, chainProject)
	cacheDir := t.TempDir()
	time.Sleep(20 * time.Millisecond)
	run(t, dir, cacheDir, nil)
	files, _ := guard.Discover([]string{filepath.Join(dir, "pkg")}, &guard.Config{})
	opts := guard.Options{Paths: []string{filepath.Join(dir, "pkg")}, Config: &guard.Config{}}
	id, _ := runID(opts, Options{Dir: cacheDir, Version: "test"})
	e, _ := readEntry(filepath.Join(cacheDir, formatVersion, id+".json"))
	if e == nil {
		t.Fatal("no entry written")
	}
	_, _, read, ok := hashFiles(files, e, nil)
	if !ok || read != 0 {
		t.Errorf("read %d files of an unchanged tree (ok %v), want 0", read, ok)
	}
	write(t, filepath.Join(dir, "pkg/b.py"), "def helper(x):\n    return x - 1\n")
	if _, _, read, _ = hashFiles(files, e, nil); read != 1 {
		t.Errorf("read %d files after one edit, want 1", read)
	}
}

func TestCacheBypass(t *testing.T) {
	dir := project(t, chainProject)
	cacheDir := t.TempDir()
	// Standard input (an overlay) is never cached.
	_, st, err := Run(guard.Options{Paths: []string{"x.py"}, Overlay: map[string][]byte{"x.py": []byte("x = 1\n")}, Config: &guard.Config{}},
		Options{Dir: cacheDir})
	if err != nil || st != Bypassed {
		t.Errorf("overlay: %s %v", st, err)
	}
	// A missing path: guard reports it, nothing is cached.
	res, st, _ := Run(guard.Options{Paths: []string{filepath.Join(dir, "nope")}, Config: &guard.Config{}}, Options{Dir: cacheDir})
	if st != Bypassed || len(res.Errors) != 1 {
		t.Errorf("missing path: %s %v", st, res.Errors)
	}
	// The cache folder holds a .gitignore and a CACHEDIR.TAG once written.
	run(t, dir, cacheDir, nil)
	for _, name := range []string{".gitignore", "CACHEDIR.TAG"} {
		if _, err := os.Stat(filepath.Join(cacheDir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// An unwritable cache folder: the result, and Failed.
	ro := filepath.Join(t.TempDir(), "ro")
	os.WriteFile(ro, nil, 0o644) // a file where the folder should be
	res, st, err = Run(guard.Options{Paths: []string{filepath.Join(dir, "pkg")}, Config: &guard.Config{}}, Options{Dir: ro})
	if st != Failed || err == nil || res == nil {
		t.Errorf("unwritable: %s %v", st, err)
	}
}

func TestDefaultDir(t *testing.T) {
	if DefaultDir(nil) != DirName || DefaultDir(&guard.Config{}) != DirName {
		t.Error("no config: not in the working directory")
	}
	if got := DefaultDir(&guard.Config{Path: "/p/pyproject.toml"}); got != "/p/.capguard_cache" {
		t.Errorf("beside the config: %s", got)
	}
	if got := DefaultDir(&guard.Config{Path: "/p/pyproject.toml", CacheDir: "build/cg"}); got != "/p/build/cg" {
		t.Errorf("cache-dir: %s", got)
	}
}

// The stored walk stands while no folder it listed changed; a new file in
// a folder that had none, a .gitignore edited in place and a folder that
// becomes a virtual environment each make a new walk.
func TestCacheWalk(t *testing.T) {
	old := racyWindow
	racyWindow = 0
	defer func() { racyWindow = old }()
	files := map[string]string{}
	for k, v := range chainProject {
		files[k] = v
	}
	files["pkg/sub/notes.txt"] = "no Python here yet\n"
	files["pkg/env/lib.py"] = "import torch\n\ndef g(x):\n    with torch.cuda.graph(x):\n        x.tolist()\n"
	files["pkg/.gitignore"] = "# nothing ignored\n"
	dir := project(t, files)
	cacheDir := t.TempDir()
	settle()
	if res, st := run(t, dir, cacheDir, nil); st != Miss || codes(res) != "lib.py:CG101" {
		t.Fatalf("first: %s %q", st, codes(res))
	}
	opts := guard.Options{Paths: []string{filepath.Join(dir, "pkg")}, Config: &guard.Config{}}
	id, _ := runID(opts, Options{Dir: cacheDir, Version: "test"})
	entryPath := filepath.Join(cacheDir, formatVersion, id+".json")
	if e, _ := readEntry(entryPath); e == nil || !unchanged(e.Walked, e.Written) || len(e.Walked) < 4 {
		t.Fatalf("the walk is not reusable: %+v", e)
	}
	if _, st := run(t, dir, cacheDir, nil); st != Hit {
		t.Fatalf("unchanged: %s", st)
	}
	settle()
	write(t, filepath.Join(dir, "pkg/sub/new.py"), "import torch\n\ndef h(g, x):\n    with torch.cuda.graph(g):\n        x.cpu()\n")
	if res, st := run(t, dir, cacheDir, nil); st != Miss || codes(res) != "lib.py:CG101 new.py:CG101" {
		t.Fatalf("a new file in a folder without one: %s %q", st, codes(res))
	}
	settle()
	write(t, filepath.Join(dir, "pkg/.gitignore"), "sub/\n") // in place: the folder's stat does not move
	if res, st := run(t, dir, cacheDir, nil); st != Miss || codes(res) != "lib.py:CG101" {
		t.Fatalf("an edited .gitignore: %s %q", st, codes(res))
	}
	settle()
	write(t, filepath.Join(dir, "pkg/env/pyvenv.cfg"), "home = /usr\n")
	if res, st := run(t, dir, cacheDir, nil); st != Miss || codes(res) != "" {
		t.Fatalf("a folder that became a virtual environment: %s %q", st, codes(res))
	}
	settle()
	os.Remove(filepath.Join(dir, "pkg/env/pyvenv.cfg"))
	if res, st := run(t, dir, cacheDir, nil); st != Miss || codes(res) != "lib.py:CG101" {
		t.Fatalf("a virtual environment no more: %s %q", st, codes(res))
	}
}

// TestTreesAfterEdit: a run after a code edit (a miss) reads the syntax
// trees of the files whose bytes did not change from the entry's pack and
// parses the others, and its result equals an analysis without any cache:
// an edit that adds a call edge, one that moves the capture root, the
// same bytes written again (a hit), and a corrupted pack (all parsed
// again).
func TestTreesAfterEdit(t *testing.T) {
	files := map[string]string{
		"pkg/__init__.py": "",
		"pkg/a.py":        "import torch\nfrom pkg.b import helper\n\ndef step(g, x):\n    with torch.cuda.graph(g):\n        helper(x)\n",
		"pkg/b.py":        "import torch\n\ndef helper(x):\n    return x + 1\n\ndef other(x):\n    torch.cuda.synchronize()\n    return x.item()\n",
		"pkg/c.py":        "import torch\n\ndef scale(x):\n    torch.cuda.synchronize()\n    return x * 2\n",
	}
	dir := project(t, files)
	cacheDir := filepath.Join(t.TempDir(), "cache")
	uncached := func() string {
		res, err := guard.Run(guard.Options{Paths: []string{filepath.Join(dir, "pkg")}, Config: &guard.Config{}})
		if err != nil {
			t.Fatal(err)
		}
		return codes(res)
	}
	if res, st := run(t, dir, cacheDir, nil); st != Miss || res.TreesRead != 0 || res.Parsed != 4 {
		t.Fatalf("first run: %s, %d trees read, %d parsed", st, res.TreesRead, res.Parsed)
	}
	packs, _ := filepath.Glob(filepath.Join(cacheDir, "*", "trees-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("tree packs %v, want one", packs)
	}
	for _, step := range []struct {
		name, file, src string
		st              Status
		read            int
		finds           string // a finding the edit brings
	}{
		{"a new call edge", "pkg/b.py", "import torch\n\ndef helper(x):\n    return other(x)\n\ndef other(x):\n    torch.cuda.synchronize()\n    return x.item()\n", Miss, 3, "b.py:CG1"},
		{"the capture moved", "pkg/a.py", "import torch\nfrom pkg.c import scale\n\ndef step(g, x):\n    with torch.cuda.graph(g):\n        scale(x)\n", Miss, 3, "c.py:CG1"},
		{"the same bytes", "pkg/c.py", files["pkg/c.py"], Hit, 0, "c.py:CG1"},
	} {
		time.Sleep(10 * time.Millisecond) // another modification time
		write(t, filepath.Join(dir, step.file), step.src)
		res, st := run(t, dir, cacheDir, nil)
		if st != step.st || res.TreesRead != step.read {
			t.Errorf("%s: %s with %d trees read, want %s with %d", step.name, st, res.TreesRead, step.st, step.read)
		}
		if !strings.Contains(codes(res), step.finds) {
			t.Errorf("%s: findings %q, want one %s", step.name, codes(res), step.finds)
		}
		if want := uncached(); codes(res) != want {
			t.Errorf("%s: %q, without the cache %q", step.name, codes(res), want)
		}
	}
	// A corrupted pack: every file is parsed again, the result the same.
	data, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) / 2; i < len(data); i += 7 {
		data[i] ^= 0x5a
	}
	os.WriteFile(packs[0], data, 0o644)
	write(t, filepath.Join(dir, "pkg/c.py"), files["pkg/c.py"]+"\ny = 1\n")
	res, st := run(t, dir, cacheDir, nil)
	if st != Miss || res.TreesRead > 2 || codes(res) != uncached() {
		t.Errorf("corrupted pack: %s, %d read, %q (without the cache %q)", st, res.TreesRead, codes(res), uncached())
	}
}

// TestTreesKeepSyntaxErrors: a file whose tree comes from the pack gets the
// same syntax error as when it was parsed: tree-sitter's, and the Python 2
// check, which reads the file's own bytes.
func TestTreesKeepSyntaxErrors(t *testing.T) {
	dir := project(t, map[string]string{
		"pkg/__init__.py": "",
		"pkg/a.py":        "import torch\n\ndef f(x):\n    torch.cuda.synchronize()\n    print x\n",
		"pkg/b.py":        "import torch\n\ndef g(x:\n    torch.cuda.synchronize()\n",
		"pkg/c.py":        "import torch\n\ndef h(x):\n    torch.cuda.synchronize()\n    return x\n",
	})
	cacheDir := filepath.Join(t.TempDir(), "cache")
	errs := func(res *guard.Result) string {
		var out []string
		for _, e := range res.Errors {
			out = append(out, filepath.Base(e.Path)+": "+e.Message)
		}
		return strings.Join(out, "; ")
	}
	first, _ := run(t, dir, cacheDir, nil)
	if !strings.Contains(errs(first), "a.py: ") || !strings.Contains(errs(first), "Python 2") || !strings.Contains(errs(first), "b.py: ") {
		t.Fatalf("first run's errors: %s", errs(first))
	}
	time.Sleep(10 * time.Millisecond)
	write(t, filepath.Join(dir, "pkg/c.py"), "import torch\n\ndef h(x):\n    torch.cuda.synchronize()\n    return x + 1\n")
	again, st := run(t, dir, cacheDir, nil)
	if st != Miss || again.TreesRead == 0 {
		t.Fatalf("after the edit: %s, %d trees read", st, again.TreesRead)
	}
	if errs(again) != errs(first) {
		t.Errorf("errors with trees from the pack:\n%s\nparsed:\n%s", errs(again), errs(first))
	}
}

// TestTreesSharedByRuns: the pack is one for every run of a binary in a
// cache folder, so a run of other paths (one file: another entry) reads
// the trees a run of the folder left, and adds no pack of its own.
func TestTreesSharedByRuns(t *testing.T) {
	dir := project(t, map[string]string{
		"pkg/__init__.py": "",
		"pkg/a.py":        "import torch\nfrom pkg.b import helper\n\ndef step(g, x):\n    with torch.cuda.graph(g):\n        helper(x)\n",
		"pkg/b.py":        "import torch\n\ndef helper(x):\n    torch.cuda.synchronize()\n    return x.item()\n",
	})
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if res, st := run(t, dir, cacheDir, nil); st != Miss || res.TreesRead != 0 {
		t.Fatalf("folder run: %s, %d trees read", st, res.TreesRead)
	}
	res, st, err := Run(guard.Options{Paths: []string{filepath.Join(dir, "pkg", "b.py")}, Config: &guard.Config{}}, Options{Dir: cacheDir, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if st != Miss || res.Parsed == 0 || res.TreesRead != res.Parsed {
		t.Errorf("file run: %s, %d parsed, %d trees read, want every one read", st, res.Parsed, res.TreesRead)
	}
	if packs, _ := filepath.Glob(filepath.Join(cacheDir, "*", "trees-*.pack")); len(packs) != 1 {
		t.Errorf("tree packs %v, want one", packs)
	}
}

// A run with a buffer (an editor's unsaved file, through standard input)
// is keyed by the buffer's bytes: it is stored, served again for the same
// buffer (with the buffer as its source), moved for a comment typed in it,
// and never served for the file's bytes on disk, whose stat it does not
// record (racyWindow 0: a recorded stat would be trusted at once).
func TestOverlayRun(t *testing.T) {
	noRacyWindow(t)
	dir := project(t, chainWith("def helper(x):\n    return x.item()\n"))
	cacheDir := t.TempDir()
	b := filepath.Join(dir, "pkg/b.py")
	runWith := func(overlay map[string][]byte) (*guard.Result, Status) {
		t.Helper()
		opts := guard.Options{Paths: []string{b, filepath.Join(dir, "pkg")}, Overlay: overlay, Config: &guard.Config{}}
		res, st, err := Run(opts, Options{Dir: cacheDir, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		want, err := guard.Run(guard.Options{Paths: opts.Paths, Overlay: overlay, Config: &guard.Config{}})
		if err != nil {
			t.Fatal(err)
		}
		if got, w := findingLines(res), findingLines(want); got != w {
			t.Errorf("%s run: %s, want (uncached) %s", st, got, w)
		}
		return res, st
	}
	if res, st := runWith(nil); st != Miss || codes(res) != "b.py:CG101" {
		t.Fatalf("the disk's bytes: %s %s", st, codes(res))
	}
	edited := []byte("def helper(x):\n    return x + 1\n")
	buf := map[string][]byte{b: edited}
	if res, st := runWith(buf); st != Miss || codes(res) != "" {
		t.Fatalf("a buffer without the host read: %s %s", st, codes(res))
	}
	if res, st := runWith(buf); st != Hit || string(res.Source(b)) != string(edited) {
		t.Fatalf("the same buffer: %s, source %q", st, res.Source(b))
	}
	if _, st := runWith(nil); st == Hit {
		t.Fatal("the disk's bytes were served the buffer's run")
	}
	runWith(buf)
	commented := map[string][]byte{b: []byte("# helper\ndef helper(x):\n    return x + 1\n")}
	if _, st := runWith(commented); st != Reused {
		t.Errorf("a comment typed in the buffer: %s, want reused", st)
	}
	withRead := map[string][]byte{b: []byte("# helper\ndef helper(x):\n    return x.item()\n")}
	if res, st := runWith(withRead); st != Miss || codes(res) != "b.py:CG101" {
		t.Errorf("the host read back in the buffer: %s %s", st, codes(res))
	}
}

// findingLines is a result's findings as path:line:rule, one string.
func findingLines(res *guard.Result) string {
	var out []string
	for _, d := range res.Diagnostics {
		out = append(out, fmt.Sprintf("%s:%d:%s", filepath.Base(d.Path), d.Start.Line, d.Rule.ID))
	}
	return strings.Join(out, " ")
}

// The pack's folder is made with its markers: a pack written before any
// entry (capguard fix, a buffer of a new file) left a cache folder that
// git status showed.
func TestTreeFileMarksFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".capguard_cache")
	TreeFile(Options{Dir: dir, Version: "test"})
	for _, name := range []string{".gitignore", "CACHEDIR.TAG"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// noRacyWindow sets racyWindow to 0 for the test: a file's recorded stat
// is trusted at once.
func noRacyWindow(t *testing.T) {
	old := racyWindow
	racyWindow = 0
	t.Cleanup(func() { racyWindow = old })
}

// chainWith is chainProject with b.py's text replaced.
func chainWith(b string) map[string]string {
	files := maps.Clone(chainProject)
	files["pkg/b.py"] = b
	return files
}

// TestFixSources: a served result carries the text of each file a fix
// edits (or, FindingSources, each file with a finding) only while the file's bytes hash to what it was served for:
// decoded from its PEP 263 coding (guard.Run's Source is the decoded
// text), a buffer's from the buffer; a file changed since, or one the run
// did not hash, is refused.
func TestFixSources(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.py")
	raw := []byte("# -*- coding: latin-1 -*-\nx = '\xe9'\n")
	write(t, p, string(raw))
	sum, err := hashFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fixed := func() *guard.Result {
		return &guard.Result{Diagnostics: []*guard.Diagnostic{{Path: p, Fix: &guard.Fix{}}, {Path: "b.py"}}}
	}
	res := fixed()
	if !fixSources(res, []string{p}, []string{sum}, nil, FixSources) {
		t.Fatal("refused a file whose bytes are those hashed")
	}
	if got, want := string(res.Source(p)), "# -*- coding: latin-1 -*-\nx = '\u00e9'\n"; got != want {
		t.Errorf("Source = %q, want the decoded %q", got, want)
	}
	if res.Source("b.py") != nil {
		t.Error("a file no fix edits got its text")
	}
	if fixSources(fixed(), []string{p}, []string{strings.Repeat("0", 64)}, nil, FixSources) {
		t.Error("served a file whose bytes changed since they were hashed")
	}
	if fixSources(fixed(), []string{filepath.Join(dir, "other.py")}, []string{sum}, nil, FixSources) {
		t.Error("served a file the run did not hash")
	}
	res = fixed()
	if !fixSources(res, nil, nil, map[string][]byte{p: []byte("y = 1\n")}, FixSources) || string(res.Source(p)) != "y = 1\n" {
		t.Errorf("a buffer: Source = %q, want the buffer's", res.Source(p))
	}
	// FindingSources: every file with a finding, a fix or none.
	res = &guard.Result{Diagnostics: []*guard.Diagnostic{{Path: p}}}
	if !fixSources(res, []string{p}, []string{sum}, nil, FindingSources) || !strings.Contains(string(res.Source(p)), "\u00e9") {
		t.Errorf("a finding without a fix: Source = %q, want the decoded text", res.Source(p))
	}
	if fixSources(&guard.Result{Diagnostics: []*guard.Diagnostic{{Path: p}}}, []string{p}, []string{strings.Repeat("0", 64)}, nil, FindingSources) {
		t.Error("FindingSources served a file whose bytes changed since they were hashed")
	}
	res = fixed()
	if fixSources(res, []string{p}, []string{sum}, nil, FindingSources) {
		t.Error("FindingSources served b.py, which the run did not hash")
	}
}

// TestCovers: Run asks Covers with the walk's files before it serves or
// analyses anything; a no returns NotCovered and leaves the cache as it
// was (no entry, no pack), a yes runs as without it. A run that would be
// bypassed (no configuration) is NotCovered too: the caller runs its own.
func TestCovers(t *testing.T) {
	dir, cacheDir := project(t, chainProject), t.TempDir()
	opts := guard.Options{Paths: []string{filepath.Join(dir, "pkg")}, Config: &guard.Config{}}
	var seen []string
	no := Options{Dir: cacheDir, Version: "test", Covers: func(fs []string) bool { seen = fs; return false }}
	if res, st, err := Run(opts, no); res != nil || st != NotCovered || err != nil {
		t.Fatalf("Covers no: %v %v %v", res, st, err)
	}
	if len(seen) != 3 || filepath.Base(seen[1]) != "a.py" {
		t.Errorf("Covers was asked with %v, want the walk's 3 files", seen)
	}
	if entries, _ := filepath.Glob(filepath.Join(cacheDir, formatVersion, "*")); len(entries) > 0 {
		t.Errorf("a run not covered wrote %v", entries)
	}
	yes := no
	yes.Covers = func([]string) bool { return true }
	if res, st, err := Run(opts, yes); err != nil || st != Miss || res == nil {
		t.Fatalf("Covers yes: %v %v", st, err)
	}
	if _, st, _ := Run(opts, yes); st != Hit {
		t.Errorf("Covers yes again: %v, want a hit", st)
	}
	bare := opts
	bare.Config = nil
	if res, st, _ := Run(bare, no); res != nil || st != NotCovered {
		t.Errorf("a run to bypass with Covers: %v %v, want NotCovered", res, st)
	}
}
