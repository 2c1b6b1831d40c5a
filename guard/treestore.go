package guard

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// treeStore keeps parsed syntax trees on disk between runs, by the hash of
// the source the parser read (the file with its kernel bodies blanked), so
// that a run after an edit parses only the files whose bytes changed:
// tree-sitter's parse is about a third of a run's CPU. Options.TreeFile
// names the pack; the caller (the results cache) keys it by the run and by
// capguard's binary, so a tree is read only by the parser that made it.
//
// The pack is one file: a magic line, then for each tree the hash of its
// source, its length and its encoding (syntax.Encode, which carries its
// own checksum). Each run writes a new pack of the trees it used (the
// ones it read, copied as they were, and the ones it parsed) and renames
// it over the old one: nothing to prune, one file to write (2,500 files,
// one a tree, cost a kernel library's run 0.7 s of file system calls). A
// tree that cannot be read back is parsed again; a pack that cannot be
// written is not kept. Not synced to the disk: after a crash a torn pack
// fails its magic or a tree its checksum, and is parsed again.
type treeStore struct {
	path   string
	old    map[[32]byte][]byte // the pack as the last run left it
	mu     sync.Mutex
	keep   map[[32]byte][]byte       // the pack this run writes: encodings read
	parsed map[[32]byte]*syntax.Tree // and trees parsed, encoded by finish
	loaded atomic.Int64
}

var treePackMagic = []byte("capguard syntax trees 1\n")

func newTreeStore(path string) *treeStore {
	s := &treeStore{path: path, old: map[[32]byte][]byte{}, keep: map[[32]byte][]byte{}, parsed: map[[32]byte]*syntax.Tree{}}
	data, err := os.ReadFile(path)
	if err != nil || len(data) < len(treePackMagic) || string(data[:len(treePackMagic)]) != string(treePackMagic) {
		return s
	}
	for b := data[len(treePackMagic):]; len(b) > 0; {
		if len(b) < 32 {
			break
		}
		var h [32]byte
		copy(h[:], b)
		n, k := binary.Uvarint(b[32:])
		if k <= 0 || n > uint64(len(b)-32-k) {
			break // torn: what came before is kept
		}
		s.old[h] = b[32+k : 32+k+int(n)]
		b = b[32+k+int(n):]
	}
	return s
}

// load returns the stored tree under key h (treeKey) of a source srcLen
// bytes long, or nil.
func (s *treeStore) load(h [32]byte, srcLen int) *syntax.Tree {
	data, ok := s.old[h]
	if !ok {
		return nil
	}
	t, err := syntax.Decode(data, srcLen)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	s.keep[h] = data
	s.mu.Unlock()
	s.loaded.Add(1)
	return t
}

// store keeps the tree under key h for the next run: the tree as the
// parser made it (a copy of its header: parseFile then adds the Python 2
// check of the file's own bytes, which the pack, keyed by what the parser
// read, must not hold).
func (s *treeStore) store(h [32]byte, t *syntax.Tree) {
	cp := *t
	s.mu.Lock()
	s.parsed[h] = &cp
	s.mu.Unlock()
}

// finish writes the pack of the trees this run used (a temporary file
// renamed over the old pack) and reports how many it holds. It may run
// while the analysis goes on: Encode reads only what the analysis never
// writes (Node.Aux is left out).
func (s *treeStore) finish() int {
	s.old = nil
	for h, t := range s.parsed {
		s.keep[h] = syntax.Encode(t)
	}
	s.parsed = nil
	size := len(treePackMagic)
	for _, d := range s.keep {
		size += 32 + binary.MaxVarintLen64 + len(d)
	}
	out := make([]byte, 0, size)
	out = append(out, treePackMagic...)
	for h, d := range s.keep {
		out = append(out, h[:]...)
		out = binary.AppendUvarint(out, uint64(len(d)))
		out = append(out, d...)
	}
	n := len(s.keep)
	s.keep = nil
	if os.MkdirAll(filepath.Dir(s.path), 0o755) != nil {
		return 0
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".trees-*")
	if err != nil {
		return 0
	}
	_, werr := tmp.Write(out)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), s.path) != nil {
		os.Remove(tmp.Name())
		return 0
	}
	return n
}

// treeKey is the pack's key of a file's tree: the SHA-256 of what the
// parser reads (kernel bodies blanked).
func treeKey(psrc []byte) [32]byte { return sha256.Sum256(psrc) }
