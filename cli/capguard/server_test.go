package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lspClient speaks JSON-RPC 2.0 with LSP's Content-Length framing to a
// `capguard server` process over its stdin and stdout, as an editor does.
type lspClient struct {
	t      *testing.T
	in     io.WriteCloser
	mu     sync.Mutex
	nextID int
	msgs   chan map[string]any
}

func startLSP(t *testing.T, dir string) *lspClient {
	t.Helper()
	return startLSPWith(t, dir, nil, os.Stderr)
}

// startLSPWith starts the server with more environment variables and its
// standard error written to stderr.
func startLSPWith(t *testing.T, dir string, env []string, stderr io.Writer, flags ...string) *lspClient {
	t.Helper()
	cmd := capguardCmd(append([]string{"server", "--debounce", "20ms"}, flags...)...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &lspClient{t: t, in: in, msgs: make(chan map[string]any, 100)}
	go c.read(bufio.NewReader(out))
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("capguard server did not exit after stdin closed")
		}
	})
	return c
}

func (c *lspClient) read(r *bufio.Reader) {
	defer close(c.msgs)
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		if n < 0 {
			c.t.Errorf("a message without Content-Length")
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			c.t.Errorf("not JSON: %q", body)
			return
		}
		c.msgs <- m
	}
}

func (c *lspClient) send(m map[string]any) {
	m["jsonrpc"] = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func (c *lspClient) notify(method string, params any) {
	c.send(map[string]any{"method": method, "params": params})
}

// replace sends a change that gives the buffer uri the text as version.
func (c *lspClient) replace(uri string, version int, text string) {
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []any{map[string]any{"text": text}}})
}

// call sends a request and returns its result, keeping the notifications
// (and the server's own requests) that arrive meanwhile for wait.
func (c *lspClient) call(method string, params any) any {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	c.send(map[string]any{"id": id, "method": method, "params": params})
	var kept []map[string]any
	defer func() {
		for _, m := range kept {
			c.msgs <- m
		}
	}()
	var result any
	c.until(method, func(m map[string]any) bool {
		// A response has no method: a request of the server's may carry
		// the same id.
		if got, ok := m["id"].(float64); ok && int(got) == id && m["method"] == nil {
			if e, ok := m["error"]; ok {
				c.t.Fatalf("%s: error %v", method, e)
			}
			result = m["result"]
			return true
		}
		kept = append(kept, m)
		return false
	})
	return result
}

// diagnostics waits for the next publishDiagnostics of uri and returns its
// diagnostics.
func (c *lspClient) diagnostics(uri string) []any {
	var ds []any
	c.until("diagnostics for "+uri, func(m map[string]any) bool {
		if m["method"] != "textDocument/publishDiagnostics" {
			return false
		}
		p := m["params"].(map[string]any)
		if p["uri"] != uri {
			return false
		}
		ds = p["diagnostics"].([]any)
		return true
	})
	return ds
}

// until reads the server's messages, giving each to fn, until fn says
// done; step names the wait in a failure.
func (c *lspClient) until(step string, fn func(m map[string]any) (done bool)) {
	c.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatalf("%s: the server closed its output", step)
			}
			if fn(m) {
				return
			}
		case <-deadline:
			c.t.Fatalf("%s: not done in 60 s", step)
		}
	}
}

func lspCodes(ds []any) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprint(d.(map[string]any)["code"]))
	}
	return out
}

