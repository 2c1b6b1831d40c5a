package flow

import (
	"github.com/cudagraph-capguard/capguard/guard/index"
)

// Calls a callee's signature refuses. A receiver known only loosely (an
// attribute a base class sets from its constructor's parameter, so every
// subclass's object is in it; a declared type with many subclasses) sends
// a call to every candidate's method; Python raises TypeError for a
// candidate that takes no such keyword or not that many positional
// arguments, so that candidate is not called there:
//
//	# a state-space model's runner, sharing the engine's base class
//	self.model.forward(input_ids=ids, inference_params=state)
//
// reaches no transformer's `forward(self, input_ids, position_ids,
// cu_seqlen_prefill, kv_cache, ...)`: it takes no `inference_params`. Only
// what the call surely passes counts: a `**kwargs` or `*args` at the call
// may supply anything. A required parameter the call does not pass refuses
// it too (a runner's `self.text_model.model(...)` without `adapter_data`
// reaches no model whose forward requires it). A callee whose decorators
// may change its signature (any but the transparent ones of
// torchapi.Transparent) is never refused.

// refuses reports whether f (off parameters taken by the receiver) cannot
// take the arguments of call constraint c.
func (s *solver) refuses(c *constraint, f *index.Function, off int) bool {
	if c.deco || c.root != 0 || c.args == nil && len(c.prepended()) == 0 || !s.signatureKept(f) {
		// A decoration site; a call through a partial or a container
		// (its keywords and its own arguments are not all known here).
		return false
	}
	a := c.args
	if a == nil {
		a = &callArgs{}
	}
	if len(a.kwSplat) > 0 {
		return false
	}
	varArgs, varKw := false, false
	positional := 0
	for i, p := range f.Params {
		switch p.Kind {
		case index.VarArgs:
			varArgs = true
		case index.VarKw:
			varKw = true
		case index.PosOnly, index.Positional:
			if i >= off {
				positional++
			}
		}
	}
	if !varKw {
		for _, k := range a.kw {
			if !takesKeyword(f, k.name) {
				return true
			}
		}
	}
	n := len(c.prepended())
	for i := range a.pos {
		if a.splat(i) {
			return false
		}
		n++
	}
	if !varArgs && n > positional {
		return true
	}
	// A required parameter the call gives no value: the n positional
	// arguments fill the first positional parameters, keywords the rest.
	j := 0
	for i, p := range f.Params {
		if i < off {
			continue
		}
		switch p.Kind {
		case index.VarArgs, index.VarKw:
			continue
		case index.PosOnly, index.Positional:
			if j < n {
				j++
				continue
			}
		}
		if p.Default == nil && !(p.Kind != index.PosOnly && passesKeyword(a, p.Name)) {
			return true
		}
	}
	return false
}

// takesKeyword: f has a parameter a call may pass as name=... (a
// positional-or-keyword or keyword-only one).
func takesKeyword(f *index.Function, name string) bool {
	for _, p := range f.Params {
		if p.Name == name && (p.Kind == index.Positional || p.Kind == index.KwOnly) {
			return true
		}
	}
	return false
}

// passesKeyword: the call passes name=... .
func passesKeyword(a *callArgs, name string) bool {
	for _, k := range a.kw {
		if k.name == name {
			return true
		}
	}
	return false
}

// signatureKept: every decorator of f keeps its parameters (memoized).
func (s *solver) signatureKept(f *index.Function) bool {
	if len(f.Decorators) == 0 {
		return true
	}
	if v, ok := s.sigKept[f]; ok {
		return v
	}
	ok := true
	for _, d := range f.Decorators {
		e := decoratorExpr(d)
		if e == nil || !s.keeps(f.File, e) {
			ok = false
			break
		}
	}
	if s.sigKept == nil {
		s.sigKept = map[*index.Function]bool{}
	}
	s.sigKept[f] = ok
	return ok
}
