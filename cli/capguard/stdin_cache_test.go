package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdinRouteCache: `check --stdin-filename F -`, the editor's route,
// goes through the results cache: a buffer that is F on disk as the run
// of F (a second run is a hit); one with unsaved edits keyed by its own
// bytes (the same buffer is a hit, a comment moves the stored findings,
// a code edit parses only the buffer). Its findings are those of
// --no-cache every time, and a later run of F on disk reports F as it is
// on disk.
func TestStdinRouteCache(t *testing.T) {
	dir := copyProject(t, samplerProject(t, nil)) // a .git marks the project's root
	cacheDir := t.TempDir()
	run := func(stdin string, args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := capguardCmd(append([]string{"check", "--output-format", "json-lines"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Env, "CAPGUARD_TIMING=1", "CAPGUARD_CACHE_DIR="+cacheDir)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() > 1 {
			t.Fatalf("capguard check %v: %v\n%s", args, err, errb.String())
		}
		return out.String(), errb.String()
	}
	stdinRun := func(text string) (string, string) {
		return run(text, "--stdin-filename", "sampler.py", "-")
	}
	want0, _ := run(samplerSrc, "--no-cache", "--stdin-filename", "sampler.py", "-")
	want := want0
	if !strings.Contains(want, "CG101") {
		t.Fatalf("--no-cache: %s, want CG101 (the capture is in runner.py)", want)
	}
	for i, wantStatus := range []string{"cache miss", "cache hit"} {
		got, stderr := stdinRun(samplerSrc)
		if got != want {
			t.Errorf("run %d of the buffer as on disk:\n%s\nwant (--no-cache):\n%s", i+1, got, want)
		}
		if !strings.Contains(stderr, "capguard: "+wantStatus) {
			t.Errorf("run %d of the buffer as on disk: no %q in\n%s", i+1, wantStatus, stderr)
		}
	}

	// Unsaved edits, keyed by the buffer's bytes: the sampler's host read
	// removed in the buffer only (analysed with the runner's tree from the
	// pack), the same buffer again, a comment typed in it (the stored
	// findings moved: none), then the host read back at another line.
	edited := strings.Replace(samplerSrc, "    return top.tolist()\n", "    return top\n", 1)
	commented := strings.Replace(edited, "def sample", "# top-1\ndef sample", 1)
	back := strings.Replace(samplerSrc, "def sample", "# top-1\ndef sample", 1)
	for _, c := range []struct {
		what, text, status, finding string
	}{
		{"edited buffer", edited, "cache miss", ""},
		{"the same edited buffer", edited, "cache hit", ""},
		{"a comment in the edited buffer", commented, "cache reused", ""},
		{"the host read back, a line lower", back, "cache miss", "CG101"},
	} {
		want, _ := run(c.text, "--no-cache", "--stdin-filename", "sampler.py", "-")
		if strings.Contains(want, "CG101") != (c.finding != "") {
			t.Fatalf("--no-cache, %s: %q, want %q", c.what, want, c.finding)
		}
		got, stderr := stdinRun(c.text)
		if got != want {
			t.Errorf("%s:\n%s\nwant (--no-cache):\n%s", c.what, got, want)
		}
		if !strings.Contains(stderr, "capguard: "+c.status) {
			t.Errorf("%s: no %q in\n%s", c.what, c.status, stderr)
		}
		if c.status == "cache miss" && (strings.Contains(stderr, "syntax trees: 0 read") || !strings.Contains(stderr, "syntax trees: ")) {
			t.Errorf("%s: not analysed with the pack's trees:\n%s", c.what, stderr)
		}
	}
	// The file on disk was never written: a run of it reports it as it is
	// there (a buffer's stat is never trusted for the disk's bytes).
	if got, _ := run("", "sampler.py"); got != want0 {
		t.Errorf("check sampler.py after the unsaved runs:\n%s\nwant:\n%s", got, want0)
	}
	if got, _ := stdinRun(samplerSrc); got != want0 {
		t.Errorf("the buffer as on disk again:\n%s\nwant:\n%s", got, want0)
	}
}

// TestFixReadsTreePack: capguard fix's analyses read the syntax trees a
// cached check left in the pack (only what changed is parsed again), and
// print the diff --no-cache prints.
func TestFixReadsTreePack(t *testing.T) {
	_, run := readerProject(t)
	run("check", ".")
	want, stderr := run("fix", "--no-cache", "reader.py")
	if !strings.Contains(want, "persistent_buffer") || strings.Contains(stderr, "syntax trees:") {
		t.Fatalf("fix --no-cache: a diff without the fix, or a pack read:\n%s\n%s", want, stderr)
	}
	got, stderr := run("fix", "reader.py")
	if got != want {
		t.Errorf("fix:\n%s\nwant (--no-cache):\n%s", got, want)
	}
	if !strings.Contains(stderr, "syntax trees: ") || strings.Contains(stderr, "syntax trees: 0 read") {
		t.Errorf("fix read no tree from the pack:\n%s", stderr)
	}
}

// TestFixServedFromCache: capguard fix's first analysis, of the files as
// they are, is the results cache's: after a check of the project it is a
// hit, and after an inert edit (a comment line above the finding) the
// stored result moved; its later rounds analyse the fixed buffers. The
// diff is --no-cache's each time, so the served fixes are applied to the
// bytes they were made for. fix FILE takes the project run's result.
func TestFixServedFromCache(t *testing.T) {
	dir, run := readerProject(t)
	if _, stderr := run("check", "."); !strings.Contains(stderr, "capguard: cache miss") {
		t.Fatalf("check .: no cache miss in\n%s", stderr)
	}
	for _, c := range []struct{ what, status string }{
		{"after a check", "cache hit"},
		{"after a comment line inserted above the finding", "cache reused"},
	} {
		if c.status == "cache reused" {
			path := filepath.Join(dir, "reader.py")
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, append([]byte("# a note\n\n"), text...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, _ := run("fix", "--no-cache", ".")
		if !strings.Contains(want, "persistent_buffer") {
			t.Fatalf("fix --no-cache %s: a diff without the fix:\n%s", c.what, want)
		}
		got, stderr := run("fix", ".")
		if got != want {
			t.Errorf("fix %s:\n%s\nwant (--no-cache):\n%s", c.what, got, want)
		}
		if !strings.Contains(stderr, "capguard: "+c.status) {
			t.Errorf("fix %s: no %q in\n%s", c.what, c.status, stderr)
		}
		// The second round (the fixed buffer) analysed with the pack's trees.
		if !strings.Contains(stderr, "syntax trees: ") || strings.Contains(stderr, "syntax trees: 0 read") {
			t.Errorf("fix %s: the fixed buffer not analysed with the pack's trees:\n%s", c.what, stderr)
		}
	}
	// No entry was written for the fixed buffers: check . is a hit.
	if _, stderr := run("check", "."); !strings.Contains(stderr, "capguard: cache hit") {
		t.Errorf("check . after fix: no cache hit in\n%s", stderr)
	}
	// fix FILE takes the project run's stored result (check FILE does).
	want, _ := run("fix", "--no-cache", "reader.py")
	got, stderr := run("fix", "reader.py")
	if got != want || !strings.Contains(stderr, "capguard: cache hit") {
		t.Errorf("fix reader.py after check .: %s\n%s\nwant (--no-cache), a hit:\n%s", stderr, got, want)
	}
}

// readerProject is the sampler project with a reader that has a fix
// (testdata/readers/bf16_index_reader.py), in a folder of its own, and a
// function that runs capguard there with a cache of its own (cachedRun).
func readerProject(t *testing.T) (string, func(args ...string) (string, string)) {
	t.Helper()
	src, err := os.ReadFile("../../testdata/readers/bf16_index_reader.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := copyProject(t, samplerProject(t, map[string]string{"reader.py": string(src)}))
	cacheDir := t.TempDir()
	return dir, func(args ...string) (string, string) {
		t.Helper()
		return cachedRun(t, dir, cacheDir, nil, args...)
	}
}

// cachedRun runs capguard with args in wd, with its results cache in
// cacheDir and CAPGUARD_TIMING set (the cache's verdict is on stderr),
// standard input from stdin when it is not nil, and returns stdout and
// stderr; an exit status over 1 fails the test.
func cachedRun(t *testing.T, wd, cacheDir string, stdin *string, args ...string) (string, string) {
	t.Helper()
	cmd := capguardCmd(args...)
	cmd.Dir = wd
	cmd.Env = append(cmd.Env, "CAPGUARD_TIMING=1", "CAPGUARD_CACHE_DIR="+cacheDir)
	if stdin != nil {
		cmd.Stdin = strings.NewReader(*stdin)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() > 1 {
		t.Fatalf("capguard %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}