// TestServerProjectContext starts `capguard server` on a project whose
// sampler is captured only through another module's capture, opens the
// sampler alone, and checks the published diagnostics, an edit that
// removes the hazard, hover and code actions.
func TestServerProjectContext(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("runner.py", `import torch

from sampler import sample


class Runner:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        self.logits = torch.zeros(8, 16, device="cuda")

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = sample(self.logits)
`)
	sampler := `import torch


def sample(logits):
    top = logits.argmax(-1)
    n = top.max().item()
    return top[:n]
`
	write("sampler.py", sampler)
	rootURI := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	uri := rootURI + "/sampler.py"

	c := startLSP(t, t.TempDir()) // started elsewhere: the root comes from initialize
	res := c.call("initialize", map[string]any{"processId": nil, "rootUri": rootURI, "capabilities": map[string]any{}})
	caps := res.(map[string]any)["capabilities"].(map[string]any)
	if caps["hoverProvider"] != true || caps["codeActionProvider"] == nil {
		t.Fatalf("capabilities: %v", caps)
	}
	c.notify("initialized", map[string]any{})
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "python", "version": 1, "text": sampler}})
	ds := c.diagnostics(uri)
	if got := strings.Join(lspCodes(ds), ","); got != "CG101,CG102" {
		t.Fatalf("diagnostics on open: %s, want CG101,CG102 (the capture is in runner.py)", got)
	}
	d0 := ds[0].(map[string]any)
	if r := d0["range"].(map[string]any)["start"].(map[string]any); r["line"] != float64(5) || r["character"] != float64(8) {
		t.Errorf("CG101 starts at %v, want line 5 character 8 (0-based)", r)
	}

	hover := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 5, "character": 10}})
	hv := fmt.Sprint(hover)
	if !strings.Contains(hv, "runner.Runner.capture") || !strings.Contains(hv, "sampler.sample") {
		t.Errorf("hover does not show the chain: %s", hv)
	}
	hover = c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 4, "character": 4}})
	if hv := fmt.Sprint(hover); !strings.Contains(hv, "captured") || !strings.Contains(hv, "runner.Runner.capture") {
		t.Errorf("hover on a line without a finding does not say the function is captured: %s", hv)
	}

	// An unsaved edit that removes the host read: the diagnostics clear.
	fixed := strings.Replace(sampler, "    n = top.max().item()\n    return top[:n]\n", "    return top\n", 1)
	c.replace(uri, 2, fixed)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("after the edit: %v, want none", lspCodes(ds))
	}
	// An incremental edit puts a hazard back (range-based change).
	c.notify("textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": uri, "version": 3},
		"contentChanges": []any{map[string]any{
			"range": map[string]any{"start": map[string]any{"line": 5, "character": 4}, "end": map[string]any{"line": 5, "character": 14}},
			"text":  "return top.tolist()"}}})
	if got := strings.Join(lspCodes(c.diagnostics(uri)), ","); got != "CG101" {
		t.Fatalf("after the incremental edit: %s, want CG101", got)
	}
	// A comment line and a blank line above it (the last result, moved):
	// the finding moves two lines down.
	current := strings.Replace(fixed, "    return top\n", "    return top.tolist()\n", 1)
	c.replace(uri, 4, strings.Replace(current, "def sample", "# top-1 sampling\n\ndef sample", 1))
	ds = c.diagnostics(uri)
	if got := strings.Join(lspCodes(ds), ","); got != "CG101" {
		t.Fatalf("after a comment line: %s, want CG101", got)
	}
	if r := ds[0].(map[string]any)["range"].(map[string]any)["start"].(map[string]any); r["line"] != float64(7) || r["character"] != float64(11) {
		t.Errorf("after a comment line, CG101 starts at %v, want line 7 character 11 (0-based)", r)
	}
	actions := c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9, "character": 0}},
		"context": map[string]any{"diagnostics": []any{}}})
	if actions != nil {
		if as, ok := actions.([]any); !ok || len(as) != 0 {
			t.Errorf("code actions for a finding without a fix: %v", actions)
		}
	}
	c.call("shutdown", nil)
	c.notify("exit", nil)
}

// TestServerCodeAction: a finding with a fix is offered as a quick fix
// whose edit, applied, removes the finding.
func TestServerCodeAction(t *testing.T) {
	src, err := os.ReadFile("../../testdata/readers/bf16_index_reader.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "reader.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	c := startLSP(t, dir)
	uri := c.open(dir, "reader.py", string(src), nil)
	ds := c.diagnostics(uri)
	if len(ds) == 0 {
		t.Fatal("no diagnostics on the motivating reader")
	}
	actions := c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 200, "character": 0}},
		"context": map[string]any{"diagnostics": ds}})
	as, _ := actions.([]any)
	var edited string
	for _, a := range as {
		a := a.(map[string]any)
		if a["kind"] != "source.fixAll" {
			continue
		}
		changes := a["edit"].(map[string]any)["changes"].(map[string]any)[uri].([]any)
		edited = changes[0].(map[string]any)["newText"].(string)
	}
	if edited == "" {
		t.Fatalf("no fix-all action among %d actions: %v", len(as), as)
	}
	if !strings.Contains(edited, "persistent_buffer") {
		t.Errorf("the fixed text does not use the persistent buffer helper")
	}
	c.replace(uri, 2, edited)
	after := lspCodes(c.diagnostics(uri))
	for _, code := range after {
		if code == "CG301" {
			t.Errorf("CG301 still reported after the fix-all action: %v", after)
		}
	}
}

