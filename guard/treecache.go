package guard

import (
	"bytes"
	"sync"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// TreeCache keeps the syntax trees of one run for the next, for a process
// that checks the same project again and again (`capguard server`): a file
// whose bytes did not change is not parsed again. Runs that share a cache
// must not overlap (the analysis writes into a tree's nodes: flow keeps
// each expression's points-to node in syntax.Node.Aux, which is cleared
// before a tree is used again). A tree not used by a run is dropped at its
// end.
type TreeCache struct {
	mu     sync.Mutex
	m      map[string]*cachedTree // by absolute path
	gen    int
	Reused int // trees reused by the last run, for tests
}

type cachedTree struct {
	src  []byte
	tree *syntax.Tree
	gen  int
}

// NewTreeCache returns an empty cache.
func NewTreeCache() *TreeCache { return &TreeCache{m: map[string]*cachedTree{}} }

// begin starts a run.
func (c *TreeCache) begin() {
	c.mu.Lock()
	c.gen++
	c.Reused = 0
	c.mu.Unlock()
}

// file returns the file for src made from the stored tree, or nil.
func (c *TreeCache) file(path, abs, root string, src []byte) (f *File) {
	c.mu.Lock()
	e := c.m[abs]
	if e != nil && bytes.Equal(e.src, src) {
		e.gen = c.gen
		c.Reused++
	} else {
		e = nil
	}
	c.mu.Unlock()
	if e == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			f = nil
		}
	}()
	if e.tree.Root != nil {
		syntax.Walk(e.tree.Root, func(n *syntax.Node) bool {
			n.Aux = 0
			return true
		})
	}
	return index.NewFile(path, abs, index.ModuleName(abs, root), src, e.tree)
}

// put stores a file's tree.
func (c *TreeCache) put(abs string, src []byte, tree *syntax.Tree) {
	c.mu.Lock()
	c.m[abs] = &cachedTree{src: src, tree: tree, gen: c.gen}
	c.mu.Unlock()
}

// end drops the trees the run did not use.
func (c *TreeCache) end() {
	c.mu.Lock()
	for k, e := range c.m {
		if e.gen != c.gen {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}
