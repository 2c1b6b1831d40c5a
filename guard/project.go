package guard

import (
	"strings"
)

// Project is every file of one run, indexed by module name, with the call
// resolution the context analysis needs.
type Project struct {
	Files    []*File
	byModule map[string]*File
	// load parses a module that the prefilter skipped, on demand (a helper
	// module with no torch import that a captured function calls into).
	load func(module string) *File
	// methodsByName indexes every method of every class by its name, for
	// the unique-name policy on receivers of unknown type.
	methodsByName map[string][]*Function
	cfg           *Config
	// The config's patterns with presets and built-ins, worked out once:
	// kernelName asks for kernelOps at every call node.
	captured, replayPrep, kernelOps []string
}

func newProject(cfg *Config) *Project {
	return &Project{byModule: map[string]*File{}, methodsByName: map[string][]*Function{}, cfg: cfg,
		captured: cfg.captured(), replayPrep: cfg.replayPrep(), kernelOps: cfg.kernelOps()}
}

func (p *Project) add(f *File) {
	p.Files = append(p.Files, f)
	if _, dup := p.byModule[f.Module]; !dup {
		p.byModule[f.Module] = f
	}
	for _, fn := range f.Funcs {
		if fn.Class != nil && fn.Outer == nil {
			p.methodsByName[fn.Name] = append(p.methodsByName[fn.Name], fn)
		}
	}
}

func (p *Project) module(name string) *File {
	if f, ok := p.byModule[name]; ok {
		return f
	}
	if p.load != nil {
		if f := p.load(name); f != nil {
			return f
		}
	}
	return nil
}

// qualify returns the dotted name an expression denotes through the file's
// imports: `tc.graph` -> "torch.cuda.graph" after `import torch.cuda as tc`.
// Names that are not imports qualify to themselves; "" for anything else.
func (f *File) qualify(n *Node) string {
	n = Unparen(n)
	if n == nil {
		return ""
	}
	switch n.Kind {
	case "identifier":
		name := n.Text(f.Src)
		if q, ok := f.Imports[name]; ok {
			return q
		}
		return name
	case "attribute":
		obj := n.Get("object")
		// import a.b.c binds "a.b.c" too; prefer the longest import.
		if full, ok := f.Imports[n.Text(f.Src)]; ok {
			return full
		}
		base := f.qualify(obj)
		if base == "" {
			return ""
		}
		return base + "." + n.Get("attribute").Text(f.Src)
	}
	return ""
}

// resolveDotted finds the project function (or class) a dotted name denotes.
func (p *Project) resolveDotted(dotted string, depth int) (*Function, *Class) {
	if dotted == "" || depth > 4 {
		return nil, nil
	}
	parts := strings.Split(dotted, ".")
	for i := len(parts) - 1; i >= 1; i-- {
		mod := strings.Join(parts[:i], ".")
		f := p.module(mod)
		if f == nil {
			continue
		}
		rest := strings.Join(parts[i:], ".")
		if fn, ok := f.ByQual[rest]; ok {
			return fn, nil
		}
		if c, ok := f.Classes[rest]; ok {
			return nil, c
		}
		// Re-exported through the module's imports (package __init__).
		if q, ok := f.Imports[parts[i]]; ok {
			return p.resolveDotted(join(q, strings.Join(parts[i+1:], ".")), depth+1)
		}
		return nil, nil
	}
	return nil, nil
}

// classOf resolves a class expression (the callee of a constructor call).
func (p *Project) classOf(f *File, n *Node) *Class {
	n = Unparen(n)
	if n == nil {
		return nil
	}
	if n.Kind == "identifier" {
		name := n.Text(f.Src)
		if c, ok := f.Classes[name]; ok {
			return c
		}
	}
	_, c := p.resolveDotted(f.qualify(n), 0)
	return c
}

// method finds a method by name on a class or, in order, its project bases.
func (p *Project) method(c *Class, name string) *Function {
	seen := map[*Class]bool{}
	var visit func(c *Class) *Function
	visit = func(c *Class) *Function {
		if c == nil || seen[c] {
			return nil
		}
		seen[c] = true
		if m, ok := c.Methods[name]; ok {
			return m
		}
		for _, b := range c.Bases {
			if m := visit(p.classOf(c.File, b)); m != nil {
				return m
			}
		}
		return nil
	}
	return visit(c)
}

// attrClass is the class of self.<attr>, from a constructor assignment in
// any method of the class or its bases.
func (p *Project) attrClass(c *Class, attr string) *Class {
	seen := map[*Class]bool{}
	for c != nil && !seen[c] {
		seen[c] = true
		if ctors, ok := c.Attrs[attr]; ok {
			// The first assignment that names a project class: a later
			// `self.m = make_graphed_callables(self.m, ...)` keeps m's class.
			for _, ctor := range ctors {
				if k := p.classOf(c.File, ctor); k != nil {
					return k
				}
			}
			return nil
		}
		var next *Class
		for _, b := range c.Bases {
			if bc := p.classOf(c.File, b); bc != nil {
				next = bc
				break
			}
		}
		c = next
	}
	return nil
}