// TestChangeCancelsStaleRun: a change (a new generation) cancels the
// analysis in flight, whose result would be dropped as stale; the run for
// the change, waiting for it, then starts at once.
func TestChangeCancelsStaleRun(t *testing.T) {
	s := newLSP(time.Hour, "")
	canceled := 0
	s.cancelRun = func() { canceled++ }
	s.mu.Lock()
	gen := s.gen
	s.newGen()
	s.newGen() // no run in flight any more: nothing to cancel
	s.mu.Unlock()
	if canceled != 1 || s.gen != gen+2 || s.cancelRun != nil {
		t.Errorf("canceled %d times, generation %d -> %d, cancel kept %v; want once, +2, none", canceled, gen, s.gen, s.cancelRun != nil)
	}
}

// TestServerCachedOpen: a project `capguard check .` has just checked is
// served from the results cache when the server opens a file unchanged
// (no analysis); the first unsaved edit is analysed with the cache's
// syntax trees, and saving it goes through the cache again (a miss, the
// saved file changed).
func TestServerCachedOpen(t *testing.T) {
	dir, sampler := samplerProject(t, nil), samplerSrc
	checkRoot(t, dir)
	var stderr syncBuffer
	c := startLSPWith(t, dir, []string{"CAPGUARD_TIMING=1"}, &stderr)
	uri := c.open(dir, "sampler.py", sampler, nil)
	ds := c.diagnostics(uri)
	if got := strings.Join(lspCodes(ds), ","); got != "CG101" {
		t.Fatalf("diagnostics on open: %s, want CG101", got)
	}
	if r := ds[0].(map[string]any)["range"].(map[string]any)["start"].(map[string]any); r["line"] != float64(5) || r["character"] != float64(11) {
		t.Errorf("CG101 from the cache starts at %v, want line 5 character 11 (0-based)", r)
	}
	if !stderr.await("server: cache hit") {
		t.Errorf("the open was not served from the cache check left:\n%s", stderr.String())
	}
	// A comment line above the finding: the served result is moved with
	// the digests the cache stored.
	commented := strings.Replace(sampler, "def sample", "# top-1\ndef sample", 1)
	c.replace(uri, 2, commented)
	ds = c.diagnostics(uri)
	if r := ds[0].(map[string]any)["range"].(map[string]any)["start"].(map[string]any); len(ds) != 1 || r["line"] != float64(6) {
		t.Errorf("after a comment line: %v starting at %v, want CG101 on line 6 (0-based)", lspCodes(ds), r)
	}
	if !stderr.await("server: the last result moved") {
		t.Errorf("a comment edit after the cache's result was analysed again:\n%s", stderr.String())
	}
	edited := strings.Replace(sampler, "return top.tolist()", "return top", 1)
	c.replace(uri, 3, edited)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("after the unsaved edit: %v, want none", lspCodes(ds))
	}
	if !stderr.await("syntax trees: 1 read from") {
		t.Errorf("the first unsaved edit did not read the cache's trees:\n%s", stderr.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "sampler.py"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	c.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}, "text": edited})
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("after saving: %v, want none", lspCodes(ds))
	}
	if !stderr.await("server: cache miss") {
		t.Errorf("the saved state did not go through the cache:\n%s", stderr.String())
	}
	c.call("shutdown", nil)
	c.notify("exit", nil)
}

