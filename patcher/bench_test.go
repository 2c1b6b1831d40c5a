package patcher

import (
	"os"
	"strings"
	"testing"
)

// Benchmarks for the fixer's hot paths; compare runs with benchstat.

const benchReader = "../testdata/readers/bf16_index_reader.py"

// BenchmarkFixReaders is `capguard fix testdata/readers` without the CLI:
// analysis, fixes, re-analysis, helper insertion and the diff.
func BenchmarkFixReaders(b *testing.B) {
	for i := 0; i < b.N; i++ {
		res, err := Fix(Options{Paths: []string{"../testdata/readers"}})
		if err != nil || len(res.Changed()) != 1 {
			b.Fatalf("fix: %v", err)
		}
	}
}

func BenchmarkEnsureHelper(b *testing.B) {
	src, err := os.ReadFile(benchReader)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		if _, _, err := EnsureHelper(src, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply applies one edit to every line of a 1 MB file.
func BenchmarkApply(b *testing.B) {
	src := []byte(strings.Repeat("x = y.to(torch.int32)\n", 1<<20/22))
	var changes []Change
	for off := 0; off < len(src); off += 22 {
		changes = append(changes, Change{Edits: []Edit{{Start: off + 4, End: off + 21, NewText: "persistent_buffer(\"x\", y, torch.int32)"}}})
	}
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Apply(src, changes)
	}
}

// BenchmarkUnifiedDiff diffs a 1 MB file against itself with every 50th
// line changed.
func BenchmarkUnifiedDiff(b *testing.B) {
	lines := strings.Split(strings.Repeat("x = y.to(torch.int32)\n", 1<<20/22), "\n")
	a := strings.Join(lines, "\n")
	for i := 0; i < len(lines); i += 50 {
		lines[i] = "x = persistent_buffer(\"x\", y, torch.int32)"
	}
	c := strings.Join(lines, "\n")
	b.SetBytes(int64(len(a)))
	for i := 0; i < b.N; i++ {
		UnifiedDiff("f.py", []byte(a), []byte(c))
	}
}
