package index

import "testing"

// TestStarReexports: a name a module binds only through `from m import *`
// (a package's __init__ re-exporting its modules' classes) resolves to
// what m binds, through chains and cycles of star imports, as an import
// of it and as a class's base (it was external: the class's hierarchy was
// open, so an inherited method was not found and a namesake of a
// framework's class could not be told apart); `__all__` and a leading
// underscore keep a name out as Python does, and a sealed project gives
// the same answers.
func TestStarReexports(t *testing.T) {
	srcs := map[string]string{
		"pkg/__init__.py":    "from .nn import *\nfrom .cyc_a import *\n",
		"pkg/nn/__init__.py": "from .modules import *\nfrom .listed import *\n",
		"pkg/nn/modules.py":  "import torch.nn as nn\nclass Base(nn.Module):\n    def helper(self):\n        return 1\nclass _Private:\n    pass\n",
		"pkg/nn/listed.py":   "__all__ = ['Shown']\nclass Shown:\n    pass\nclass Hidden:\n    pass\n",
		"pkg/cyc_a.py":       "from .cyc_b import *\n",
		"pkg/cyc_b.py":       "from .cyc_a import *\n",
		"pkg/use.py":         "from .nn import Base, Shown, Hidden\nfrom . import Base as Top\nclass Impl(Base):\n    pass\n",
		"pkg/private_use.py": "from .nn import *\n",
	}
	for _, sealed := range []bool{false, true} {
		p, files := testProject(t, "/proj", srcs)
		if sealed {
			p.Seal()
		}
		use := files["pkg/use.py"]
		for _, name := range []string{"Base", "Top"} {
			if s := p.ResolveName(use, name); s.Kind != SymClass || s.Class.Name != "Base" {
				t.Errorf("sealed=%v: %s resolves to %+v, want the class Base", sealed, name, s)
			}
		}
		if s := p.ResolveName(use, "Shown"); s.Kind != SymClass {
			t.Errorf("sealed=%v: Shown (in __all__) resolves to %+v", sealed, s)
		}
		// An explicit import of a name __all__ leaves out still fails
		// here: the star import never bound it in pkg.nn.
		if s := p.ResolveName(use, "Hidden"); s.Kind == SymClass {
			t.Errorf("sealed=%v: Hidden (not in __all__) resolves to a class", sealed)
		}
		priv := files["pkg/private_use.py"]
		if s := p.ResolveName(priv, "_Private"); s.Kind == SymClass {
			t.Errorf("sealed=%v: _Private came through a star import", sealed)
		}
		if s := p.ResolveName(files["pkg/cyc_a.py"], "Nothing"); s.Kind != SymExternal {
			t.Errorf("sealed=%v: a name no star import binds, through a cycle: %+v", sealed, s)
		}
		h := p.Hierarchy()
		impl := use.Classes["Impl"]
		if h.open[impl] {
			t.Errorf("sealed=%v: Impl's base through a star re-export is open", sealed)
		}
		if m := h.Lookup(impl, "helper"); m == nil {
			t.Errorf("sealed=%v: Impl does not inherit Base.helper", sealed)
		}
	}
}
