// Package pyparse parses Python source with tree-sitter and hands back the
// syntax tree as one flat table, made in a single cgo call.
//
// Walking a tree-sitter tree node by node from Go costs several cgo calls
// per node, and go-tree-sitter keeps every node it hands out in a map until
// the tree is closed: on a 5 MB file that was 2.2 s and most of 900 MB. Here
// the C side parses, walks the tree with a cursor into an array of Rec in
// preorder and frees the tree before Go sees anything, so Go pays one call
// and the tree and the Go copy never coexist.
//
// The tree-sitter runtime and the Python grammar are the C code compiled
// into github.com/smacker/go-tree-sitter and its python package (imported
// below for that); the declarations here follow that version's api.h, and
// guard's tests compare this table with go-tree-sitter's own API node by node.
package pyparse

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

typedef uint16_t TSSymbol;
typedef uint16_t TSFieldId;
typedef struct TSLanguage TSLanguage;
typedef struct TSParser TSParser;
typedef struct TSTree TSTree;
typedef struct { uint32_t row; uint32_t column; } TSPoint;
typedef struct { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;

TSParser *ts_parser_new(void);
void ts_parser_set_timeout_micros(TSParser *self, uint64_t timeout_micros);
void ts_parser_delete(TSParser *self);
bool ts_parser_set_language(TSParser *self, const TSLanguage *language);
TSTree *ts_parser_parse_string(TSParser *self, const TSTree *old_tree, const char *string, uint32_t length);
void ts_tree_delete(TSTree *self);
TSNode ts_tree_root_node(const TSTree *self);
TSTreeCursor ts_tree_cursor_new(TSNode node);
void ts_tree_cursor_delete(TSTreeCursor *self);
TSNode ts_tree_cursor_current_node(const TSTreeCursor *self);
TSFieldId ts_tree_cursor_current_field_id(const TSTreeCursor *self);
bool ts_tree_cursor_goto_first_child(TSTreeCursor *self);
bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *self);
bool ts_tree_cursor_goto_parent(TSTreeCursor *self);
TSSymbol ts_node_symbol(TSNode self);
uint32_t ts_node_start_byte(TSNode self);
uint32_t ts_node_end_byte(TSNode self);
TSPoint ts_node_start_point(TSNode self);
bool ts_node_is_named(TSNode self);
bool ts_node_is_missing(TSNode self);
bool ts_node_has_error(TSNode self);
uint32_t ts_language_symbol_count(const TSLanguage *self);
const char *ts_language_symbol_name(const TSLanguage *self, TSSymbol symbol);
uint32_t ts_language_field_count(const TSLanguage *self);
const char *ts_language_field_name_for_id(const TSLanguage *self, TSFieldId id);
const TSLanguage *tree_sitter_python(void);

typedef struct {
	uint32_t start, end, row, col, parent;
	TSSymbol sym;
	TSFieldId field;
	uint8_t named, missing;
} cg_rec;

_Static_assert(sizeof(cg_rec) == 28, "cg_rec layout");

// cg_parse parses src and stores its nodes in preorder in *out (malloc'd,
// the caller frees it); with out NULL it only sets *has_error. It returns the node count, -1 when tree-sitter
// returned no tree (it ran past timeout_us), -2 when memory ran out.
static int64_t cg_parse(const char *src, uint32_t len, uint64_t timeout_us, cg_rec **out, int *has_error) {
	if (out) *out = NULL;
	*has_error = 0;
	TSParser *p = ts_parser_new();
	if (!p) return -2;
	ts_parser_set_language(p, tree_sitter_python());
	ts_parser_set_timeout_micros(p, timeout_us);
	TSTree *t = ts_parser_parse_string(p, NULL, src, len);
	ts_parser_delete(p);
	if (!t) return -1;
	TSNode root = ts_tree_root_node(t);
	*has_error = ts_node_has_error(root);
	if (!out) { ts_tree_delete(t); return 0; } // only the error flag was asked for
	size_t cap = 1024, n = 0, depth = 0, scap = 64;
	cg_rec *recs = malloc(cap * sizeof(cg_rec));
	uint32_t *stack = malloc(scap * sizeof(uint32_t)); // index of the node at each depth
	if (!recs || !stack) { free(recs); free(stack); ts_tree_delete(t); return -2; }
	TSTreeCursor c = ts_tree_cursor_new(root);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			cg_rec *r = realloc(recs, cap * sizeof(cg_rec));
			if (!r) { free(recs); free(stack); ts_tree_cursor_delete(&c); ts_tree_delete(t); return -2; }
			recs = r;
		}
		if (depth == scap) {
			scap *= 2;
			uint32_t *s = realloc(stack, scap * sizeof(uint32_t));
			if (!s) { free(recs); free(stack); ts_tree_cursor_delete(&c); ts_tree_delete(t); return -2; }
			stack = s;
		}
		TSNode nd = ts_tree_cursor_current_node(&c);
		TSPoint sp = ts_node_start_point(nd);
		cg_rec *r = &recs[n];
		r->start = ts_node_start_byte(nd);
		r->end = ts_node_end_byte(nd);
		r->row = sp.row; r->col = sp.column;
		r->parent = depth == 0 ? UINT32_MAX : stack[depth - 1];
		r->sym = ts_node_symbol(nd);
		r->field = depth == 0 ? 0 : ts_tree_cursor_current_field_id(&c);
		r->named = ts_node_is_named(nd);
		r->missing = ts_node_is_missing(nd);
		stack[depth] = (uint32_t)n;
		n++;
		if (ts_tree_cursor_goto_first_child(&c)) { depth++; continue; }
		for (;;) {
			if (ts_tree_cursor_goto_next_sibling(&c)) break;
			if (!ts_tree_cursor_goto_parent(&c)) goto done;
			depth--;
		}
	}
