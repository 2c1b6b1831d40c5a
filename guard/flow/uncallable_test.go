package flow

import (
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// TestUncallable: the values no call can take at a call's callee, by kind;
// what can be called (functions, instances, an nn.Sequential) is not
// counted.
func TestUncallable(t *testing.T) {
	src := `import torch
from torch import nn
import pkg.other as other


class A:
    def __call__(self, x):
        return x


def f(x):
    return x


def pick(flag, x):
    plain = f if flag else A()
    plain(x)
    cont = [f] if flag else f
    cont(x)
    conts = [f] if flag else ({"k": f} if x else A())
    conts(x)
    mod = other if flag else f
    mod(x)
    dt = torch.float32 if flag else A()
    dt(x)
    seq = nn.Sequential(A()) if flag else f
    seq(x)
    gen = (g for g in [f]) if flag else f
    gen(x)
    mixed = other if flag else ([f] if x else torch.bfloat16)
    mixed(x)
`
	g := Analyze(projectOf(t, map[string]string{"pkg/mod.py": src, "pkg/other.py": "X = 1\n"}), Options{})
	want := map[string]string{
		"plain": "", "cont": "a container", "conts": "2 containers", "mod": "a module", "dt": "a dtype",
		"seq": "", "gen": "a container", "mixed": "a container, a module and a dtype",
	}
	var file *syntax.Node
	var fsrc []byte
	for _, f := range g.Proj.Files {
		if f.Path == "pkg/mod.py" {
			file, fsrc = f.Tree.Root, f.Src
		}
	}
	if file == nil {
		t.Fatal("no pkg/mod.py")
	}
	seen := map[string]bool{}
	syntax.Walk(file, func(n *syntax.Node) bool {
		if n.Kind() != "call" {
			return true
		}
		fn := n.Get("function")
		name := fn.Text(fsrc)
		w, ok := want[name]
		if !ok {
			return true
		}
		seen[name] = true
		if got := g.Uncallable(fn); got != w {
			t.Errorf("%s(x): uncallable %q, want %q", name, got, w)
		}
		return true
	})
	for name := range want {
		if !seen[name] {
			t.Errorf("no call of %s", name)
		}
	}
}
