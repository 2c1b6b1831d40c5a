package main

// Work-done progress for capguard server's analyses (LSP 3.15's
// window/workDoneProgress): an analysis that is still running after
// --progress-after shows the editor a progress bar with its phase and
// files. Only a client that says it handles progress
// (capabilities.window.workDoneProgress) gets one, so a quick run (an
// edit re-checked from the trees in memory, a cache hit) shows nothing.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/cudagraph-capguard/capguard/guard"
)

// lspProgress is one analysis' progress. Once its create request is sent
// (the run outlived the delay), the client sees begin and end whatever
// the order of the client's answer and the run's end: a run that ended
// first gets its begin and end together when the answer comes. A client
// that answers with an error gets neither.
type lspProgress struct {
	notify glsp.NotifyFunc
	token  string
	title  string
	timer  *time.Timer

	mu     sync.Mutex
	begun  bool   // begin sent (the client answered create)
	done   bool   // the run ended (end)
	endMsg string // end's message
	msg    string // the latest phase and files (report)
	phase  string // reading, solving or checking
	pct    uint32
}

// startProgress returns the progress of an analysis starting now: after
// the delay it asks the client to create token (call), and reports from
// then on. A nil call or notify gives a progress that sends nothing.
func startProgress(call glsp.CallFunc, notify glsp.NotifyFunc, token string, after time.Duration) *lspProgress {
	p := &lspProgress{notify: notify, token: token, title: "capguard"}
	if call == nil || notify == nil {
		p.done = true
		return p
	}
	p.timer = time.AfterFunc(after, func() {
		p.mu.Lock()
		ended := p.done
		p.mu.Unlock()
		if ended {
			return
		}
		var answer json.RawMessage // stays nil when the client answers with an error
		call(string(protocol.ServerWindowWorkDoneProgressCreate), map[string]any{"token": token}, &answer)
		if answer == nil {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.begun = true
		p.send(map[string]any{"kind": "begin", "title": p.title, "message": p.msg, "percentage": p.pct})
		if p.done {
			p.send(map[string]any{"kind": "end", "message": p.endMsg})
		}
	})
	return p
}

// send notifies the client of one progress value (p.mu held).
func (p *lspProgress) send(value map[string]any) {
	p.notify(string(protocol.MethodProgress), map[string]any{"token": p.token, "value": value})
}

// report takes guard's progress (Options.Progress): reading the files is
// the first 40%; the parse, the points-to solve and the contexts (which
// say nothing while they run) the next 20%; the rules the rest. The
// client hears of it when the percentage or the phase changes.
func (p *lspProgress) report(g guard.Progress) {
	var msg, phase string
	var pct uint32
	switch {
	case g.Total == 0:
		return
	case g.Phase == "reading" && g.Done < g.Total:
		msg, phase, pct = fmt.Sprintf("reading %d/%d files", g.Done, g.Total), "reading", uint32(40*g.Done/g.Total)
	case g.Phase == "reading":
		msg, phase, pct = "parsing, call graph and capture contexts", "solving", 40
	default:
		msg, phase, pct = fmt.Sprintf("checking %d/%d files", g.Done, g.Total), "checking", uint32(60+40*g.Done/g.Total)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || (pct == p.pct && phase == p.phase) {
		return
	}
	p.msg, p.phase, p.pct = msg, phase, pct
	if p.begun {
		p.send(map[string]any{"kind": "report", "message": msg, "percentage": pct})
	}
}

// end ends the progress with a message (the run's outcome): sent now if
// it has begun, with its begin if the client's answer comes later, and
// never if the run ended before the delay.
func (p *lspProgress) end(msg string) {
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done, p.endMsg = true, msg
	if p.begun {
		p.send(map[string]any{"kind": "end", "message": msg})
	}
}

// outcome is an analysis' end message.
func outcome(res *guard.Result, err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "restarted after a change"
	case err != nil:
		return "stopped: " + oneLine(err.Error())
	case len(res.Diagnostics) == 1:
		return "1 finding"
	default:
		return fmt.Sprintf("%d findings", len(res.Diagnostics))
	}
}
