package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// CaptureMapFile is the capture map a run with opts merges ("" for none):
// a result cache keys results by its contents too.
func CaptureMapFile(opts Options) string { return captureMapFile(opts, opts.Config) }

// captureMapFile is the map a run merges: Options.CaptureMap, else the
// config's capture-map (relative to the config's folder).
func captureMapFile(opts Options, cfg *Config) string {
	if opts.CaptureMap != "" {
		return opts.CaptureMap
	}
	if cfg != nil && cfg.CaptureMap != "" {
		if !filepath.IsAbs(cfg.CaptureMap) && cfg.Path != "" {
			return filepath.Join(filepath.Dir(cfg.Path), cfg.CaptureMap)
		}
		return cfg.CaptureMap
	}
	return ""
}

// A FileDigest says what the analysis read from one file, less the text of
// its inert comments: the results cache (guard/cache) serves its stored
// result after an edit that leaves every digest as it was, moving the
// offsets that follow an edited comment, instead of analysing again.
//
// The digest hashes the file's bytes with each inert comment's text (all
// but its '#') left out, whether the prefilter keeps the file (prefilter.go:
// its tokens are looked for in comments too) and the imports it finds
// there. So two versions with one digest parse to the same tree, comment
// nodes included, at offsets that differ only by the comments' lengths,
// and every raw-source scan of the analysis (comment starts, the text before
// them) reads the same bytes.
//
// A comment is inert unless the analysis reads its text: a suppression
// (`noqa`, `capguard:`), a capture-safety claim (contexts/roots.go: each
// holds "safe", "compatible" or "friendly"), a type or encoding comment,
// one on the first two lines (PEP 263), or one holding a prefilter token.
// Such comments are hashed whole, as every comment inside a Triton kernel
// body (those bodies are blanked before parsing, so their comments are no
// nodes). A file with a syntax error has no digest.
type FileDigest struct {
	Sum string `json:"sum"`
	// Comments are the inert comments, in source order: [start, end) byte
	// offsets and the 1-based line.
	Comments [][3]int `json:"comments,omitempty"`
}

// digestVersion changes whenever what a digest covers changes.
const digestVersion = "capguard-digest-1"

// claimWords: every capture-safety claim holds one (contexts/roots.go,
// mayClaim; "ſ" is the long s its regexp's case folding takes for s).
var claimWords = []string{"afe", "ſ", "compatible", "friendly"}

// readingWords mark the comments whose text something reads.
var readingWords = []string{"noqa", "capguard", "type:", "coding", "pragma"}

// inertComment reports whether the analysis never reads the text of the
// comment node c (beyond its leading '#').
func inertComment(c *syntax.Node, src []byte, extra [][]byte) bool {
	if c.Row < 2 || c.Start >= c.End || c.End > len(src) || src[c.Start] != '#' {
		return false
	}
	text := src[c.Start:c.End]
	lower := strings.ToLower(string(text))
	for _, w := range claimWords {
		if strings.Contains(lower, w) {
			return false
		}
	}
	for _, w := range readingWords {
		if strings.Contains(lower, w) {
			return false
		}
	}
	return !relevant(text, extra)
}

// digestOf is f's digest (f parsed from src without a syntax error); rel
// is the prefilter's verdict on src.
func digestOf(f *File, rel bool, extra [][]byte) *FileDigest {
	if f == nil || f.Tree == nil || f.Tree.Root == nil || f.Tree.Syntax != "" {
		return nil
	}
	src := f.Src
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%v\x00%d\x00", digestVersion, rel, len(f.Tree.Comments))
	for _, r := range lexImports(src) {
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", r.module, r.level, strings.Join(r.names, "\x01"))
	}
	d := &FileDigest{}
	at := 0
	for _, c := range f.Tree.Comments {
		if !inertComment(c, src, extra) || c.Start < at {
			continue
		}
		h.Write(src[at : c.Start+1]) // up to and with the '#'
		h.Write([]byte{0})
		at = c.End
		d.Comments = append(d.Comments, [3]int{c.Start, c.End, int(c.Row) + 1})
	}
	h.Write(src[at:])
	d.Sum = hex.EncodeToString(h.Sum(nil))
	return d
}

// fileDigests are the digests of the parsed files (by path), for the cache.
func fileDigests(files []*File, rel map[string]bool, extra [][]byte) map[string]*FileDigest {
	digs := make([]*FileDigest, len(files))
	parallel(len(files), func(k int) { digs[k] = digestOf(files[k], rel[files[k].Path], extra) })
	out := map[string]*FileDigest{}
	for k, f := range files {
		if digs[k] != nil {
			out[f.Path] = digs[k]
		}
	}
	return out
}

// DigestFile reads and parses one file as a run with cfg would (its size
// limit, its encoding, Triton kernel bodies blanked) and returns its
// digest; ok is false when it cannot be read, decoded or parsed cleanly.
func DigestFile(path string, cfg *Config, maxFileSize int64) (d *FileDigest, ok bool) {
	defer func() {
		if recover() != nil {
			d, ok = nil, false
		}
	}()
	limit := cfg.MaxFileBytes()
	if maxFileSize != 0 {
		limit = max(maxFileSize, 0)
	}
	src, ferr := readSource(path, nil, limit)
	if ferr != nil {
		return nil, false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, false
	}
	f, ferr := parseFile(path, filepath.Clean(abs), "", src)
	if ferr != nil {
		return nil, false
	}
	extra := configTokens(cfg)
	d = digestOf(f, relevant(src, extra), extra)
	return d, d != nil
}
