package rules

import (
	"fmt"

	"github.com/cudagraph-capguard/capguard/guard/tensors"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

var ruleHostValueBaked = &Rule{
	ID: "CG102", Name: "host-value-baked", Severity: SeverityError,
	Contexts: []Context{Captured, Claimed, Launcher},
	Summary:  "a Python value read from tensor data or a CPU mirror flows into a launch argument, grid, allocation shape or slice bound in captured code",
	Doc:      doc("cg102_host_value_baked.md"),
	Run: func(p *Pass) {
		src := p.Src()
		m := newModel(p)
		// hostNames: the assignments that bind a local to a host value.
		// assumed: the locals every host binding of which rests on an
		// assumption (tensors.Assumed), with it.
		assumed := map[string]string{}
		proved := map[string]bool{}
		// under: per local, a host binding of it that runs under a
		// condition where every host binding of it does (the arm of `if
		// isinstance(scale, torch.Tensor): scale = scale.item()`); always:
		// the locals with one that runs whenever the function does.
		under := map[string]*Node{}
		always := map[string]bool{}
		hostNames, bound := tensors.HostAssignments(p.File, bodyStmts(p.Fn), m)
		binds := map[string][]*Node{}
		for _, a := range bound {
			binds[a.Name] = append(binds[a.Name], a.Stmt)
		}
		// synced: the locals every host binding of which reads a device
		// tensor (`s = int(offsets[i])`, `n = lens.sum().item()`), or
		// another such local: in captured code that read is a sync that
		// fails the capture (CG101) before any value is baked, so the
		// finding's outcome is the capture error (ReportCaptureErrorFrom).
		synced := map[string]bool{}
		for _, a := range bound {
			from, local := tensors.HostLocal(a.Why)
			ok := tensors.DeviceRead(a.Why) || local && synced[from]
			if prev, seen := synced[a.Name]; seen {
				ok = ok && prev
			}
			synced[a.Name] = ok
		}
		for _, a := range bound {
			// A local bound from another host local (`m = n * 2`) rests on
			// what n's bindings rest on.
			from, local := tensors.HostLocal(a.Why)
			if local && !proved[from] && assumed[from] != "" {
				assumed[a.Name] = assumed[from]
			} else if as, ok := tensors.Assumed(a.Why); ok {
				assumed[a.Name] = as
			} else {
				proved[a.Name] = true
			}
			switch {
			case p.Conditional(a.Stmt):
				under[a.Name] = a.Stmt
			case local && !always[from] && under[from] != nil:
				under[a.Name] = under[from]
			default:
				always[a.Name] = true
			}
		}
		reported := map[*Node]bool{}
		keeps := map[string]bool{} // replaysKeep's answers, by host local
		check := func(n *Node, where string) {
			if n == nil || reported[n] || m.Kind(n) == KTensor && where != "an allocation shape" {
				// A tensor argument is no Python value baked at capture (a
				// host tensor given to a device op is CG103's); a tensor
				// given as a size (`torch.arange(0, n * st)`) is read on
				// the host and stays one.
				return
			}
			if why := hostValue(p.File, n, hostNames, m); why != "" {
				reported[n] = true
				msg := fmt.Sprintf("host value `%s` is baked into %s at capture (%s): every replay reuses it", short(n.Text(src)), where, why)
				// A value known to be host data by its name only, or read
				// from a host tensor, is the same at every replay if it is
				// set once (a scale read at load, a configuration): an
				// assumption, not a proof.
				as, ok := tensors.Assumed(why)
				name, local := tensors.HostLocal(why)
				if local {
					keep, ok := keeps[name]
					if !ok {
						keep = replaysKeep(p, name, binds[name])
						keeps[name] = keep
					}
					if keep {
						return
					}
				}
				if !ok && local && !proved[name] && assumed[name] != "" {
					as = assumed[name]
				}
				var from *Node
				if local && !always[name] {
					from = under[name]
				}
				if tensors.DeviceRead(why) || local && synced[name] {
					p.ReportCaptureErrorFrom(n, from, msg, nil, as)
				} else {
					p.ReportFrom(n, from, msg, nil, as)
				}
			}
		}
		p.Walk(func(n *Node) bool {
			switch n.Kind() {
			case "call":
				callee := Unparen(n.Get("function"))
				args := n.Get("arguments")
				if args == nil || args.Kind() != "argument_list" {
					return true
				}
				if k, ok := p.Proj.KernelName(p.File, n); ok {
					if callee.Kind() == "subscript" {
						for _, g := range callee.All("subscript") {
							check(g, "the launch grid of `"+k+"`")
						}
					}
					for _, a := range args.NamedChildren() {
						if a.Kind() == "keyword_argument" {
							a = a.Get("value")
						}
						check(a, "an argument of kernel `"+k+"`")
					}
					return true
				}
				q := p.File.Qualify(callee)
				_, meth, _ := methodCall(n, src)
				if torchapi.HostPredicate(q) {
					return true
				}
				if (len(q) > 6 && q[:6] == "torch.") || tensorMethods[meth] {
					where := "an argument of `" + short(callee.Text(src)) + "`"
					if allocators[q] || allocators["torch."+meth] {
						where = "an allocation shape"
					}
					for _, a := range args.NamedChildren() {
						if a.Kind() == "keyword_argument" {
							if nm := a.Get("name").Text(src); nm == "device" || nm == "dtype" {
								continue
							}
							a = a.Get("value")
						}
						check(a, where)
					}
				}
			case "slice":
				if hostSliced(m, n) {
					// `counts[a:b]` of a Python list of numbers, or of a CPU
					// tensor: host work, nothing of it is in the graph (a
					// list of device tensors is sliced for the graph).
					return true
				}
				for _, b := range n.NamedChildren() {
					check(b, "a slice bound")
				}
			}
			return true
		})
	},
}

// replaysKeep: host local name, every host binding of which (binds) comes
// before the pass's capture region, holds at each replay the value the
// capture baked. The region's graph lives and replays only in this function
// (localGraphOf), is made in the block that holds the region before it (a
// loop makes a new graph each time round) and replayed only there, by calls
// after the region, and nothing from the region's start to the last replay
// binds name. A replay then runs the region's launches with the value they
// would read if the region ran again, as an eager run of it would: nothing
// is stale. (A host value read inside the region is read again by an eager
// run, from data that may have changed: not such a local.)
func replaysKeep(p *Pass, name string, binds []*Node) bool {
	r := p.Region
	if r == nil || r.Ctx != Captured || r.Node == nil || r.Node.Parent() == nil || len(binds) == 0 {
		return false
	}
	src := p.Src()
	lg := localGraphOf(p.Fn, r, src)
	if lg == nil || lg.taken || len(lg.replays) == 0 {
		return false
	}
	block := r.Node.Parent()
	in := func(n *Node) bool { return n.Start >= block.Start && n.End <= block.End }
	for _, m := range lg.made {
		if !in(m) || m.Start >= r.Node.Start {
			return false
		}
	}
	last := r.Node.End
	for _, c := range lg.replays {
		if !in(c) || c.Start < r.Node.End {
			return false
		}
		last = max(last, c.End)
	}
	for _, b := range binds {
		if b.End > r.Node.Start {
			return false
		}
	}
	for _, st := range block.NamedChildren() {
		if st.End <= r.Node.Start || st.Start > last {
			continue
		}
		if rebinds(st, name, src) || augments(st, name, src) {
			return false
		}
	}
	return true
}

// augments: n holds an augmented assignment to name (`n += 1`).
func augments(n *Node, name string, src []byte) bool {
	found := false
	Walk(n, func(x *Node) bool {
		if x.Kind() == "augmented_assignment" {
			if l := Unparen(x.Get("left")); l != nil && l.Kind() == "identifier" && l.Text(src) == name {
				found = true
			}
		}
		return !found
	})
	return found
}

// hostSliced: the slice n is of host memory whose slicing the graph never
// sees: a CPU tensor, or host data (a list from `.tolist()`, a literal of
// numbers) whose elements are no tensors.
func hostSliced(m *model, n *Node) bool {
	sub := n.Parent()
	for sub != nil && sub.Kind() != "subscript" {
		if sub.Kind() != "tuple" && sub.Kind() != "expression_list" {
			return false
		}
		sub = sub.Parent()
	}
	if sub == nil {
		return false
	}
	v := sub.Get("value")
	if v == nil {
		return false
	}
	switch m.Kind(v) {
	case KTensor:
		return m.Dev(v).Host()
	case KHostData, KHostRead:
		return m.HostList(v)
	}
	return false
}
