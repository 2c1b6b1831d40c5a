package flow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// synthProject makes an engine-shaped project of n model modules: each a
// decoder of layers in a ModuleList built by a comprehension, attention
// and MLP modules from a constant-keyed backend factory, a registry that
// maps names to model classes, and a graph runner that receives the
// decode function as a parameter. It exercises what real engines make the
// fixpoint do: field loads through self, container elements, guarded
// returns, higher-order calls, class hierarchies.
func synthProject(tb testing.TB, n int) *index.Project {
	tb.Helper()
	files := map[string]string{
		"eng/__init__.py": "",
		"eng/backend.py": `import torch


class AttnImpl:
    def forward(self, q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2), -1) @ v


class FlashImpl(AttnImpl):
    def forward(self, q, k, v):
        return super().forward(q, k, v) * 1.0


class MLPImpl:
    def forward(self, x):
        return torch.relu(x)


def get_impl(kind):
    if kind == "attn":
        return FlashImpl()
    elif kind == "mlp":
        return MLPImpl()
    return AttnImpl()
`,
		"eng/runner.py": `import functools

import torch

from eng.registry import MODELS


class GraphRunner:
    def __init__(self, name):
        self.model = MODELS[name]()
        self.graph = torch.cuda.CUDAGraph()

    def capture_with(self, decode, x):
        with torch.cuda.graph(self.graph):
            self.out = decode(x)

    def capture(self, x):
        self.capture_with(functools.partial(self.model.forward), x)
`,
	}
	var reg []string
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("eng/models/m%d.py", i)] = strings.ReplaceAll(`import torch
from torch import nn

from eng.backend import get_impl


class AttentionN(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.impl = get_impl("attn")
        self.qkv = nn.Linear(d, 3 * d)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        return self.impl.forward(q, k, v)


class MLPN(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.impl = get_impl("mlp")

    def forward(self, x):
        return self.impl.forward(x)


class LayerN(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attn = AttentionN(d)
        self.mlp = MLPN(d)

    def forward(self, x):
        return x + self.mlp(x + self.attn(x))


class ModelN(nn.Module):
    def __init__(self, d=64, layers=4):
        super().__init__()
        self.layers = nn.ModuleList([LayerN(d) for _ in range(layers)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
`, "N", fmt.Sprint(i))
		reg = append(reg, fmt.Sprintf("from eng.models.m%d import Model%d\n", i, i))
	}
	var sb strings.Builder
	sb.WriteString(strings.Join(reg, ""))
	sb.WriteString("\nMODELS = {\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "    \"m%d\": Model%d,\n", i, i)
	}
	sb.WriteString("}\n")
	files["eng/registry.py"] = sb.String()
	return projectAt(tb, "/bench", files)
}

// BenchmarkAnalyze measures the points-to fixpoint and call graph of a
// 200-model engine-shaped project (about 10k lines).
func BenchmarkAnalyze(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := synthProject(b, 200)
		b.StartTimer()
		Analyze(p, Options{})
	}
}

// The synthetic project's decode chain is resolved end to end: the
// runner's capture reaches every model's attention implementation through
// the registry, the ModuleList, the constant-keyed factory and super(),
// and the MLP gets only the MLP implementation.
func TestSynthProjectReach(t *testing.T) {
	p := synthProject(t, 3)
	g := Analyze(p, Options{})
	edges := map[string]bool{}
	for f, es := range g.Out {
		for _, e := range es {
			edges[f.FullName()+" -> "+e.Callee.FullName()] = true
		}
	}
	for _, want := range []string{
		"eng.models.m1.Model1.forward -> eng.models.m1.Layer1.forward",
		"eng.models.m1.Layer1.forward -> eng.models.m1.Attention1.forward",
		"eng.models.m1.Attention1.forward -> eng.backend.FlashImpl.forward",
		"eng.backend.FlashImpl.forward -> eng.backend.AttnImpl.forward",
		"eng.models.m2.MLP2.forward -> eng.backend.MLPImpl.forward",
		"eng.runner.GraphRunner.capture_with -> eng.models.m0.Model0.forward",
	} {
		if !edges[want] {
			t.Errorf("missing %s", want)
		}
	}
	for _, bad := range []string{
		"eng.models.m2.MLP2.forward -> eng.backend.FlashImpl.forward",
		"eng.models.m1.Attention1.forward -> eng.backend.MLPImpl.forward",
	} {
		if edges[bad] {
			t.Errorf("wrong edge %s (the factory's constant branch)", bad)
		}
	}
}

// BenchmarkValues measures the queries the later layers make of every
// call site: Values and CallTargets of its callee, and EachValue.
func BenchmarkValues(b *testing.B) {
	p := synthProject(b, 200)
	g := Analyze(p, Options{})
	var callees []*syntax.Node
	for _, f := range p.Files {
		syntax.Walk(f.Tree.Root, func(n *syntax.Node) bool {
			if n.Kind() == "call" {
				callees = append(callees, n.Get("function"))
			}
			return true
		})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range callees {
			g.Values(c)
			g.CallTargets(c)
			g.EachValue(c, func(VKind, string) {})
		}
	}
}
