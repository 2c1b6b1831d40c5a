package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// settingsProject is a project that imports vllm (the vllm preset turns
// on), captures in one module and follows a graph protocol in another.
func settingsProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"eng/__init__.py": "",
		"eng/runner.py": `import torch

from vllm.config import VllmConfig


class Runner:
    def capture(self, model, x):
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = model(x)
`,
		"eng/backend.py": `class Backend:
    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.bs = bs

    def forward_decode(self, q):
        return q.sum().item()
`,
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestShowSettings(t *testing.T) {
	dir := settingsProject(t)
	t.Chdir(dir)
	stdout, stderr, code, _ := runApp(t, "check", "--no-cache", "--show-settings", ".")
	for _, want := range []string{
		"Config file: (none found: the defaults)",
		"  vllm: import vllm.config.VllmConfig in eng/runner.py",
		"eng/runner.py:9 eng.runner.Runner.capture [captured]: with torch.cuda.graph",
		"eng/backend.py:5 eng.backend.Backend.forward_decode [captured]: convention graph-protocol: Backend defines init_forward_metadata_capture_cuda_graph",
		"Conventions matched:\n  graph-protocol: Backend\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--show-settings lacks %q:\n%s%s", want, stdout, stderr)
		}
	}
	if code != 0 {
		t.Errorf("--show-settings: exit %d", code)
	}
	// The summary names the presets in one line; JSON carries the settings.
	stdout, _, _, _ = runApp(t, "check", "--no-cache", ".")
	if !strings.Contains(stdout, "\nPresets: vllm (import vllm.config.VllmConfig in eng/runner.py)") {
		t.Errorf("summary has no presets line:\n%s", stdout)
	}
	stdout, _, _, _ = runApp(t, "check", "--output-format", "json", ".") // through the cache, twice
	stdout, _, _, _ = runApp(t, "check", "--output-format", "json", ".")
	var doc struct {
		Settings struct {
			Presets []struct{ Name, Why string }
			Roots   []struct {
				Function, Context, Why string
			}
			Conventions []struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Settings.Presets) != 1 || doc.Settings.Presets[0].Name != "vllm" || len(doc.Settings.Roots) != 2 ||
		len(doc.Settings.Conventions) != 1 {
		t.Errorf("JSON settings: %+v", doc.Settings)
	}
	// --preset none turns detection off; --preset sglang says it came from the flag.
	stdout, _, code, msg := runApp(t, "check", "--no-cache", "--show-settings", "--preset", "none", ".")
	if code != 0 || !strings.Contains(stdout, "Presets:\n  (none)\n") {
		t.Errorf("--preset none: exit %d %s\n%s", code, msg, stdout)
	}
	stdout, _, _, _ = runApp(t, "check", "--no-cache", "--show-settings", "--preset", "sglang", ".")
	if !strings.Contains(stdout, "  sglang: --preset\n") || !strings.Contains(stdout, "  vllm: import") {
		t.Errorf("--preset sglang:\n%s", stdout)
	}
	os.WriteFile("capguard.toml", []byte("presets = [\"lmdeploy\"]\n"), 0o644)
	stdout, _, _, _ = runApp(t, "check", "--no-cache", "--show-settings", ".")
	if !strings.Contains(stdout, "  lmdeploy: config "+filepath.Join(dir, "capguard.toml")) {
		t.Errorf("config preset:\n%s", stdout)
	}
}
