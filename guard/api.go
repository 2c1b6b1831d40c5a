// The public API of the analysis: the names callers of package guard use,
// defined in the layers below (analysis, config, source) and re-exported
// here so that guard stays the one entry point.

package guard

import (
	"bytes"
	"sync"

	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/config"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/rules"
	"github.com/cudagraph-capguard/capguard/guard/source"
	"github.com/cudagraph-capguard/capguard/guard/suppress"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/truth"
)

// The rules of the run, registered once: the rule list's and the
// suppression filter's, each documented with its rows of the GPU truth
// table.
func init() {
	for _, r := range append(append([]*Rule{}, rules.All...), suppress.Rules...) {
		r.Doc += truth.MeasuredSection(r.ID)
		analysis.Register(r)
	}
}

// The types of a run's input and output, defined in the layers below.
type (
	Applicability = analysis.Applicability
	Config        = config.Config
	Context       = analysis.Context
	Diagnostic    = analysis.Diagnostic
	EdgeKind      = analysis.EdgeKind
	FileError     = source.FileError
	Fix           = analysis.Fix
	Node          = analysis.Node
	Pos           = analysis.Pos
	Rule          = analysis.Rule
	Severity      = analysis.Severity
	TextEdit      = analysis.TextEdit
)

// Contexts, edge kinds, severities, applicabilities and limits (see the
// packages that define them).
const (
	Captured    = analysis.Captured
	ReplayPrep  = analysis.ReplayPrep
	PostCapture = analysis.PostCapture
	Claimed     = analysis.Claimed
	Launcher    = analysis.Launcher
	Eager       = analysis.Eager

	Traced    = analysis.Traced
	Resolved  = analysis.Resolved
	Annotated = analysis.Annotated
	Hierarchy = analysis.Hierarchy
	ByName    = analysis.ByName

	SeverityError   = analysis.SeverityError
	SeverityWarning = analysis.SeverityWarning

	Safe        = analysis.Safe
	Unsafe      = analysis.Unsafe
	DisplayOnly = analysis.DisplayOnly

	DefaultMaxFileSize = config.DefaultMaxFileSize
	HelperName         = analysis.HelperName
	ProjectURL         = analysis.ProjectURL
	DocsURL            = analysis.DocsURL
)

// Presets are the framework presets by name (guard/config/presets.go).
var Presets = config.Presets

// Rules returns every rule, sorted by ID.
func Rules() []*Rule { return analysis.Rules() }

// LookupRule finds a rule by ID ("CG301") or name ("temporary-into-kernel").
func LookupRule(idOrName string) *Rule { return analysis.LookupRule(idOrName) }

// ValidateCodes returns the codes that name no rule and are no prefix of one.
func ValidateCodes(codes []string) []string { return analysis.ValidateCodes(codes) }

// RuleURL is the documentation page of a rule.
func RuleURL(id string) string { return analysis.RuleURL(id) }

// LoadConfig reads a capguard.toml or pyproject.toml (guard/config).
func LoadConfig(file string) (*Config, error) { return config.LoadConfig(file) }

// FindConfig finds the configuration of start's project (guard/config).
func FindConfig(start string) (*Config, error) { return config.FindConfig(start) }

// ProjectRoot is the root of the project path belongs to (guard/config).
func ProjectRoot(path string, cfg *Config) string { return config.ProjectRoot(path, cfg) }

// Discover lists the Python files a run over paths checks (guard/source).
func Discover(paths []string, cfg *Config) ([]string, []FileError) {
	return source.Discover(paths, cfg)
}

// DiscoverWalk is Discover with the folders it walked (guard/source).
func DiscoverWalk(paths []string, cfg *Config) (files []string, walked []string, errs []FileError) {
	return source.DiscoverWalk(paths, cfg)
}

// PackageDirs reports the folders module names are made from, and whether
// each holds an __init__.py (guard/source).
func PackageDirs(files []string) map[string]bool { return source.PackageDirs(files) }

// DecodeSource decodes Python source as Python does, PEP 263 (guard/source).
func DecodeSource(src []byte) ([]byte, string, error) { return source.DecodeSource(src) }

// EncodeSource encodes text back into a PEP 263 encoding (guard/source).
func EncodeSource(src []byte, name string) ([]byte, error) { return source.EncodeSource(src, name) }

// DeclaredEncoding is the PEP 263 encoding src declares, or "" (guard/source).
func DeclaredEncoding(src []byte) string { return source.DeclaredEncoding(src) }

// IsUTF8 reports whether an encoding name means UTF-8 (guard/source).
func IsUTF8(name string) bool { return source.IsUTF8(name) }

// Parse parses Python source (guard/syntax).
func Parse(src []byte) (*syntax.Tree, error) { return analysis.Parse(src) }

// ParseOK reports whether src parses without a syntax error (guard/syntax).
func ParseOK(src []byte) bool { return analysis.ParseOK(src) }

// TreeCache keeps the syntax trees of one run for the next, for a process
// that checks the same project again and again (`capguard server`): a file
// whose bytes did not change is not parsed again. Runs that share a cache
// must not overlap (the analysis writes into a tree's nodes: flow keeps
// each expression's points-to node in syntax.Node.Aux, which is cleared
// before a tree is used again). A tree not used by a run is dropped at its
// end.
//
// It keeps the files' digests (FileDigest) of the last run that made them
// too: a run with Options.Digests takes a file's digest from there while
// its bytes and the run's Relevance are the same (Options.PriorDigests).
type TreeCache struct {
	mu     sync.Mutex
	m      map[string]*cachedTree // by absolute path
	gen    int
	Reused int // trees reused by the last run, for tests
	// relevance and tokens are those of the last run that kept its
	// digests: its Relevance and the tokens its prefilter looked for
	// (digestTokens), which its configuration gives too.
	relevance *Relevance
	tokens    string
}

type cachedTree struct {
	src    []byte
	tree   *syntax.Tree
	gen    int
	digest *FileDigest // made from src under the cache's relevance, or nil
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

// digests are the kept digests of the files (Options.PriorDigests) and
// the relevance they were made under: none when they were made under other
// tokens.
func (c *TreeCache) digests(files []*File, tokens string) (map[string]*FileDigest, *Relevance) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.relevance == nil || c.tokens != tokens {
		return nil, nil
	}
	out := map[string]*FileDigest{}
	for _, f := range files {
		// Used this run with a digest: reused, so file compared its
		// bytes (a tree put this run has none yet).
		if e := c.m[f.Abs]; e != nil && e.digest != nil && e.gen == c.gen {
			out[f.Path] = e.digest
		}
	}
	return out, c.relevance
}

// keepDigests keeps a run's digests with its files' trees.
func (c *TreeCache) keepDigests(files []*File, digests map[string]*FileDigest, rel Relevance, tokens string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.m {
		e.digest = nil
	}
	for _, f := range files {
		if e := c.m[f.Abs]; e != nil && bytes.Equal(e.src, f.Src) {
			e.digest = digests[f.Path]
		}
	}
	c.relevance, c.tokens = &rel, tokens
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
