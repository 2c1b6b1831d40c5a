package flow

import (
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// TestKernelBodyBuildsNothing: a Triton kernel's body is device code, so
// the solve makes no constraints for it (no node for what it binds, no
// call edge out of it), while its name still holds the kernel where it is
// defined and launched.
func TestKernelBodyBuildsNothing(t *testing.T) {
	src := `import triton
import triton.language as tl


def host_helper(x):
    return x


@triton.jit
def kern(X, N: tl.constexpr):
    inside = host_helper(X)
    tl.store(X, inside)


def launch(x):
    k = kern
    k[(1,)](x, 4)
    return host_helper(x)
`
	g := Analyze(projectOf(t, map[string]string{"pkg/mod.py": src}), Options{})
	var inside, k *syntax.Node
	for _, f := range g.Proj.Files {
		if f.Path != "pkg/mod.py" {
			continue
		}
		syntax.Walk(f.Tree.Root, func(n *syntax.Node) bool {
			if n.Kind() == "identifier" && n.Parent() != nil && n.Parent().Kind() == "assignment" && n.Parent().Get("left") == n {
				switch n.Text(f.Src) {
				case "inside":
					inside = n
				case "k":
					k = n
				}
			}
			return true
		})
		for _, fn := range f.Funcs {
			for _, e := range g.Out[fn] {
				if fn.Name == "kern" {
					t.Errorf("call edge out of the kernel's body: %s -> %s", fn.FullName(), e.Callee.FullName())
				}
			}
		}
	}
	if inside == nil || k == nil {
		t.Fatal("fixture names not found")
	}
	if vs := g.Values(inside); len(vs) != 0 {
		t.Errorf("a name the kernel's body binds has values %v; want none (no constraints for device code)", vs)
	}
	vs := g.Values(k)
	if len(vs) != 1 || vs[0].Kind != VKernel {
		t.Errorf("k = kern holds %v; want the kernel", vs)
	}
}
