package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdinRouteCache: `check --stdin-filename F -`, the editor's route,
// goes through the results cache when the buffer is F on disk (a second
// run is a hit), and with unsaved edits reads the other files' syntax
// trees from the cache's pack and stores nothing: its findings are those
// of --no-cache every time, and a later run of F on disk reports F as it
// is on disk.
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
	want, _ := run(samplerSrc, "--no-cache", "--stdin-filename", "sampler.py", "-")
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

	// Unsaved edits: the sampler's host read removed in the buffer only.
	edited := strings.Replace(samplerSrc, "    return top.tolist()\n", "    return top\n", 1)
	want, _ = run(edited, "--no-cache", "--stdin-filename", "sampler.py", "-")
	if want != "" {
		t.Fatalf("--no-cache, edited buffer: %s, want no finding", want)
	}
	got, stderr := stdinRun(edited)
	if got != want {
		t.Errorf("edited buffer: %s, want (--no-cache) none", got)
	}
	if !strings.Contains(stderr, "cache bypassed") || strings.Contains(stderr, "syntax trees: 0 read") || !strings.Contains(stderr, "syntax trees: ") {
		t.Errorf("edited buffer: not analysed with the pack's trees:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "sampler.py")); err != nil {
		t.Fatal(err)
	}
	// The file on disk still has its host read, and the stored run is of
	// the disk's bytes.
	if got, stderr := stdinRun(samplerSrc); !strings.Contains(got, "CG101") || !strings.Contains(stderr, "capguard: cache hit") {
		t.Errorf("the buffer as on disk again: %s (want CG101, a hit)\n%s", got, stderr)
	}
	if got, _ := run("", "sampler.py"); !strings.Contains(got, "CG101") {
		t.Errorf("check sampler.py after the unsaved run: %s, want CG101", got)
	}
}
