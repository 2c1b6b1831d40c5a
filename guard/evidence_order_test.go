package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The files are searched for capture evidence on every core
// (contexts.captureEvidence), and the evidence named is still the first
// file's in path order: 40 files, a graph-mode setting in the 8th, 20th
// and 34th, read with one worker and with eight. A search that kept a
// later file's evidence (the last found, or whichever file answered
// first) names m19.py or m33.py.
func TestCaptureEvidenceFirstFile(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 40; i++ {
		body := fmt.Sprintf("import torch\n\n\ndef step%d(x):\n    return torch.relu(x)\n", i)
		if i == 7 || i == 19 || i == 33 {
			body += fmt.Sprintf("\n\ndef run%d(model):\n    return model.serve(use_cuda_graph=True)\n", i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%02d.py", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, procs := range []int{1, 8} {
		prev := runtime.GOMAXPROCS(procs)
		for run := 0; run < 5; run++ {
			g, err := BuildGraph(Options{Paths: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(g.Library, "not a library: ") || !strings.Contains(g.Library, "m07.py") {
				t.Fatalf("GOMAXPROCS %d, run %d: library = %q, want the evidence of m07.py", procs, run, g.Library)
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}
