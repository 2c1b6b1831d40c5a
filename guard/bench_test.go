package guard

import (
	"os"
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

func BenchmarkPrefilter(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		relevant(src, nil)
	}
}

func BenchmarkCheckFixtures(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Run(Options{Paths: []string{"../testdata/sglang_like", "../testdata/readers"}}); err != nil {
			b.Fatal(err)
		}
	}
}
