package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// treeStore keeps parsed syntax trees on disk between runs, by the hash of
// the source the parser read (the file with its kernel bodies blanked), so
// that a run after an edit parses only the files whose bytes changed:
// tree-sitter's parse is about a third of a run's CPU. Options.TreeDir
// names its folder; the caller (the results cache) owns the folder and
// keys it by capguard's binary, so a tree is read only by the parser that
// made it. A tree that cannot be read back (missing, truncated, written by
// another form) is parsed again; a tree that cannot be written is not kept.
type treeStore struct {
	dir            string
	loaded, stored atomic.Int64
}

func (s *treeStore) path(psrc []byte) string {
	h := sha256.Sum256(psrc)
	name := hex.EncodeToString(h[:])
	return filepath.Join(s.dir, name[:2], name[2:])
}

// load returns the stored tree of psrc, or nil.
func (s *treeStore) load(psrc []byte) *syntax.Tree {
	data, err := os.ReadFile(s.path(psrc))
	if err != nil {
		return nil
	}
	t, err := syntax.Decode(data, len(psrc))
	if err != nil {
		return nil
	}
	// Read by this run: the results cache prunes what a run did not touch.
	now := time.Now()
	os.Chtimes(s.path(psrc), now, now)
	s.loaded.Add(1)
	return t
}

// store keeps psrc's tree, atomically: a temporary file renamed into
// place, so a reader sees the whole file or none. Not synced to the disk
// (google/renameio syncs each file, which made storing a kernel library's
// 2,500 trees take seconds): after a crash a file may be empty or torn,
// and Decode's checksum turns it into a parse.
func (s *treeStore) store(psrc []byte, t *syntax.Tree) {
	p := s.path(psrc)
	if _, err := os.Stat(p); err == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tree-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(syntax.Encode(t))
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
		return
	}
	s.stored.Add(1)
}
