package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestServerWatchedFiles: a client that registers file watchers is asked
// to watch the files an analysis reads; a change on disk to a file that is
// not open (the module whose capture makes the open sampler's finding)
// publishes the sampler's diagnostics again, and an inert edit to the
// sampler right after a change on disk is not served by moving the result
// from before the change. A client without dynamic registration is asked
// nothing.
func TestServerWatchedFiles(t *testing.T) {
	dir := samplerProject(t, nil)
	runner := filepath.Join(dir, "runner.py")
	captured, err := os.ReadFile(runner)
	if err != nil {
		t.Fatal(err)
	}
	// The runner still captures, but calls the sampler after the capture.
	eager := strings.Replace(string(captured), "        return sample(logits)\n", "        out = logits * 2\n    return sample(out)\n", 1)
	if eager == string(captured) {
		t.Fatal("samplerProject's runner changed: no capture to remove")
	}
	runnerURI := pathURI(runner)

	// The debounce outlasts the test's two notifications of the last step,
	// so one analysis sees both.
	c := startLSPWith(t, dir, nil, io.Discard, "--debounce", "400ms")
	caps := map[string]any{"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}
	uri := c.open(dir, "sampler.py", samplerSrc, caps)

	// next answers the registration request and returns the sampler's next
	// diagnostics' codes.
	registered := false
	next := func(step string) string {
		t.Helper()
		codes := ""
		c.until(step, func(m map[string]any) bool {
			switch m["method"] {
			case "client/registerCapability":
				regs := m["params"].(map[string]any)["registrations"].([]any)
				reg := regs[0].(map[string]any)
				var globs []string
				for _, w := range reg["registerOptions"].(map[string]any)["watchers"].([]any) {
					globs = append(globs, w.(map[string]any)["globPattern"].(string))
				}
				if reg["method"] != "workspace/didChangeWatchedFiles" || !slices.Contains(globs, "**/*.py") || !slices.Contains(globs, "**/capguard.toml") {
					t.Errorf("registration %v", reg)
				}
				registered = true
				c.send(map[string]any{"id": m["id"], "result": nil})
			case "textDocument/publishDiagnostics":
				if p := m["params"].(map[string]any); p["uri"] == uri {
					codes = strings.Join(lspCodes(p["diagnostics"].([]any)), ",")
					return true
				}
			}
			return false
		})
		return codes
	}
	changed := func() {
		c.notify("workspace/didChangeWatchedFiles", map[string]any{"changes": []any{map[string]any{"uri": string(runnerURI), "type": 2}}})
	}

	if got := next("open"); got != "CG101" {
		t.Fatalf("on open: %s, want CG101", got)
	}
	if !registered {
		t.Error("no file watchers were registered before the first diagnostics")
	}
	if err := os.WriteFile(runner, []byte(eager), 0o644); err != nil {
		t.Fatal(err)
	}
	changed()
	if got := next("the capture removed on disk"); got != "" {
		t.Fatalf("after the capture was removed on disk: %s, want none", got)
	}
	// The capture back on disk, then a comment typed in the sampler: the
	// analysis reads the runner again, not the last result moved.
	if err := os.WriteFile(runner, captured, 0o644); err != nil {
		t.Fatal(err)
	}
	changed()
	c.replace(uri, 2, "# top-1\n"+samplerSrc)
	if got := next("the capture back on disk and a comment"); got != "CG101" {
		t.Fatalf("after the capture came back on disk and a comment edit: %s, want CG101", got)
	}
	c.call("shutdown", nil)
	c.notify("exit", nil)

	// A client without dynamic registration: no request, before or after
	// its diagnostics.
	c2 := startLSPWith(t, dir, nil, io.Discard)
	uri2 := c2.open(dir, "sampler.py", samplerSrc, nil)
	c2.until("the second server's diagnostics", func(m map[string]any) bool {
		if m["method"] == "client/registerCapability" {
			t.Errorf("a registration sent to a client without dynamic registration: %v", m)
		}
		return m["method"] == "textDocument/publishDiagnostics" && m["params"].(map[string]any)["uri"] == uri2
	})
	c2.call("shutdown", nil)
	for len(c2.msgs) > 0 {
		if m := <-c2.msgs; m["method"] == "client/registerCapability" {
			t.Errorf("a registration sent to a client without dynamic registration: %v", m)
		}
	}
	c2.notify("exit", nil)
}
