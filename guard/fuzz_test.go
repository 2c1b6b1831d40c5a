package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
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
	if dir := testenv.StdlibDir(); dir != "" {
		for _, name := range testenv.StdlibSeeds {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("with torch.cuda.graph(g):\n  x.item()\n"))
	f.Add([]byte("def f(:\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		res, err := Run(Options{Paths: []string{"fuzz.py"}, Overlay: map[string][]byte{"fuzz.py": src},
			Config: &Config{Presets: []string{"sglang"}, EntryPoints: []string{"*:*"}}})
		if err != nil {
			t.Fatal(err)
		}
		checkFuzzResult(t, res, src)
	})
}

// checkFuzzResult fails on a panic recovered as a file error (Run turns
// one into an "internal error" so that a user's run goes on; a fuzz target
// must see it) and on a finding or an edit outside the file.
func checkFuzzResult(t *testing.T, res *Result, src []byte) {
	t.Helper()
	for _, e := range res.Errors {
		if strings.Contains(e.Message, "internal error") {
			t.Fatalf("%s: %s", e.Path, e.Message)
		}
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
}

// FuzzDeepExpression builds a captured function whose body nests one
// fragment n deep around a name (`(` and `)`, `lambda: `, `x.a`, `f(`...,
// up to 6,000 levels: past syntax.MaxDepth too): the run never panics,
// never overflows the stack, and refuses past the limit with a file error.
func FuzzDeepExpression(f *testing.F) {
	for _, c := range []struct {
		open, close string
		n           uint16
	}{
		{"(", ")", 3000}, {"[", "]", 2000}, {"lambda: ", "", 4000}, {"x + ", "", 6000},
		{"", ".a", 5000}, {"f(", ")", 2500}, {"not ", "", 5001}, {"x if x else ", "", 3000},
		{"{1: ", "}", 1500}, {"", "[0]", 4500}, {"-", "", 6000}, {"", ".a()", 2000},
	} {
		f.Add(c.open, c.close, c.n)
	}
	f.Fuzz(func(t *testing.T, open, close string, n uint16) {
		if len(open)+len(close) > 16 || n > 6000 {
			return
		}
		src := stressSource(strings.Repeat(open, int(n)) + "x" + strings.Repeat(close, int(n)))
		res, err := Run(Options{Paths: []string{"fuzz.py"}, Overlay: map[string][]byte{"fuzz.py": src}, Config: &Config{}})
		if err != nil {
			t.Fatal(err)
		}
		checkFuzzResult(t, res, src)
	})
}

// FuzzConfig feeds arbitrary bytes to the configuration loader, as
// capguard.toml and as pyproject.toml, and checks a small project with
// whatever it accepts: no panic, and a config that loads never makes the
// run fail.
func FuzzConfig(f *testing.F) {
	for _, seed := range []string{
		"select = [\"ALL\"]\nignore = [\"CG302\"]\nexclude = [\"tests/**\", \"build\"]\n",
		"per-file-ignores = { \"bench/*.py\" = [\"CG101\"] }\nentry-points = [\"pkg.step:decode\"]\n",
		"replay-prep = [\"*:*.prepare\"]\npresets = [\"sglang\", \"vllm\"]\nkernel-ops = [\"my_ext.*\"]\n",
		"helper-module = \"serving.buffers\"\nmax-file-size = 1\n",
		"[tool.capguard]\nselect = [\"CG3\"]\n",
		"exclude = [\"**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/x\"]\n",
		"exclude = [\"[\"]\n",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	src := []byte("import torch\n\ndef decode(g, x):\n    with torch.cuda.graph(g):\n        y = x.item()\n        z = x.to(torch.int32)\n")
	f.Fuzz(func(t *testing.T, data []byte, pyproject bool) {
		dir := t.TempDir()
		name := "capguard.toml"
		if pyproject {
			name = "pyproject.toml"
		}
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(file)
		if err != nil || cfg == nil {
			return
		}
		py := filepath.Join(dir, "pkg", "step.py")
		if _, err := Run(Options{Paths: []string{py}, Overlay: map[string][]byte{py: src}, Config: cfg}); err != nil {
			t.Fatalf("a loaded config makes the run fail: %v", err)
		}
	})
}
