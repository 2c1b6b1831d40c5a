package report

import (
	"runtime"
	"strings"
	"testing"
)

// TestLineAtLinear: printing a finding on each line of a file costs in
// proportion to the file (bytes allocated at n and 2n lines), not to the
// file times its findings.
func TestLineAtLinear(t *testing.T) {
	cost := func(n int) uint64 {
		src := []byte(strings.Repeat("x = torch.zeros(1).item()\n", n))
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for line := 1; line <= n; line++ {
			text, start, ok := lineAt(src, line)
			if !ok || start != (line-1)*26 || text != "x = torch.zeros(1).item()" {
				t.Fatalf("line %d: %q at %d, %v", line, text, start, ok)
			}
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	a, b := cost(4000), cost(8000)
	if g := float64(b) / float64(a); g > 2.8 {
		t.Errorf("allocated %d bytes for 4,000 lines, %d for 8,000: %.1fx for twice the size", a, b, g)
	}
	src := []byte("\ufeffa\r\nb\n")
	for _, c := range []struct {
		line  int
		text  string
		start int
		ok    bool
	}{{1, "a", 3, true}, {2, "b", 6, true}, {3, "", 8, true}, {4, "", 0, false}, {0, "", 0, false}} {
		text, start, ok := lineAt(src, c.line)
		if text != c.text || start != c.start || ok != c.ok {
			t.Errorf("line %d: %q at %d, %v; want %q at %d, %v", c.line, text, start, ok, c.text, c.start, c.ok)
		}
	}
	if _, _, ok := lineAt(nil, 1); !ok {
		t.Errorf("line 1 of an empty source: not found")
	}
}
