package guard

import (
	"context"
	"errors"
	"path/filepath"
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
