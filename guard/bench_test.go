package guard

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Benchmarks for the hot paths; compare runs with benchstat.

func benchSource(b *testing.B) []byte {
	src, err := os.ReadFile("../testdata/sglang_like/srt/model_executor/cuda_graph_runner.py")
	if err != nil {
		b.Fatal(err)
	}
	return src
}

func BenchmarkParse(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckFixtures(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Run(Options{Paths: []string{"../testdata/sglang_like", "../testdata/readers"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckLargeFile checks one 1 MB generated file: 500 copies of the
// motivating reader, each a captured, claimed, flagged function.
func BenchmarkCheckLargeFile(b *testing.B) {
	src, err := os.ReadFile("../testdata/readers/bf16_index_reader.py")
	if err != nil {
		b.Fatal(err)
	}
	var big []byte
	for i := 0; len(big) < 1<<20; i++ {
		big = append(big, strings.ReplaceAll(string(src), "def ", fmt.Sprintf("def v%d_", i))...)
		big = append(big, '\n')
	}
	b.SetBytes(int64(len(big)))
	for i := 0; i < b.N; i++ {
		res, err := Run(Options{Paths: []string{"big.py"}, Overlay: map[string][]byte{"big.py": big}, Config: &Config{}})
		if err != nil || len(res.Diagnostics) == 0 {
			b.Fatalf("check: %v", err)
		}
	}
}

// BenchmarkCheckTree checks the tree named by CAPGUARD_BENCH_TREE (a corpus
// checkout: FlagGems' src/, lmdeploy's lmdeploy/pytorch), for profiling the
// whole analysis where the prefilter cannot help:
//
//	CAPGUARD_BENCH_TREE=/path/to/FlagGems/src go test ./guard -run '^$' \
//	    -bench CheckTree -benchtime 1x -cpuprofile cpu.out
func BenchmarkCheckTree(b *testing.B) {
	tree := os.Getenv("CAPGUARD_BENCH_TREE")
	if tree == "" {
		b.Skip("CAPGUARD_BENCH_TREE is not set")
	}
	for i := 0; i < b.N; i++ {
		if _, err := Run(Options{Paths: []string{tree}}); err != nil {
			b.Fatal(err)
		}
	}
}
