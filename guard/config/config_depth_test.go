package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestTOMLDepth: brackets in strings and comments do not count; table
// headers and arrays do.
func TestTOMLDepth(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{"[tool.capguard]\nselect = [\"CG1\"]\n", 1},
		{"x = [[1], [2, [3]]]\n", 3},
		{"x = \"[[[{\" # [[[[\ny = '{{{'\n", 0},
		{"x = \"\"\"\n[[[\n\\\"\"\"\" \ny = [1]\n", 1},
		{"x = '''[[[ '''\n[[a.b]]\n", 2},
		{"x = {a = {b = {c = 1}}}\n", 3},
	} {
		if got := tomlDepth([]byte(c.src)); got != c.want {
			t.Errorf("tomlDepth(%q) = %d, want %d", c.src, got, c.want)
		}
	}
}

// TestDeepTOMLRefused: a pyproject.toml nested past maxTOMLDepth is refused
// with a message, in cost linear in its size (the decoder was quadratic:
// 8,000 nested inline tables took 87 s and 3 GB); one at the limit loads.
func TestDeepTOMLRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(n int) string {
		file := filepath.Join(dir, "pyproject.toml")
		src := "[tool.other]\nx = " + strings.Repeat("{a = ", n) + "1" + strings.Repeat("}", n) + "\n[tool.capguard]\nselect = [\"CG1\"]\n"
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	if _, err := LoadConfig(write(maxTOMLDepth - 1)); err != nil {
		t.Fatalf("nested %d: %v", maxTOMLDepth-1, err)
	}
	cost := func(n int) uint64 {
		file := write(n)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := LoadConfig(file)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "nested") {
			t.Fatalf("nested %d: error %v, want refused as nested too deep", n, err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	a, b := cost(8000), cost(16000)
	if g := float64(b) / float64(a); g > depthMaxGrowth {
		t.Errorf("allocated %d bytes at 8,000, %d at 16,000: %.1fx", a, b, g)
	}
}

// depthMaxGrowth is the stress tests' bound on growth per doubling (guard's
// maxGrowth): linear growth doubles, quadratic quadruples.
const depthMaxGrowth = 2.8