// commonMethodNames are never resolved by the unique-name policy: they are
// PyTorch tensor or module methods, or too generic to mean one function.
var commonMethodNames = map[string]bool{
	"forward": true, "__call__": true, "__init__": true, "to": true, "view": true, "copy_": true,
	"reshape": true, "contiguous": true, "clone": true, "item": true, "tolist": true, "cpu": true,
	"cuda": true, "numpy": true, "size": true, "dim": true, "get": true, "set": true, "update": true,
	"append": true, "extend": true, "pop": true, "add": true, "run": true, "call": true, "apply": true,
	"fill_": true, "zero_": true, "index_select": true, "gather": true, "scatter_": true, "sum": true,
	"max": true, "min": true, "mean": true, "replay": true, "capture_begin": true, "capture_end": true,
	"items": true, "keys": true, "values": true, "format": true, "join": true, "split": true, "close": true,
	"init": true, "build": true, "step": true, "reset": true, "clear": true, "copy": true,
}

// resolveCall returns the project function a call reaches, or nil.
//
// Policy for receivers of unknown type (documented in README, "How capguard
// follows calls"): `obj.m(...)` where nothing tells the class of obj is
// followed only when exactly one class in the project defines a method m and
// m is not a common tensor/module/container method name; otherwise the edge
// is dropped. This keeps the call graph free of guessed edges (no false
// captured context) at the price of missing some; configured entry points and
// presets name the framework methods that this policy cannot reach.
func (p *Project) resolveCall(fn *Function, call *Node, locals map[string]*Node) *Function {
	f := fn.File
	callee := Unparen(call.Get("function"))
	if callee == nil {
		return nil
	}
	switch callee.Kind {
	case "identifier":
		name := callee.Text(f.Src)
		// A nested def in this function or an enclosing one.
		for o := fn; o != nil; o = o.Outer {
			if g, ok := f.ByQual[o.Qual+"."+name]; ok {
				return g
			}
		}
		if ctor, ok := locals[name]; ok {
			if c := p.classOf(f, ctor); c != nil {
				return p.callable(c)
			}
		}
		if g, ok := f.ByQual[name]; ok {
			return g
		}
		if c, ok := f.Classes[name]; ok {
			return p.method(c, "__init__")
		}
		if q, ok := f.Imports[name]; ok {
			g, c := p.resolveDotted(q, 0)
			if g != nil {
				return g
			}
			if c != nil {
				return p.method(c, "__init__")
			}
		}
		return nil
	case "attribute":
		obj := Unparen(callee.Get("object"))
		meth := callee.Get("attribute").Text(f.Src)
		self := fn.Self()
		switch {
		case obj.Kind == "identifier" && self != "" && obj.Text(f.Src) == self:
			if m := p.method(fn.Owner(), meth); m != nil {
				return m
			}
			if c := p.attrClass(fn.Owner(), meth); c != nil {
				return p.callable(c) // self.rotary(x)
			}
			return nil
		case obj.Kind == "call" && Unparen(obj.Get("function")).Text(f.Src) == "super" && fn.Owner() != nil:
			for _, b := range fn.Owner().Bases {
				if m := p.method(p.classOf(f, b), meth); m != nil {
					return m
				}
			}
			return nil
		case obj.Kind == "attribute" && self != "" && isName(obj.Get("object"), self, f.Src):
			if c := p.attrClass(fn.Owner(), obj.Get("attribute").Text(f.Src)); c != nil {
				return p.method(c, meth)
			}
		case obj.Kind == "identifier":
			if ctor, ok := locals[obj.Text(f.Src)]; ok {
				if c := p.classOf(f, ctor); c != nil {
					return p.method(c, meth)
				}
			}
			if _, ok := f.Imports[obj.Text(f.Src)]; ok {
				g, c := p.resolveDotted(f.qualify(callee), 0)
				if g != nil {
					return g
				}
				if c != nil {
					return p.method(c, "__init__")
				}
				return nil
			}
		}
		if q := f.qualify(callee); q != "" {
			if g, _ := p.resolveDotted(q, 0); g != nil {
				return g
			}
		}
		if commonMethodNames[meth] {
			return nil
		}
		if cands := p.methodsByName[meth]; len(cands) == 1 {
			return cands[0]
		}
	}
	return nil
}

// callable is what calling an instance runs: forward for nn.Modules, else __call__.
func (p *Project) callable(c *Class) *Function {
	if m := p.method(c, "forward"); m != nil {
		return m
	}
	return p.method(c, "__call__")
}

// constructorLocals maps local names assigned from a call to the callee
// (`runner = GraphRunner(...)` -> the `GraphRunner` node), for method calls
// on locals of known class.
func constructorLocals(fn *Function) map[string]*Node {
	out := map[string]*Node{}
	forEachCallAssignment(fn.Body, func(l, call *Node) {
		if fnode := Unparen(call.Get("function")); l.Kind == "identifier" && fnode != nil && fnode.Is("identifier", "attribute") {
			out[l.Text(fn.File.Src)] = fnode
		}
	})
	return out
}