// syncBuffer is a bytes.Buffer that a process' output and a test read at
// once.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// await reports whether the output holds text within 30 s: the server
// writes its standard error and its messages through two pipes, so what it
// wrote to the one before the other may be read after.
func (b *syncBuffer) await(text string) bool {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(b.String(), text) {
			return true
		}
	}
	return false
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestServerServedSourcesDecoded: a result served from the cache counts a
// diagnostic's range in its file's decoded text, as an analysis does. The
// server read a file with findings raw, so in a Latin-1 file each
// non-ASCII character above a finding moved its column by one.
func TestServerServedSourcesDecoded(t *testing.T) {
	latin1 := "# -*- coding: latin-1 -*-\n# caf\xe9 cr\xe8me br\xfbl\xe9e\n" + samplerSrc
	dir := samplerProject(t, map[string]string{"sampler.py": latin1})
	checkRoot(t, dir)
	var stderr syncBuffer
	c := startLSPWith(t, dir, []string{"CAPGUARD_TIMING=1"}, &stderr)
	runner, err := os.ReadFile(filepath.Join(dir, "runner.py"))
	if err != nil {
		t.Fatal(err)
	}
	uri := c.open(dir, "runner.py", string(runner), nil)
	ds := c.diagnostics(strings.TrimSuffix(uri, "runner.py") + "sampler.py")
	if got := strings.Join(lspCodes(ds), ","); got != "CG101" {
		t.Fatalf("the sampler's diagnostics: %s, want CG101", got)
	}
	if r := ds[0].(map[string]any)["range"].(map[string]any)["start"].(map[string]any); r["line"] != float64(7) || r["character"] != float64(11) {
		t.Errorf("CG101 from the cache starts at %v, want line 7 character 11 (0-based)", r)
	}
	if !stderr.await("server: cache hit") {
		t.Errorf("the open was not served from the cache check left:\n%s", stderr.String())
	}
	c.call("shutdown", nil)
	c.notify("exit", nil)
}

// TestServerSharesConfigSelection: a config that sets select and
// extend-select gives capguard check and capguard server one selection,
// so the server's open is served from the entry check left (check used to
// fold the config's extend-select into an explicit selection of its own,
// a cache key the server never made).
func TestServerSharesConfigSelection(t *testing.T) {
	dir, sampler := samplerProject(t, map[string]string{"capguard.toml": "select = [\"CG104\"]\nextend-select = [\"CG101\"]\n"}), samplerSrc
	checkRoot(t, dir)
	var stderr syncBuffer
	c := startLSPWith(t, dir, []string{"CAPGUARD_TIMING=1"}, &stderr)
	uri := c.open(dir, "sampler.py", sampler, nil)
	if got := strings.Join(lspCodes(c.diagnostics(uri)), ","); got != "CG101" {
		t.Fatalf("diagnostics on open: %s, want CG101 (extend-select)", got)
	}
	if !stderr.await("server: cache hit") {
		t.Errorf("the open was not served from the entry check left:\n%s", stderr.String())
	}
	c.call("shutdown", nil)
	c.notify("exit", nil)
}

// TestServerProgress: a client that handles work-done progress sees an
// analysis that outlives --progress-after as one begin, reports and one
// end on the token the server created (whatever the order of the run's
// end and the client's answer); a client that does not, or a run shorter
// than the delay, sees no create request and no progress.
func TestServerProgress(t *testing.T) {
	dir, sampler := samplerProject(t, nil), samplerSrc
	uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String() + "/sampler.py"
	// open starts a server, opens the sampler and returns every message
	// up to its diagnostics and, when wantEnd, the progress' end, having
	// answered each create request.
	open := func(progress bool, wantEnd bool, flags ...string) []map[string]any {
		c := startLSPWith(t, dir, nil, io.Discard, append([]string{"--no-cache"}, flags...)...)
		caps := map[string]any{}
		if progress {
			caps["window"] = map[string]any{"workDoneProgress": true}
		}
		c.open(dir, "sampler.py", sampler, caps)
		var got []map[string]any
		diags, ended := false, false
		deadline := time.After(60 * time.Second)
		for !diags || (wantEnd && !ended) {
			select {
			case m, ok := <-c.msgs:
				if !ok {
					t.Fatal("the server closed its output")
				}
				got = append(got, m)
				switch m["method"] {
				case "window/workDoneProgress/create":
					c.send(map[string]any{"id": m["id"], "result": nil})
				case "$/progress":
					v := m["params"].(map[string]any)["value"].(map[string]any)
					ended = ended || v["kind"] == "end"
				case "textDocument/publishDiagnostics":
					diags = diags || m["params"].(map[string]any)["uri"] == uri
				}
			case <-deadline:
				t.Fatalf("in 60 s: diagnostics %v, progress ended %v; messages %v", diags, ended, got)
			}
		}
		c.call("shutdown", nil) // what came before its answer is kept in c.msgs
		for len(c.msgs) > 0 {
			got = append(got, <-c.msgs)
		}
		c.notify("exit", nil)
		return got
	}

	msgs := open(true, true, "--progress-after", "0s")
	token := ""
	var kinds []string
	var last float64
	for _, m := range msgs {
		switch m["method"] {
		case "window/workDoneProgress/create":
			if token != "" {
				t.Errorf("a second create request: %v", m)
			}
			token = m["params"].(map[string]any)["token"].(string)
		case "$/progress":
			p := m["params"].(map[string]any)
			if p["token"] != token {
				t.Errorf("progress on token %v, created %q", p["token"], token)
			}
			v := p["value"].(map[string]any)
			kinds = append(kinds, v["kind"].(string))
			if pct, ok := v["percentage"].(float64); ok {
				if pct < last || pct > 100 {
					t.Errorf("percentage %v after %v", pct, last)
				}
				last = pct
			}
			if v["kind"] == "begin" && v["title"] != "capguard" {
				t.Errorf("begin's title %v, want capguard", v["title"])
			}
			if v["kind"] == "end" && v["message"] != "1 finding" {
				t.Errorf("end's message %v, want 1 finding", v["message"])
			}
		}
	}
	if len(kinds) < 2 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" || slices.Index(kinds, "end") != len(kinds)-1 {
		t.Errorf("progress %v, want begin, reports, end", kinds)
	}

	for _, c := range []struct {
		name     string
		progress bool
		flags    []string
	}{
		{"a client without work-done progress", false, []string{"--progress-after", "0s"}},
		{"a run shorter than the delay", true, []string{"--progress-after", "1h"}},
	} {
		for _, m := range open(c.progress, false, c.flags...) {
			if m["method"] == "window/workDoneProgress/create" || m["method"] == "$/progress" {
				t.Errorf("%s: %v", c.name, m)
			}
		}
	}
}

