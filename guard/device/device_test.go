package device

import (
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// cond parses `if <expr>: pass` and returns the condition.
func cond(t *testing.T, expr string) (*syntax.Node, []byte) {
	t.Helper()
	src := []byte("if " + expr + ":\n    pass\n")
	tree, err := syntax.Parse(src)
	if err != nil || tree.Syntax != "" {
		t.Fatalf("%s: %v %s", expr, err, tree.Syntax)
	}
	var c *syntax.Node
	syntax.Walk(tree.Root, func(n *syntax.Node) bool {
		if n.Kind() == "if_statement" && c == nil {
			c = n.Get("condition")
		}
		return c == nil
	})
	return c, src
}

func TestEval(t *testing.T) {
	for _, c := range []struct {
		expr   string
		target string
		want   Truth
	}{
		{"device_type == 'cuda'", "", True},
		{"device_type == 'npu'", "", False},
		{"'ascend' == ctx.device_type", "", False},
		{"device_type != 'cuda'", "", False},
		{"device_type != 'cpu'", "", True},
		{"x.device.type == \"cpu\"", "", False},
		{"device in ('npu', 'xpu')", "", False},
		{"device in ('cuda', 'npu')", "", True},
		{"device not in ('npu', 'xpu')", "", True},
		{"str(device).startswith('cuda')", "", True},
		{"device.startswith('npu')", "", False},
		{"device == 'cuda:0'", "", True},
		{"device_type == 'npu'", "npu", True},
		{"device_type == 'cuda'", "npu", False},
		{"not device_type == 'npu'", "", True},
		{"device_type == 'npu' and flag", "", False},
		{"device_type == 'npu' or flag", "", Unknown},
		{"device_type == 'cuda' or flag", "", True},
		// Not device tests: unknown.
		{"mode == 'decode'", "", Unknown},
		{"device_type == 'rocm'", "", Unknown},
		{"'cuda' == 'npu'", "", Unknown},
		{"device in names", "", Unknown},
		{"device in ('cuda', other)", "", Unknown},
		{"f'{x}' == 'cuda'", "", True}, // any expression against a device name
		{"flag", "", Unknown},
	} {
		n, src := cond(t, c.expr)
		if got := Eval(n, src, c.target); got != c.want {
			t.Errorf("Eval(%s, %q) = %d, want %d", c.expr, c.target, got, c.want)
		}
	}
}

func TestDead(t *testing.T) {
	src := []byte(`def pick(device_type):
    if device_type == 'npu':
        return 1
    elif device_type == 'cuda':
        return 2
    elif device_type == 'xpu':
        return 3
    else:
        return 4
    return 5
`)
	tree, err := syntax.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var body *syntax.Node
	var rets []*syntax.Node
	syntax.Walk(tree.Root, func(n *syntax.Node) bool {
		if n.Kind() == "function_definition" {
			body = n.Get("body")
		}
		if n.Kind() == "return_statement" {
			rets = append(rets, n)
		}
		return true
	})
	want := []bool{true, false, true, true, false}
	for i, r := range rets {
		if got := Dead(r, body, src, ""); got != want[i] {
			t.Errorf("return %d: dead %v, want %v", i+1, got, want[i])
		}
	}
}
