package syntax

import "github.com/cudagraph-capguard/capguard/guard/internal/pyparse"

// The node types, each once: a Node keeps its type's index here (Kind).
var (
	// kindTable are the node types by index: "" first (the zero Node's),
	// then each name the parser gives a symbol, once, then MISSING.
	kindTable []string
	// kindIndex is each type's index in kindTable ("" left out: no parsed
	// or decoded node has it).
	kindIndex = map[string]uint16{}
	// symKinds is the index of each of the parser's ordinary symbols
	// (every symbol but its two error ones, which symKind asks by name).
	symKinds    []uint16
	missingKind uint16
)

func init() {
	kindTable = []string{""}
	add := func(name string) uint16 {
		if k, ok := kindIndex[name]; ok {
			return k
		}
		k := uint16(len(kindTable))
		kindTable = append(kindTable, name)
		kindIndex[name] = k
		return k
	}
	names := pyparse.SymbolNames() // the ordinary symbols, then the two error ones
	symKinds = make([]uint16, len(names)-2)
	for i, name := range names {
		k := add(name)
		if i < len(symKinds) {
			symKinds[i] = k
		}
	}
	missingKind = add("MISSING")
	if len(kindTable) > namedBit {
		panic("syntax: more node types than a Node's kind holds")
	}
}

// symKind is the index of parser symbol sym's type.
func symKind(sym uint16) uint16 {
	if int(sym) < len(symKinds) {
		return symKinds[sym]
	}
	return kindIndex[pyparse.SymbolName(sym)]
}
