package main

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cudagraph-capguard/capguard/guard"
)

// progressLog records what an lspProgress sends, as "kind:message".
type progressLog struct {
	mu   sync.Mutex
	sent []string
}

func (l *progressLog) notify(method string, params any) {
	v := params.(map[string]any)["value"].(map[string]any)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, v["kind"].(string)+":"+v["message"].(string))
}

func (l *progressLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.sent, ", ")
}

// The create request's answer decides: an error answer (the result left
// unset) sends nothing; an answer that comes after the run ended sends
// begin and end together; reports between are sent once a phase or
// percentage changes.
func TestProgressPairing(t *testing.T) {
	answer := func(ok bool, release chan struct{}, asked chan struct{}) func(string, any, any) {
		return func(method string, params, result any) {
			close(asked)
			<-release
			if ok {
				*result.(*json.RawMessage) = json.RawMessage("null")
			}
		}
	}
	for _, c := range []struct {
		name string
		ok   bool
		want string
	}{
		{"an error answer", false, ""},
		{"an answer after the run ended", true, "begin:checking 2/2 files, end:1 finding"},
	} {
		var log progressLog
		release, asked := make(chan struct{}), make(chan struct{})
		p := startProgress(answer(c.ok, release, asked), log.notify, "t", 0)
		<-asked
		p.report(guard.Progress{Phase: "analysing", Done: 2, Total: 2})
		p.end("1 finding")
		close(release)
		deadline := time.Now().Add(5 * time.Second)
		for log.String() != c.want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // nothing more comes
		if got := log.String(); got != c.want {
			t.Errorf("%s: sent %q, want %q", c.name, got, c.want)
		}
	}

	var log progressLog
	asked := make(chan struct{})
	release := make(chan struct{})
	close(release)
	p := startProgress(answer(true, release, asked), log.notify, "t", 0)
	deadline := time.Now().Add(5 * time.Second)
	for log.String() == "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, g := range []guard.Progress{
		{Phase: "reading", Done: 1, Total: 100}, {Phase: "reading", Done: 2, Total: 100}, {Phase: "reading", Done: 3, Total: 100},
		{Phase: "reading", Done: 100, Total: 100}, {Phase: "analysing", Done: 1, Total: 100}, {Phase: "analysing", Done: 100, Total: 100},
	} {
		p.report(g)
	}
	p.end("3 findings")
	p.report(guard.Progress{Phase: "analysing", Done: 100, Total: 100})
	want := "begin:, report:reading 1/100 files, report:reading 3/100 files, report:parsing, call graph and capture contexts, report:checking 1/100 files, report:checking 100/100 files, end:3 findings"
	if got := log.String(); got != want {
		t.Errorf("reports:\n%s\nwant\n%s", got, want)
	}
}