done:
	ts_tree_cursor_delete(&c);
	ts_tree_delete(t);
	free(stack);
#ifdef __GLIBC__
	// glibc keeps a freed tree's memory for later mallocs; give a big one
	// back before Go allocates its own copy.
	if (len > (1u << 20)) malloc_trim(0);
#endif
	*out = recs;
	return (int64_t)n;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	_ "github.com/smacker/go-tree-sitter"        // the tree-sitter runtime (C)
	_ "github.com/smacker/go-tree-sitter/python" // tree_sitter_python (C)
)

// Rec is one node: byte offsets, the 0-based start point (row and byte
// column), the index of its parent in the table (NoParent for the root),
// its grammar symbol and field. The layout matches C's cg_rec.
type Rec struct {
	Start, End, Row, Col uint32
	Parent               uint32
	Sym                  uint16
	Field                uint16 // 0: no field
	Named, Missing       bool
}

// NoParent is the Parent of the root.
const NoParent = math.MaxUint32

func init() {
	if unsafe.Sizeof(Rec{}) != C.sizeof_cg_rec {
		panic(fmt.Sprintf("pyparse: Rec is %d bytes, cg_rec %d", unsafe.Sizeof(Rec{}), C.sizeof_cg_rec))
	}
}

// timeout bounds one parse: 5 s plus 2 s a MB, ten times what tree-sitter
// takes on ordinary Python (about 5 MB/s on one core), so that an input
// that sends its error recovery astray cannot stall a run.
var timeout = func(n int) time.Duration { return 5*time.Second + time.Duration(n)*2*time.Microsecond }

// ErrTooLarge: tree-sitter takes at most 4 GiB of source.
var ErrTooLarge = errors.New("source over 4 GiB")

// Parse parses src and calls use with the nodes in preorder (the root
// first, every node before its children, children in source order) and
// whether the tree holds an error. The slice lives in C memory, valid only
// during the call: copy what you keep.
func Parse(src []byte, use func(nodes []Rec, hasError bool)) error {
	var out *C.cg_rec
	n, hasErr, err := parse(src, &out)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(out))
	use(unsafe.Slice((*Rec)(unsafe.Pointer(out)), n), hasErr)
	return nil
}

// HasError parses src and reports whether the tree holds a syntax error
// (an ERROR or a MISSING node), without making the table.
func HasError(src []byte) (bool, error) {
	_, hasErr, err := parse(src, nil)
	return hasErr, err
}

// parse runs cg_parse on src; with out nil it asks for the error flag only.
func parse(src []byte, out **C.cg_rec) (n int, hasError bool, err error) {
	if len(src) > math.MaxUint32 {
		return 0, false, ErrTooLarge
	}
	var ptr *C.char
	if len(src) > 0 {
		ptr = (*C.char)(unsafe.Pointer(&src[0]))
	}
	var hasErr C.int
	limit := timeout(len(src))
	switch r := C.cg_parse(ptr, C.uint32_t(len(src)), C.uint64_t(limit.Microseconds()), out, &hasErr); {
	case r == -1:
		return 0, false, fmt.Errorf("tree-sitter gave up after %v (the limit for %d bytes)", limit, len(src))
	case r < 0:
		return 0, false, errors.New("out of memory in tree-sitter")
	default:
		return int(r), hasErr != 0, nil
	}
}

var (
	namesOnce       sync.Once
	symNames        []string
	fieldNms        []string
	errorName       string // "ERROR"
	errorRepeatName string // "_ERROR"
)

// errorSym is tree-sitter's ts_builtin_sym_error.
const errorSym = math.MaxUint16

func loadNames() {
	lang := C.tree_sitter_python()
	symNames = make([]string, C.ts_language_symbol_count(lang))
	for i := range symNames {
		symNames[i] = C.GoString(C.ts_language_symbol_name(lang, C.TSSymbol(i)))
	}
	// tree-sitter's built-in error symbols lie past the grammar's own.
	errorName = C.GoString(C.ts_language_symbol_name(lang, C.TSSymbol(errorSym)))
	errorRepeatName = C.GoString(C.ts_language_symbol_name(lang, C.TSSymbol(errorSym-1)))
	fieldNms = make([]string, C.ts_language_field_count(lang)+1)
	for i := 1; i < len(fieldNms); i++ {
		fieldNms[i] = C.GoString(C.ts_language_field_name_for_id(lang, C.TSFieldId(i)))
	}
}

// SymbolName is the node type of a symbol ("call", "identifier", "(").
func SymbolName(sym uint16) string {
	namesOnce.Do(loadNames)
	switch {
	case int(sym) < len(symNames):
		return symNames[sym]
	case sym == errorSym:
		return errorName
	case sym == errorSym-1:
		return errorRepeatName
	}
	return ""
}

// FieldNames are the field names by id, "" for 0; every id tree-sitter
// gives a node is an index.
func FieldNames() []string {
	namesOnce.Do(loadNames)
	return fieldNms
}

// FieldName is the name of a field id, "" for 0.
func FieldName(id uint16) string {
	namesOnce.Do(loadNames)
	if int(id) < len(fieldNms) {
		return fieldNms[id]
	}
	return ""
}

// SymbolNames are every node type a tree can hold: the grammar's symbols'
// names and tree-sitter's two error symbols' (with repeats: aliases share
// a name).
func SymbolNames() []string {
	namesOnce.Do(loadNames)
	return append(append([]string{}, symNames...), errorName, errorRepeatName)
}