// TestServerFreesWhenIdle: once idle for --free-after after an analysis,
// the server returns the memory the analysis left to the system (and says
// so under CAPGUARD_TIMING); --free-after 0 never does.
func TestServerFreesWhenIdle(t *testing.T) {
	dir := t.TempDir()
	text := "import torch\n\n\ndef step(g, x):\n    with torch.cuda.graph(g):\n        return x.item()\n"
	if err := os.WriteFile(filepath.Join(dir, "a.py"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		after string
		want  bool
	}{{"50ms", true}, {"0", false}} {
		var stderr syncBuffer
		cl := startLSPWith(t, dir, []string{"CAPGUARD_TIMING=1"}, &stderr, "--no-cache", "--free-after", c.after)
		uri := cl.open(dir, "a.py", text, nil)
		if got := strings.Join(lspCodes(cl.diagnostics(uri)), ","); got != "CG101" {
			t.Fatalf("--free-after %s: diagnostics %s, want CG101", c.after, got)
		}
		if c.want && !stderr.await("server: idle:") {
			t.Errorf("--free-after %s: no memory returned once idle:\n%s", c.after, stderr.String())
		}
		if !c.want {
			time.Sleep(200 * time.Millisecond)
			if strings.Contains(stderr.String(), "server: idle:") {
				t.Errorf("--free-after 0 freed memory:\n%s", stderr.String())
			}
		}
		cl.call("shutdown", nil)
		cl.notify("exit", nil)
	}
}

// samplerSrc is a sampler whose `.tolist()` is captured only through
// another module's capture (samplerProject's runner.py): CG101.
const samplerSrc = "import torch\n\n\ndef sample(logits):\n    top = logits.argmax(-1)\n    return top.tolist()\n"

// samplerProject writes runner.py, which captures sampler.py's sample,
// the sampler and the extra files (names relative, with "/") into a new
// folder, and returns it.
func samplerProject(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"runner.py":  "import torch\n\nfrom sampler import sample\n\n\ndef capture(g, logits):\n    with torch.cuda.graph(g):\n        return sample(logits)\n",
		"sampler.py": samplerSrc,
	}
	maps.Copy(files, extra)
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkRoot runs `capguard check .` in dir, which must report CG101; it
// leaves the results cache's entry for the root.
func checkRoot(t *testing.T, dir string) {
	t.Helper()
	check := capguardCmd("check", ".")
	check.Dir = dir
	if out, err := check.CombinedOutput(); !strings.Contains(string(out), "CG101") {
		t.Fatalf("capguard check .: %v\n%s", err, out)
	}
}

// open initializes the server on the folder dir with the client
// capabilities caps (nil: none), opens the file name there with text, and
// returns its URI.
func (c *lspClient) open(dir, name, text string, caps map[string]any) string {
	if caps == nil {
		caps = map[string]any{}
	}
	rootURI := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	c.call("initialize", map[string]any{"processId": nil, "rootUri": rootURI, "capabilities": caps})
	c.notify("initialized", map[string]any{})
	uri := rootURI + "/" + name
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "python", "version": 1, "text": text}})
	return uri
}

