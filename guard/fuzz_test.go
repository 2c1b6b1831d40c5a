package guard

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzCheck feeds arbitrary bytes through the whole analysis: parsing,
// the project model, contexts and every rule. It must never panic, and
// every finding must lie inside the file.
func FuzzCheck(f *testing.F) {
	filepath.WalkDir("../testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".py" {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
		return nil
	})
	f.Add([]byte("with torch.cuda.graph(g):\n  x.item()\n"))
	f.Add([]byte("def f(:\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		res, err := Run(Options{Paths: []string{"fuzz.py"}, Overlay: map[string][]byte{"fuzz.py": src},
			Config: &Config{Presets: []string{"sglang"}, EntryPoints: []string{"*:*"}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.Diagnostics {
			if d.Start.Offset < 0 || d.End.Offset > len(src) || d.Start.Offset > d.End.Offset {
				t.Fatalf("finding outside the file: %+v", d)
			}
			if d.Fix != nil {
				for _, e := range d.Fix.Edits {
					if e.Start < 0 || e.End > len(src) || e.Start > e.End {
						t.Fatalf("edit outside the file: %+v", e)
					}
				}
			}
		}
	})
}
