package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cudagraph-capguard/capguard/guard"
)

// A run shows files read, then files analysed with the findings so far, and
// clears its line at the end.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	prog, clear := progressTo(&buf, 0, 0)
	res, err := guard.Run(guard.Options{Paths: []string{"../../testdata/sglang_like"}, Progress: prog})
	if err != nil {
		t.Fatal(err)
	}
	clear()
	out := buf.String()
	// The files are read and analysed on every core, and a report that
	// comes after a higher one of its phase is dropped (guard's inOrder):
	// which counts show varies, but each phase shows some, in order, and
	// ends at its total.
	for _, phase := range []string{"read", "analysed"} {
		re := regexp.MustCompile(`capguard: ` + phase + ` (\d+)/(\d+) files`)
		ms := re.FindAllStringSubmatch(out, -1)
		if len(ms) == 0 {
			t.Errorf("progress output shows no %q line:\n%q", phase, out)
			continue
		}
		prev := 0
		for _, m := range ms {
			n, _ := strconv.Atoi(m[1])
			if n < prev {
				t.Errorf("%s went back from %d to %d:\n%q", phase, prev, n, out)
			}
			prev = n
		}
		if last := ms[len(ms)-1]; last[1] != last[2] {
			t.Errorf("the last %q line is %q, want the total", phase, last[0])
		}
	}
	if !strings.Contains(out, "findings so far") {
		t.Errorf("progress output lacks %q:\n%q", "findings so far", out)
	}
	if !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("progress line not cleared at the end: %q", out)
	}
	if len(res.Diagnostics) == 0 || !strings.Contains(out, "analysed") {
		t.Fatal("fixture has no findings")
	}
	// The findings count grows: the last analysing line counts some.
	lines := strings.Split(out, "\r\033[K")
	last := ""
	for _, l := range lines {
		if strings.Contains(l, "analysed") {
			last = l
		}
	}
	if strings.HasSuffix(last, " 0 findings so far") {
		t.Errorf("last progress line %q counts no findings", last)
	}
}

// Small runs and throttled updates print nothing extra.
func TestProgressQuiet(t *testing.T) {
	var buf bytes.Buffer
	prog, clear := progressTo(&buf, 200, time.Hour)
	if _, err := guard.Run(guard.Options{Paths: []string{"../../testdata/readers"}, Progress: prog}); err != nil {
		t.Fatal(err)
	}
	clear()
	if buf.Len() != 0 {
		t.Errorf("a 1-file run printed progress: %q", buf.String())
	}
	// Under go test stderr is not a terminal: progress is off.
	if p, _ := progress(true); p != nil {
		t.Error("progress on although stderr is not a terminal")
	}
}
