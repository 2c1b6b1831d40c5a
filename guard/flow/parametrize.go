package flow

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

// A test parametrized over constants calls a constant-dispatch function
// with one of them:
//
//	@pytest.mark.parametrize("kind", ["Linear", "LayerNormLinear"])
//	def test_replay(kind):
//	    module = make_module(kind, ...)   # returns under `if kind == "..."`
//
// The argument is not a literal, but its values are: the call takes the
// returns of those constants' branches only (admits), not every module
// kind the factory can build.

// constSep separates the constants of an argument that may be any of
// several (callArgs.consts, kwArg.konst).
const constSep = "\x00"

// argConstText is constText of a call argument, or for a parameter of the
// calling function that a parametrize decorator binds to constants (and
// that the body never rebinds), those constants joined by constSep.
func (s *solver) argConstText(sc scope, a *Node, src []byte) string {
	if k := constText(a, src); k != "" {
		return k
	}
	a = syntax.Unparen(a)
	fn := sc.fn
	if a == nil || a.Kind() != "identifier" || fn == nil || fn.Kind == index.TopLevel || sc.cls != nil {
		return ""
	}
	name := a.Text(src)
	vals := s.parametrized(fn)[name]
	if len(vals) == 0 || s.rebound(fn)[name] {
		return ""
	}
	return strings.Join(vals, constSep)
}

// parametrized maps each parameter of fn that its parametrize decorators
// bind to a list of constants to those constants (memoized).
func (s *solver) parametrized(fn *index.Function) map[string][]string {
	if m, ok := s.paramConsts[fn]; ok {
		return m
	}
	var m map[string][]string
	if s.paramConsts == nil {
		s.paramConsts = map[*index.Function]map[string][]string{}
	}
	defer func() { s.paramConsts[fn] = m }()
	if fn.Def == nil || fn.Def.Parent() == nil || fn.Def.Parent().Kind() != "decorated_definition" {
		return m
	}
	isParam := map[string]bool{}
	for _, p := range fn.Params {
		isParam[p.Name] = true
	}
	src := fn.File.Src
	for _, d := range fn.Def.Parent().NamedChildren() {
		if d.Kind() != "decorator" {
			continue
		}
		call := syntax.Unparen(decoratorExpr(d))
		if call == nil || call.Kind() != "call" || !torchapi.Parametrize[syntax.Unparen(call.Get("function")).Text(src)] {
			continue
		}
		names, values, ok := parametrizeArgs(call, src)
		if !ok {
			continue
		}
		for i, name := range names {
			if !isParam[name] {
				continue
			}
			var consts []string
			for _, v := range values {
				if len(names) > 1 {
					v = syntax.Unparen(v)
					if v == nil || (v.Kind() != "tuple" && v.Kind() != "list") || len(v.NamedChildren()) != len(names) {
						consts = nil
						break
					}
					v = v.NamedChildren()[i]
				}
				k := constText(v, src)
				if k == "" {
					consts = nil
					break
				}
				consts = append(consts, k)
			}
			if len(consts) > 0 {
				if m == nil {
					m = map[string][]string{}
				}
				m[name] = consts
			}
		}
	}
	return m
}

// parametrizeArgs reads a parametrize call's argument names (a string
// "a" or "a, b", or a list or tuple of strings) and its list or tuple of
// values; ok is false for any other form, or when the values go to
// fixtures (indirect).
func parametrizeArgs(call *Node, src []byte) (names []string, values []*Node, ok bool) {
	al := call.Get("arguments")
	if al == nil {
		return nil, nil, false
	}
	var pos []*Node
	var namesArg, valuesArg *Node
	for _, a := range al.NamedChildren() {
		switch a.Kind() {
		case "keyword_argument":
			switch a.Get("name").Text(src) {
			case "argnames":
				namesArg = a.Get("value")
			case "argvalues":
				valuesArg = a.Get("value")
			case "indirect":
				if v := syntax.Unparen(a.Get("value")); v == nil || v.Kind() != "false" {
					return nil, nil, false
				}
			}
		case "comment":
		default:
			pos = append(pos, a)
		}
	}
	if namesArg == nil && len(pos) > 0 {
		namesArg, pos = pos[0], pos[1:]
	}
	if valuesArg == nil && len(pos) > 0 {
		valuesArg = pos[0]
	}
	namesArg, valuesArg = syntax.Unparen(namesArg), syntax.Unparen(valuesArg)
	if namesArg == nil || valuesArg == nil || (valuesArg.Kind() != "list" && valuesArg.Kind() != "tuple") {
		return nil, nil, false
	}
	if t, ok := index.StringLit(namesArg, src); ok {
		for _, n := range strings.Split(t, ",") {
			names = append(names, strings.TrimSpace(n))
		}
	} else if namesArg.Kind() == "list" || namesArg.Kind() == "tuple" {
		for _, x := range namesArg.NamedChildren() {
			t, ok := index.StringLit(x, src)
			if !ok {
				return nil, nil, false
			}
			names = append(names, strings.TrimSpace(t))
		}
	} else {
		return nil, nil, false
	}
	for _, v := range valuesArg.NamedChildren() {
		if v.Kind() == "comment" {
			continue
		}
		values = append(values, v)
	}
	return names, values, len(names) > 0 && len(values) > 0
}
