package tensors

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/index"
)

// TestValueModel checks the device and kind of the right side of every
// assignment annotated `# dev: D` and/or `# kind: K`.
func TestValueModel(t *testing.T) {
	src := `import torch
import numpy as np
PAGE = 16


def f(x, n: int, t: torch.Tensor, dev, lst, sizes: Sequence[int] | None = None, pair: Optional[Tuple[int, ...]] = None, maybe: Optional[List[torch.Tensor]] = None):
    a = torch.zeros(4, device="cuda")  # dev: cuda kind: tensor
    b = torch.tensor([1, 2])  # dev: cpu kind: tensor
    c = b.cuda()  # dev: cuda
    d = a.cpu()  # dev: cpu
    e = b.pin_memory()  # dev: pinned
    g = torch.tensor(lst, pin_memory=True)  # dev: pinned
    h = g.to(dev, non_blocking=True)  # dev: unknown
    i = g.to("cuda")  # dev: cuda
    j = a.to(torch.int32)  # dev: cuda kind: tensor
    k = x.shape[0]  # kind: metadata
    l = x.size(1) * 2 + len(lst)  # kind: metadata
    m = x.max().item()  # kind: host read
    o = int(a.max())  # kind: host read
    p = int(n)  # kind: metadata
    q = a.tolist()  # kind: host read
    r = a + b  # dev: cuda
    s = b * 2  # dev: cpu
    u = torch.empty_like(a)  # dev: cuda
    v = torch.arange(8, device=a.device)  # dev: cuda
    w, y = a.chunk(2)
    z = w  # dev: cuda kind: tensor
    aa = x.dtype  # kind: metadata
    bb = torch.from_numpy(np.zeros(3))  # dev: cpu
    cc = np.zeros(3)  # kind: host data
    dd = PAGE * 2  # kind: metadata
    ee = torch.equal(a, a)  # kind: host read
    ff = t  # kind: tensor
    gg = x.numel()  # kind: metadata
    hh = x.contiguous()  # kind: tensor
    with torch.device("cuda"):
        ii = torch.ones(3)  # dev: cuda
    jj = torch.cat([a, a])  # dev: cuda
    kk = [1, 2, 3]  # kind: host data
    ll = sizes  # kind: host data
    mm = pair  # kind: host data
    nn = int(sizes[0])  # kind: unknown
    oo = maybe  # kind: unknown
    for i2 in range(n):
        pp = i2  # kind: metadata
        qq = (10 ** i2) * b  # dev: cpu
    for i3 in range(a.sum().item()):
        rr = i3  # kind: host read
    for i4 in lst:
        ss = i4  # kind: unknown


class S:
    def __init__(self):
        self.buf = torch.zeros(8, device="cuda")
        self.host = torch.zeros(8)

    def use(self):
        a = self.buf  # dev: cuda kind: tensor
        b = self.host  # dev: cpu


def opt(x: Optional[torch.Tensor] = None, y: "torch.Tensor | None" = None, z: Optional[int] = None):
    a = x  # kind: unknown
    if x is not None and z:
        b = x  # kind: tensor
    c = x if x is not None else y  # kind: tensor
    if y is None:
        d = y  # kind: unknown
    else:
        e = y  # kind: unknown
    if x is None:
        return None
    f = x  # kind: tensor
    g = z  # kind: metadata
`
	tree, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := index.NewFile("t.py", "/t.py", "t", []byte(src), tree)
	index.NewProject([]*File{f})
	re := regexp.MustCompile(`#\s*(?:dev:\s*(\w+))?\s*(?:kind:\s*([\w ]+))?$`)
	checked := 0
	for _, fn := range f.Funcs {
		m := NewModel(&Pass{File: f, Fn: fn})
		walkCode(fn.BodyStmts(), func(n *Node) bool {
			if n.Kind() != "assignment" {
				return true
			}
			line, _ := f.Pos(int(n.Start))
			text := strings.Split(src, "\n")[line-1]
			mm := re.FindStringSubmatch(text)
			if mm == nil || !strings.Contains(text, "#") {
				return true
			}
			r := n.Get("right")
			if mm[1] != "" {
				checked++
				if got := m.Dev(r).String(); got != mm[1] {
					t.Errorf("line %d: %s: device %s, want %s", line, strings.TrimSpace(text), got, mm[1])
				}
			}
			if k := strings.TrimSpace(mm[2]); k != "" {
				checked++
				if got := m.Kind(r).String(); got != k {
					t.Errorf("line %d: %s: kind %s, want %s", line, strings.TrimSpace(text), got, k)
				}
			}
			return true
		})
	}
	if checked < 30 {
		t.Fatalf("only %d checks ran", checked)
	}
}

func TestDefaultDevice(t *testing.T) {
	for _, c := range []struct {
		src  string
		want Device
	}{
		{"import torch\nx = 1\n", DevCPU},
		{"import torch\ntorch.set_default_device('cuda')\n", DevCUDA},
		{"import torch\ntorch.set_default_device(dev)\n", DevUnknown},
		{"import torch\ntorch.set_default_tensor_type(torch.cuda.FloatTensor)\n", DevCUDA},
	} {
		tree, _ := Parse([]byte(c.src))
		f := index.NewFile("t.py", "/t.py", "t", []byte(c.src), tree)
		index.NewProject([]*File{f})
		if got := fileDefaultDevice(f); got != c.want {
			t.Errorf("%q: %s, want %s", c.src, got, c.want)
		}
	}
}

// The passes over one function that share a file's facts (every rule in
// every context) share its model, and so what it has worked out; passes
// with facts of their own, or over another function, do not.
func TestPassesShareModel(t *testing.T) {
	src := "def f(x):\n    n = x.max().item()\n    return n\n\n\ndef g(y):\n    return y\n"
	tree, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := index.NewFile("t.py", "/t.py", "t", []byte(src), tree)
	index.NewProject([]*File{f})
	fn, other := f.Funcs[0], f.Funcs[1]
	facts := NewFileFacts()
	first := NewModel(&Pass{File: f, Fn: fn, Facts: facts, Ctx: "captured"})
	if got := first.Kind(fn.BodyStmts()[0].NamedChildren()[0].Get("right")).String(); got != "host read" {
		t.Fatalf("kind of x.max().item(): %s", got)
	}
	if again := NewModel(&Pass{File: f, Fn: fn, Facts: facts, Ctx: "replay-prep"}); again != first {
		t.Errorf("a second pass over f with the file's facts has a model of its own")
	}
	if NewModel(&Pass{File: f, Fn: fn, Facts: NewFileFacts()}) == first || NewModel(&Pass{File: f, Fn: fn}) == first {
		t.Errorf("a pass with facts of its own shares the model")
	}
	if NewModel(&Pass{File: f, Fn: other, Facts: facts}) == first {
		t.Errorf("g's pass has f's model")
	}
}
