package flow

import (
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// Uncallable says which values of expression n no call can take, where n
// is a call's callee: a container (a list, tuple, dict or set made at a
// site, a generator, a namespace), a module, a dtype. A program that
// calls n never has them there (the call would raise), so where the
// solve finds them it merged flows at n that never meet in a run: one
// abstract object for every instance of a class, a return that hands
// every caller what any caller passed in, a parameter normalised with
// `x = (x,)`. It returns a phrase naming the uncallable ones ("22
// containers and 4 dtypes"), or "" when every value can be called.
// nn.Sequential (called through its elements), a container widened into
// the summary one (which may stand for one) and a tensor (the value
// model's stand-in for what it cannot type) are not counted.
func (g *Graph) Uncallable(n *syntax.Node) (what string) {
	id, ok := g.s.expr(n)
	if !ok {
		id, ok = g.s.expr(syntax.Unparen(n))
	}
	if !ok || id < 0 {
		return ""
	}
	var conts, mods, dtypes int
	g.pts[id].each(func(v VID, _ uint8) {
		val := &g.s.values[v]
		switch val.Kind {
		case VCont:
			if val.Tag != tagSequential && val.Tag != 255 {
				conts++
			}
		case VModule:
			mods++
		case VExt, VExtInst:
			if torchapi.Dtypes[val.Ext] {
				dtypes++
			}
		}
	})
	var parts []string
	for _, c := range []struct {
		n          int
		one, other string
	}{{conts, "a container", "containers"}, {mods, "a module", "modules"}, {dtypes, "a dtype", "dtypes"}} {
		switch {
		case c.n == 1:
			parts = append(parts, c.one)
		case c.n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.other))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return parts[0]
}
