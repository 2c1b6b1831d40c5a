package guard

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// A run whose Options.Context is done returns the context's error and no
// result, whether it was done before the run or while the rules ran; a
// context that stays open changes nothing.
func TestRunCanceled(t *testing.T) {
	dir := writeTree(t, capturedStep)
	opts := Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &Config{}}
	want, err := Run(opts)
	if err != nil || len(want.Diagnostics) != 1 {
		t.Fatalf("without a context: %v, %v (want one finding)", err, want)
	}

	done, cancel := context.WithCancel(context.Background())
	cancel()
	opts.Context = done
	if res, err := Run(opts); !errors.Is(err, context.Canceled) || res != nil {
		t.Errorf("a context done before the run: %v, %v; want context.Canceled and no result", res, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.Context = ctx
	analysing := 0
	opts.Progress = func(p Progress) {
		if p.Phase == "analysing" {
			analysing++
			cancel()
		}
	}
	if res, err := Run(opts); !errors.Is(err, context.Canceled) || res != nil || analysing == 0 {
		t.Errorf("a context done while the rules ran (%d progress calls): %v, %v; want context.Canceled and no result", analysing, res, err)
	}

	opts.Context, opts.Progress = context.Background(), nil
	got, err := Run(opts)
	if err != nil || findingsText(got) != findingsText(want) {
		t.Errorf("an open context: %v\n%s\nwant\n%s", err, findingsText(got), findingsText(want))
	}
}

// askingCtx is a context whose Err says Canceled from its after+1-th
// question on, and notes which questions contexts.Compute asked.
type askingCtx struct {
	context.Context
	mu          sync.Mutex
	asked       int
	after       int // -1: never canceled
	fromCompute int
}

func (c *askingCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked++
	buf := make([]byte, 16<<10)
	if strings.Contains(string(buf[:runtime.Stack(buf, false)]), "guard/contexts.Compute") {
		c.fromCompute++
	}
	if c.after >= 0 && c.asked > c.after {
		return context.Canceled
	}
	return nil
}

// A run canceled at any question it asks (in the solve, the contexts or
// the rules) returns context.Canceled and no result, and the contexts
// ask too.
func TestRunCanceledAtEveryQuestion(t *testing.T) {
	dir := writeTree(t, capturedStep)
	opts := Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &Config{}}
	open := &askingCtx{Context: context.Background(), after: -1}
	opts.Context = open
	if res, err := Run(opts); err != nil || len(res.Diagnostics) != 1 {
		t.Fatalf("never canceled: %v, %v (want one finding)", err, res)
	}
	if open.fromCompute == 0 {
		t.Fatalf("contexts.Compute asked none of the run's %d questions", open.asked)
	}
	for after := 0; after < open.asked; after++ {
		opts.Context = &askingCtx{Context: context.Background(), after: after}
		if res, err := Run(opts); !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("canceled at question %d of %d: %v, %v; want context.Canceled and no result", after+1, open.asked, res, err)
		}
	}
}
