package index

import "testing"

// A stub of a framework kept for tests (stubs/torch/__init__.py, its folder
// no package) is what `import torch` means only for files under the stub's
// folder: everywhere else it is the installed framework, or every capture
// region of the project (`with torch.cuda.graph(g):`) would read as a call
// of the stub.
func TestImportFrameworkStub(t *testing.T) {
	p, byPath := testProject(t, "/proj", map[string]string{
		"engine/runner.py":           "import torch\n",
		"stubs/torch/__init__.py":    "def cuda(): pass\n",
		"stubs/use_stub.py":          "import torch\n",
		"vendored/mylib/__init__.py": "X = 1\n",
		"engine/uses_lib.py":         "import mylib\n",
	})
	if m := p.Import(byPath["engine/runner.py"], "torch", 0); m != nil {
		t.Errorf("engine/runner.py: `import torch` resolved to the stub %s, want the framework (nil)", m.Path)
	}
	if m := p.Import(byPath["stubs/use_stub.py"], "torch", 0); m == nil {
		t.Errorf("stubs/use_stub.py: `import torch` beside the stub did not resolve to it")
	}
	// A project package of any other name is still found by its name.
	if m := p.Import(byPath["engine/uses_lib.py"], "mylib", 0); m == nil {
		t.Errorf("engine/uses_lib.py: `import mylib` did not resolve to vendored/mylib")
	}
}