// TestServerFolders: every workspace folder is a project, analysed with
// its own context (until now only the first was, and the others' files
// read as having no findings); a folder inside another is the outer one's;
// a file outside every folder is analysed in its own project, which goes
// with its last document; a folder removed clears its diagnostics and one
// added takes its files back.
func TestServerFolders(t *testing.T) {
	runner := "import torch\n\nfrom sampler import sample\nfrom sub.reader import read\n\n\ndef capture(g, logits):\n" +
		"    with torch.cuda.graph(g):\n        read(logits)\n        return sample(logits)\n"
	reader := "def read(x):\n    return x.tolist()\n"
	a := samplerProject(t, map[string]string{"runner.py": runner, "sub/__init__.py": "", "sub/reader.py": reader})
	b := samplerProject(t, nil)
	c := samplerProject(t, map[string]string{"capguard.toml": ""}) // in no folder: its config's folder is its project
	uri := func(parts ...string) string {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(parts...))}).String()
	}
	folder := func(d string) map[string]any { return map[string]any{"uri": uri(d), "name": filepath.Base(d)} }
	cl := startLSPWith(t, a, nil, io.Discard, "--no-cache")
	res := cl.call("initialize", map[string]any{"processId": nil, "capabilities": map[string]any{},
		"workspaceFolders": []any{folder(a), folder(filepath.Join(a, "sub")), folder(b)}})
	if !strings.Contains(fmt.Sprint(res), "changeNotifications:true") {
		t.Errorf("initialize does not announce workspace folder changes: %v", res)
	}
	cl.notify("initialized", map[string]any{})
	open := func(u, text string) {
		cl.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "python", "version": 1, "text": text}})
	}
	want := func(u, codes, why string) {
		t.Helper()
		if got := strings.Join(lspCodes(cl.diagnostics(u)), ","); got != codes {
			t.Errorf("%s: %s, want %q", why, got, codes)
		}
	}
	open(uri(a, "sub", "reader.py"), reader)
	want(uri(a, "sub", "reader.py"), "CG101", "the nested folder's reader, captured by the outer folder's runner")
	open(uri(b, "sampler.py"), samplerSrc)
	want(uri(b, "sampler.py"), "CG101", "the second folder's sampler")
	open(uri(c, "sampler.py"), samplerSrc)
	want(uri(c, "sampler.py"), "CG101", "a sampler in no folder, analysed in its own project")
	// An installed package's file outside every folder is not analysed
	// (its project would be the whole package): no finding on hover.
	captured := samplerSrc + "\n\ndef capture(g, logits):\n    with torch.cuda.graph(g):\n        return sample(logits)\n"
	lib := samplerProject(t, map[string]string{"lib/site-packages/pkg/__init__.py": "", "lib/site-packages/pkg/mod.py": captured})
	mod := uri(lib, "lib", "site-packages", "pkg", "mod.py")
	open(mod, captured)
	if h := cl.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": mod},
		"position": map[string]any{"line": 5, "character": 12}}); h != nil {
		t.Errorf("hover in an installed package's file: %v, want none (not analysed)", h)
	}
	if h := cl.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri(b, "sampler.py")},
		"position": map[string]any{"line": 5, "character": 12}}); !strings.Contains(fmt.Sprint(h), "CG101") {
		t.Errorf("hover in the second folder: %v, want CG101", h)
	}
	// b leaves the workspace: its sampler, still open, becomes a lone
	// script (b has no config, VCS root or package), analysed alone.
	cl.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{folder(b)}}})
	want(uri(b, "sampler.py"), "", "the removed folder's sampler, cleared")
	want(uri(b, "sampler.py"), "", "the removed folder's sampler, analysed alone")
	cl.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{folder(b)}, "removed": []any{}}})
	want(uri(b, "sampler.py"), "", "the lone script's diagnostics, cleared as b takes it back")
	want(uri(b, "sampler.py"), "CG101", "the sampler, back in its folder")
	// The project made for c's sampler goes with its last document (it
	// was analysed again, and its findings published, for the rest of the
	// session).
	cl.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri(c, "sampler.py")}})
	want(uri(c, "sampler.py"), "", "the sampler outside every folder, closed")
	cl.call("shutdown", nil)
	cl.notify("exit", nil)
}

