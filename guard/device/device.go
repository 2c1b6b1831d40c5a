// Package device evaluates tests of the device type under the device a
// graph is captured on.
//
// Engines and kernel libraries pick code by device type:
//
//	if device_type == 'cuda':
//	    return CudaOpsBackend
//	if device_type == 'ascend':
//	    return AscendOpsBackend
//
// A CUDA graph runs on a CUDA device, so under capture the Ascend branch is
// dead and the CUDA one is taken. Without that, a context-insensitive
// analysis gives the captured call every backend, and rules report the
// Ascend backend's host syncs as captured. A test is read only when one
// side is a string literal (or a tuple, list or set of them) that names a
// device type torch or a vendor plugin uses ("cuda", "cpu", "npu", "xpu",
// "hpu", "mps", "mlu", ...): `x == 'npu'`, `'npu' != x`, `x in ('npu',
// 'xpu')`, `x not in (...)`, `x.startswith('cuda')`. Anything else is
// unknown. "rocm" and "hip" are not device types (ROCm builds of torch use
// "cuda") and stay unknown.
package device

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// Truth is what a condition is on the target device.
type Truth uint8

const (
	Unknown Truth = iota
	True
	False
)

// Default is the device CUDA graphs run on.
const Default = "cuda"

// Known are the device type names a test may compare against. "ascend",
// "camb", "maca" and "gcu" are vendor plugins' names for their devices.
var Known = map[string]bool{
	"cuda": true, "cpu": true, "npu": true, "ascend": true, "xpu": true, "hpu": true,
	"mps": true, "mlu": true, "camb": true, "maca": true, "musa": true, "gcu": true,
	"dcu": true, "ipu": true, "xla": true, "tpu": true, "meta": true, "vulkan": true,
}

// Eval evaluates cond on the target device ("" is Default): a device-type
// test, or `not`, `and` and `or` of them.
func Eval(cond *syntax.Node, src []byte, target string) Truth {
	if target == "" {
		target = Default
	}
	cond = syntax.Unparen(cond)
	if cond == nil {
		return Unknown
	}
	switch cond.Kind() {
	case "not_operator":
		return not(Eval(cond.Get("argument"), src, target))
	case "boolean_operator":
		l, r := Eval(cond.Get("left"), src, target), Eval(cond.Get("right"), src, target)
		if cond.Operator(src) == "and" {
			switch {
			case l == False || r == False:
				return False
			case l == True && r == True:
				return True
			}
			return Unknown
		}
		switch {
		case l == True || r == True:
			return True
		case l == False && r == False:
			return False
		}
		return Unknown
	case "comparison_operator":
		return compare(cond, src, target)
	case "call":
		return startsWith(cond, src, target)
	case "attribute":
		// `x.is_cuda`: a tensor's device-type flag, as `x.device.type ==
		// "cuda"` is.
		if a := cond.Get("attribute"); a != nil && a.Text(src) == "is_cuda" {
			if target == "cuda" {
				return True
			}
			return False
		}
	}
	return Unknown
}

func not(t Truth) Truth {
	switch t {
	case True:
		return False
	case False:
		return True
	}
	return Unknown
}

// compare reads `x == 'd'`, `x != 'd'`, `x in (...)`, `x not in (...)`
// (either side the literal for == and !=).
func compare(cond *syntax.Node, src []byte, target string) Truth {
	kids := cond.NamedChildren()
	if len(kids) != 2 {
		return Unknown
	}
	op := cond.Operator(src)
	switch op {
	case "==", "!=", "is", "is not":
		d, ok := name(kids[1], src)
		if _, lit := name(kids[0], src); lit {
			if ok {
				return Unknown // two literals: not a test of the device
			}
			d, ok = name(kids[0], src)
		}
		if !ok {
			return Unknown
		}
		t := False
		if d == target {
			t = True
		}
		if op == "!=" || op == "is not" {
			t = not(t)
		}
		return t
	case "in", "not in":
		set := syntax.Unparen(kids[1])
		if set == nil || !set.Is("tuple", "list", "set") || len(set.NamedChildren()) == 0 {
			return Unknown
		}
		t := False
		for _, e := range set.NamedChildren() {
			d, ok := name(e, src)
			if !ok {
				return Unknown
			}
			if d == target {
				t = True
			}
		}
		if op == "not in" {
			t = not(t)
		}
		return t
	}
	return Unknown
}

// startsWith reads `x.startswith('d')` (a device string such as "cuda:0").
func startsWith(call *syntax.Node, src []byte, target string) Truth {
	fn := syntax.Unparen(call.Get("function"))
	if fn == nil || fn.Kind() != "attribute" || fn.Get("attribute").Text(src) != "startswith" {
		return Unknown
	}
	args := call.Get("arguments")
	if args == nil || len(args.NamedChildren()) != 1 {
		return Unknown
	}
	d, ok := name(args.NamedChildren()[0], src)
	if !ok {
		return Unknown
	}
	if d == target {
		return True
	}
	return False
}

// name is a string literal naming a known device type ("cuda:0" names cuda).
func name(n *syntax.Node, src []byte) (string, bool) {
	n = syntax.Unparen(n)
	if n == nil || n.Kind() != "string" {
		return "", false
	}
	t := n.Text(src)
	// A plain literal only: no prefix (f-strings), one quote kind.
	if len(t) < 2 || (t[0] != '\'' && t[0] != '"') || strings.ContainsAny(t[1:len(t)-1], "'\"\\{") {
		return "", false
	}
	s := strings.ToLower(t[1 : len(t)-1])
	if i := strings.IndexByte(s, ':'); i > 0 {
		s = s[:i]
	}
	return s, Known[s]
}

// Dead says whether statement n (inside fn's body, stopping at body) is on
// a branch the target device never takes: inside the consequence of an
// `if`/`elif` whose test is False, or inside an `elif`/`else` after a test
// that is True.
func Dead(n, body *syntax.Node, src []byte, target string) bool {
	for x := n; x != nil && x != body; x = x.Parent() {
		p := x.Parent()
		if p == nil {
			return false
		}
		switch {
		case (p.Kind() == "if_statement" || p.Kind() == "elif_clause") && x.Field() == "consequence":
			if Eval(p.Get("condition"), src, target) == False {
				return true
			}
		case x.Kind() == "elif_clause" || x.Kind() == "else_clause":
			if p.Kind() != "if_statement" {
				continue // a for/while/try else
			}
			// Any earlier test of the chain that is True takes the branch.
			if Eval(p.Get("condition"), src, target) == True {
				return true
			}
			for _, c := range p.Children() {
				if c == x {
					break
				}
				if c.Kind() == "elif_clause" && Eval(c.Get("condition"), src, target) == True {
					return true
				}
			}
		}
	}
	return false
}
