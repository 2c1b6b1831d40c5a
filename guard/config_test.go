package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigDiscoveryAndSettings(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "pkg", "gen"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte(`
[project]
name = "x"

[tool.capguard]
ignore = ["CG104"]
exclude = ["gen"]
per-file-ignores = { "pkg/legacy.py" = ["CG101"] }
entry-points = ["pkg.step:decode"]
`), 0o644))
	must(os.WriteFile(filepath.Join(dir, "pkg", "__init__.py"), nil, 0o644))
	body := "import torch\n\ndef decode(x):\n    n = x.item()\n    return torch.nonzero(x)\n"
	must(os.WriteFile(filepath.Join(dir, "pkg", "step.py"), []byte(body), 0o644))
	must(os.WriteFile(filepath.Join(dir, "pkg", "legacy.py"), []byte(strings.Replace(body, "decode", "decode_old", 1)), 0o644))
	must(os.WriteFile(filepath.Join(dir, "pkg", "gen", "x.py"), []byte(body), 0o644))
	res, err := Run(Options{Paths: []string{filepath.Join(dir, "pkg")}})
	must(err)
	if res.Config.Path != filepath.Join(dir, "pyproject.toml") {
		t.Fatalf("config %q not found upwards", res.Config.Path)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, filepath.Base(d.Path)+":"+d.Rule.ID)
	}
	if strings.Join(got, ",") != "step.py:CG101" {
		t.Fatalf("findings %v, want only step.py:CG101 (CG104 ignored, gen excluded, legacy not an entry point)", got)
	}
	if res.Files != 3 {
		t.Fatalf("files %d, want 3 (gen/ excluded)", res.Files)
	}
	// Flags override: --select CG1 with the config's ignore kept.
	res, err = Run(Options{Paths: []string{filepath.Join(dir, "pkg")}, Select: []string{"CG104"}, Config: &Config{EntryPoints: []string{"pkg.step:decode"}}})
	must(err)
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Rule.ID != "CG104" {
		t.Fatalf("select CG104: %v", res.Diagnostics)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown key":       "selekt = [\"CG1\"]\n",
		"unknown preset":    "presets = [\"tensorrt\"]\n",
		"bad code":          "ignore = [\"XX9\"]\n",
		"bad extend code":   "extend-select = [\"CG999\"]\n",
		"bad entry":         "entry-points = [\"pkg.mod.f\"]\n",
		"bad toml":          "select = [\n",
		"bad exclude glob":  "exclude = [\"gen/[a-\"]\n",
		"bad per-file glob": "per-file-ignores = { \"[\" = [\"CG101\"] }\n",
		"bad entry pattern": "entry-points = [\"pkg:Runner.[\"]\n",
	} {
		p := filepath.Join(dir, "capguard.toml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(p)
		if err == nil || !strings.Contains(err.Error(), "capguard.toml") {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
}

func TestSelector(t *testing.T) {
	cases := []struct {
		sel, ign []string
		id       string
		want     bool
	}{
		{nil, nil, "CG301", true},
		{[]string{"CG1"}, nil, "CG301", false},
		{[]string{"CG1"}, nil, "CG104", true},
		{[]string{"ALL"}, []string{"CG3"}, "CG301", false},
		{[]string{"CG301"}, []string{"CG3"}, "CG301", true},
		{nil, []string{"CG30"}, "CG302", false},
	}
	for _, c := range cases {
		if got := (Selector{Select: c.sel, Ignore: c.ign}).Enabled(c.id); got != c.want {
			t.Errorf("select %v ignore %v: %s enabled=%v, want %v", c.sel, c.ign, c.id, got, c.want)
		}
	}
}

// The chain proves the context: capture root first, the function last.
func TestChainAndContext(t *testing.T) {
	res, err := Run(Options{Paths: []string{"../testdata/sglang_like"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		if d.Rule.ID != "CG101" {
			continue
		}
		want := []string{
			"sglang_like.srt.model_executor.cuda_graph_runner.CudaGraphRunner.capture_one_batch_size",
			"sglang_like.srt.model_executor.cuda_graph_runner.CudaGraphRunner.capture_one_batch_size.run_once",
			"sglang_like.srt.layers.model.TinyDecoder.forward",
			"sglang_like.srt.layers.sampler.Sampler.sample",
		}
		if d.Context != Captured || strings.Join(d.Chain, " ") != strings.Join(want, " ") {
			t.Fatalf("CG101 context %s chain\n%s\nwant\n%s", d.Context, strings.Join(d.Chain, "\n"), strings.Join(want, "\n"))
		}
		// Nothing in the project makes a CudaGraphRunner: its methods'
		// self is the declared class, so the chain is annotated.
		if d.Resolution != Annotated {
			t.Errorf("resolution %s, want annotated", d.Resolution)
		}
		return
	}
	t.Fatal("no CG101 in the sampler")
}

// CG301 is an error where the reader also runs in replay-prep.
// A reader whose temporary is made and consumed in one call replays clean
// whether the call is captured (graph-owned) or runs in replay-prep (an
// eager launch): CG301 reports neither (DESIGN.md, "What CG301 reports").
// It once reported an error here because the function also ran in
// replay-prep.
func TestTemporaryConsumedInPrepIsNoFinding(t *testing.T) {
	dir := t.TempDir()
	src := `import torch
import triton

@triton.jit
def k(a):
    pass

def reader(x):
    k[(1,)](x.to(torch.int32))

def capture(g, x):
    with torch.cuda.graph(g):
        reader(x)

def serve(g, x):
    reader(x)
    g.replay()
`
	if err := os.WriteFile(filepath.Join(dir, "m.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 0 {
		t.Fatalf("want no finding, got %v", res.Diagnostics)
	}
}

// max-file-size: MiB from the config, 0 for no limit, the default when
// unset; Options.MaxFileSize overrides it.
func TestMaxFileSize(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "capguard.toml")
	big := filepath.Join(dir, "big.py")
	// 2 MiB of comments, then a finding.
	src := strings.Repeat("# padding padding padding padding padding padding padding\n", 2<<20/58) +
		"import torch\n\ndef f(g, x):\n    with torch.cuda.graph(g):\n        y = x.item()\n"
	if err := os.WriteFile(big, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		config string
		opt    int64
		want   string // error message prefix, "" for checked
	}{
		{"", 0, ""},
		{"max-file-size = 1\n", 0, "2.0 MiB, over the 1 MiB file size limit"},
		{"max-file-size = 1\n", -1, ""},
		{"max-file-size = 0\n", 0, ""},
		{"", 1 << 20, "2.0 MiB, over the 1 MiB file size limit"},
		{"max-file-size = 1\n", 3 << 20, ""},
	} {
		if err := os.WriteFile(cfgFile, []byte(c.config), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Run(Options{Paths: []string{big}, MaxFileSize: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(res.Errors) > 0 {
			got = res.Errors[0].Message
		}
		if c.want == "" && (got != "" || len(res.Diagnostics) != 1) || c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("config %q, option %d: error %q, %d findings; want %q", c.config, c.opt, got, len(res.Diagnostics), c.want)
		}
	}
	if err := os.WriteFile(cfgFile, []byte("max-file-size = -2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(cfgFile); err == nil || !strings.Contains(err.Error(), "max-file-size is -2") {
		t.Errorf("negative max-file-size: %v", err)
	}
}