// TestServerPublishesOpenBuffersFirst: an analysis publishes the open
// buffer's diagnostics as soon as its rules have run, before the other
// files' (guard.Options.Early), and its last publication does not repeat
// them: here the open sampler.py (which sorts after a_reader.py, whose
// findings the last publication carries) comes first, once an analysis.
func TestServerPublishesOpenBuffersFirst(t *testing.T) {
	runner := "import torch\n\nfrom sampler import sample\nfrom a_reader import read\n\n\ndef capture(g, logits):\n" +
		"    with torch.cuda.graph(g):\n        read(logits)\n        return sample(logits)\n"
	dir := samplerProject(t, map[string]string{"runner.py": runner, "a_reader.py": "def read(x):\n    return x.tolist()\n"})
	c := startLSPWith(t, dir, []string{"CAPGUARD_CACHE_DIR=" + t.TempDir()}, io.Discard)
	uri := c.open(dir, "sampler.py", samplerSrc, nil)
	reader := strings.TrimSuffix(uri, "sampler.py") + "a_reader.py"
	type pub struct {
		name    string
		version any
		codes   []string
	}
	var got []pub
	collect := func(want int) {
		c.until(fmt.Sprintf("%d publications", want), func(m map[string]any) bool {
			if m["method"] == "textDocument/publishDiagnostics" {
				p := m["params"].(map[string]any)
				name := filepath.Base(p["uri"].(string))
				if p["uri"] == uri || p["uri"] == reader {
					got = append(got, pub{name, p["version"], lspCodes(p["diagnostics"].([]any))})
				}
			}
			return len(got) == want
		})
	}
	// The open: sampler.py early, then a_reader.py.
	collect(2)
	// An unsaved edit that removes the sampler's hazard: sampler.py
	// again, early and once. Had the first analysis repeated sampler.py
	// after a_reader.py, it would be the third publication.
	c.replace(uri, 2, strings.Replace(samplerSrc, "return top.tolist()", "return top", 1))
	collect(3)
	want := []pub{{"sampler.py", 1.0, []string{"CG101"}}, {"a_reader.py", nil, []string{"CG101"}}, {"sampler.py", 2.0, nil}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("publications %v, want %v", got, want)
	}
}

// TestStaleRunKeepsDigests: a run whose result goes stale before it is
// adopted (a change came while it ran) leaves the last result's digests
// as they were. Were the dropped run's digests kept, the next edit to
// comments only would be served by moving the last result with them:
// findings of the text before the dropped run's edit, published for the
// text after it (seen as an empty publication under load in
// TestServerProjectContext).
func TestStaleRunKeepsDigests(t *testing.T) {
	dir := samplerProject(t, nil)
	t.Chdir(dir)
	s := newLSP(time.Hour, "")
	s.root = dir
	src, err := os.ReadFile(filepath.Join(dir, "sampler.py"))
	if err != nil {
		t.Fatal(err)
	}
	s.docs["sampler.py"] = &lspDoc{rel: "sampler.py", text: src}
	afterRun = func() {
		s.mu.Lock()
		s.newGen() // a change arrives while the run ends
		s.mu.Unlock()
	}
	defer func() { afterRun = nil }()
	s.analyse()
	if s.result != nil {
		t.Fatalf("the stale run's result was adopted")
	}
	if s.digests != nil {
		t.Errorf("the stale run's digests were kept (%d files) beside no result", len(s.digests))
	}
	afterRun = nil
	s.analyse()
	if s.result == nil || s.digests == nil {
		t.Fatalf("the next run adopted no result (%v) or no digests (%v)", s.result != nil, s.digests != nil)
	}
	if got := len(s.result.Diagnostics); got != 1 {
		t.Errorf("the adopted result has %d findings, want the sampler's CG101", got)
	}
}
