package syntax

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Encode writes a tree in capguard's own compact form, for a cache of
// parsed files (a file whose bytes did not change need not be parsed
// again: tree-sitter is a third of a run's CPU). Decode reads it back as
// the same tree: the same nodes in the same order, kinds, fields, offsets,
// children, comments and syntax error.
//
// The form: a magic line, the syntax error, the table of the node kinds
// the tree uses, the node count, then each node in preorder as varints
// (kind index, field id, named, start, length, distance back to its
// parent), and a CRC-32 of all that.
func Encode(t *Tree) []byte {
	out := append([]byte{}, encodeMagic...)
	out = appendString(out, t.Syntax)
	if t.Root == nil {
		out = binary.AppendUvarint(out, 0) // no kinds
		out = binary.AppendUvarint(out, 0) // no nodes
		return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
	}
	// Preorder, as build made the slab: an explicit stack, for trees as
	// deep as MaxDepth.
	type item struct {
		n      *Node
		parent int
	}
	var nodes []item
	stack := []item{{t.Root, -1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nodes = append(nodes, it)
		self := len(nodes) - 1
		kids := it.n.Children()
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, item{kids[i], self})
		}
	}
	kindIdx := map[string]int{}
	var kinds []string
	for _, it := range nodes {
		if _, ok := kindIdx[it.n.Kind()]; !ok {
			kindIdx[it.n.Kind()] = len(kinds)
			kinds = append(kinds, it.n.Kind())
		}
	}
	out = binary.AppendUvarint(out, uint64(len(kinds)))
	for _, k := range kinds {
		out = appendString(out, k)
	}
	out = binary.AppendUvarint(out, uint64(len(nodes)))
	for i, it := range nodes {
		n := it.n
		out = binary.AppendUvarint(out, uint64(kindIdx[n.Kind()]))
		out = binary.AppendUvarint(out, uint64(n.field))
		named := uint64(0)
		if n.Named() {
			named = 1
		}
		out = binary.AppendUvarint(out, named)
		out = binary.AppendUvarint(out, uint64(n.Start))
		out = binary.AppendUvarint(out, uint64(n.End-n.Start))
		out = binary.AppendUvarint(out, uint64(i-it.parent)) // i+1 for the root
	}
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

var encodeMagic = []byte("capguard syntax tree 1\n")

func appendString(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}

// errBadTree is any encoded tree Decode refuses.
var errBadTree = errors.New("not an encoded syntax tree")

// Decode reads a tree Encode wrote for a source of srcLen bytes. Anything
// else (a truncated or corrupted file, another form, a node kind this
// parser does not make, an offset past the source) is an error, never a
// panic or a wrong tree.
func Decode(data []byte, srcLen int) (*Tree, error) {
	if len(data) < len(encodeMagic)+4 || string(data[:len(encodeMagic)]) != string(encodeMagic) || srcLen > MaxSource {
		return nil, errBadTree
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errBadTree
	}
	r := reader{b: body[len(encodeMagic):]}
	t := &Tree{Syntax: r.str()}
	nk := r.uvarint()
	if r.bad || nk > uint64(len(r.b)) {
		return nil, errBadTree
	}
	kinds := make([]uint16, nk)
	for i := range kinds {
		k, ok := kindIndex[r.str()]
		if !ok {
			return nil, errBadTree
		}
		kinds[i] = k
	}
	nn := r.uvarint()
	if r.bad || nn > uint64(len(r.b)) || nn > 0 && nk == 0 {
		return nil, errBadTree
	}
	if nn == 0 {
		if len(r.b) != 0 {
			return nil, errBadTree
		}
		return t, nil
	}
	nodes := make([]Node, nn)
	parent := make([]int32, nn)
	for i := range nodes {
		k, field, named, start, length, back := r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint(), r.uvarint()
		if r.bad || k >= nk || field >= uint64(len(fieldNames)) || named > 1 || start > uint64(srcLen) ||
			length > uint64(srcLen)-start || back == 0 || (i == 0 && back != 1) || (i > 0 && back > uint64(i)) {
			return nil, errBadTree
		}
		n := &nodes[i]
		n.kind, n.field = kinds[k], uint16(field)
		if named == 1 {
			n.kind |= namedBit
		}
		n.Start, n.End = int32(start), int32(start+length)
		parent[i] = int32(i - int(back)) // -1 for the root; before i: no cycle
	}
	if len(r.b) != 0 {
		return nil, errBadTree
	}
	if preorderDepth(len(parent), func(i int) int { return int(parent[i]) }) > MaxDepth {
		return nil, errBadTree
	}
	t.Root = link(nodes, parent, t)
	return t, nil
}

type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
