package guard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/fixmodel"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/internal/par"
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

// A FileDigest says what the analysis read from one file, less its inert
// comments, inert docstrings and blank lines: the results cache
// (guard/cache, and capguard server through it) serves its
// stored result after an edit that leaves every digest as it was, moving
// the findings' positions to the lines and offsets they have now, instead
// of analysing again.
//
// The digest hashes the file's lines with each inert comment left out (with
// the spaces before it; a line that ends in one is marked so), each inert
// docstring's text left out (inertDocstrings) and without the lines that
// are then blank, whether
// the prefilter keeps the file (prefilter.go: its tokens are looked for in
// comments too) and the imports it finds there. So two versions with one
// digest hold the same code lines in the same order, each with the same
// bytes up to where its inert comment began, and parse to the same tree
// of code (the comments are extras): only the kept lines' numbers and
// their offsets differ, which Dropped, Tails and Lines let a reader
// recompute (Remap). A line is kept, whatever it holds, when it is one of
// the first two (PEP 263), inside a string that spans lines, after
// a backslash continuation, one of the two after a comment whose text is
// read (a suppression covers the next line, a claim a def two lines
// below), or the last line.
//
// A blanked kernel body (syntax.BlankKernels: a top-level Triton, CuTe,
// TileLang or Numba kernel's body, device code parsed as `...`) is code
// edits change most in a kernel library, and no node of the tree: the
// analysis reads it only through the fix model's kernel summary (which
// parameters the kernel stores through: fixmodel.KernelSummary, made from
// the kernel's text, fixmodel.KernelText). So the digest keeps the body's
// first line whole (the `...` node is on it), leaves out the body's other
// lines whatever they hold (Device), and lists each kernel with the hash
// of its text (Kernels): an edit inside a kernel body keeps the Sum, and
// a reader serves it only when SameKernels finds each changed kernel's
// summary unchanged (from the text before the edit, which the results
// cache keeps by hash, and the text now). Parsing every kernel's text to
// hash its summary would cost the first run about a third of its parse.
//
// A comment is inert unless the analysis reads its text: a suppression
// (`noqa`, `capguard:`), a capture-safety claim (contexts/roots.go: each
// holds "safe", "compatible" or "friendly"), a type or encoding comment,
// or one holding a prefilter token. Such comments are hashed whole. The
// first two lines are no exception (they were, for PEP 263's encoding
// declaration, until the twenty-eighth pass: every comment edit in a file
// of one or two lines, an empty or licence-only `__init__.py`, was then a
// whole analysis): a declaration holds "coding", and a line put above one
// changes the encoding the file is decoded with, which the Sum holds, as
// it holds the decoded text. A file with a syntax error has no digest.
type FileDigest struct {
	Sum string `json:"sum"`
	// Lines is the file's number of lines ('\n' ends one; the text after
	// the last is a line, maybe empty).
	Lines int `json:"lines,omitempty"`
	// Dropped are the 1-based [first, last] runs of lines left out: blank,
	// or holding only inert comments.
	Dropped [][2]int `json:"dropped,omitempty"`
	// Tails are the kept lines that end in an inert comment or begin an
	// inert docstring: [line, the 0-based byte column where the spaces
	// before its '#' begin, or where the docstring begins].
	Tails [][2]int `json:"tails,omitempty"`
	// Device: lines of a blanked kernel body were left out (their code
	// is read through the kernels' summaries only).
	Device bool `json:"device,omitempty"`
	// Kernels are the file's kernels, in order: [name, SHA-256 of the
	// text the analysis reads (fixmodel.KernelText)]. Two versions with one
	// Sum hold the same kernels; SameKernels compares the texts that
	// differ by their summaries.
	Kernels [][2]string `json:"kernels,omitempty"`
	// Units are the file's dead-store candidates (inertUnits): module-level
	// statements that bind names to literals and are left out of Sum like
	// blank lines. Two versions with one Sum whose Units differ are read
	// alike only where no file reads a name the differing units bind
	// (ChangedUnitNames, UnreadNames).
	Units []InertUnit `json:"units,omitempty"`
	// Kept is KeptLines, for a digest kept without its lines (Lines 0):
	// whether an edit moved the file's lines is then still known.
	Kept string `json:"kept,omitempty"`

	texts map[string][]byte // the kernels' texts by hash (digestOf)

	starts []int // each line's first byte offset (DigestFile, DigestSource)
	size   int   // the source's length
}

// digestVersion changes whenever what a digest covers changes.
const digestVersion = "capguard-digest-6"

// claimWords: every capture-safety claim holds one (contexts/roots.go,
// mayClaim; "ſ" is the long s its regexp's case folding takes for s).
var claimWords = []string{"afe", "ſ", "compatible", "friendly"}

// readingWords mark the comments whose text something reads.
var readingWords = []string{"noqa", "capguard", "type:", "coding", "pragma"}

// inertComment reports whether the analysis never reads the text of the
// comment node c. A comment on the first two lines is no exception: an
// encoding declaration holds "coding" (a reading word), and where the
// lines above one go is the declared encoding, which the Sum holds.
func inertComment(c *syntax.Node, src []byte, extra [][]byte) bool {
	if c.Start >= c.End || int(c.End) > len(src) || src[c.Start] != '#' {
		return false
	}
	return inertText(src[c.Start:c.End], extra)
}

// lineStarts are the offsets where src's lines begin.
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// blankLine: only spaces, tabs and a CR.
func blankLine(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// digestOf is f's digest (f parsed from src without a syntax error); rel
// is the prefilter's verdict on src.
func digestOf(f *File, rel bool, extra [][]byte) *FileDigest {
	if f == nil || f.Tree == nil || f.Tree.Root == nil || f.Tree.Syntax != "" {
		return nil
	}
	src := f.Src
	starts := lineStarts(src)
	n := len(starts)
	lineOf := func(off int) int { // 0-based
		return sort.Search(n, func(i int) bool { return starts[i] > off }) - 1
	}
	end := func(l int) int { // the line's end, before its '\n'
		if l+1 < n {
			return starts[l+1] - 1
		}
		return len(src)
	}
	// cut[l]: where line l's kept bytes end (an inert comment's spaces
	// begin there), -1 when nothing is cut.
	cut := make(map[int]int)
	// read: the lines of the comments whose text is read. A suppression
	// alone on its line covers the next line too, and a claim comment
	// covers a def up to two lines below it (suppress, contexts.ClaimOf):
	// the lines after one that it may cover are never dropped (covers: how
	// many lines below it), so that what lies between it and the code it covers stays
	// as it was. A read comment after code that holds no claim word (a
	// trailing `# noqa: F401`) covers its own line only.
	read := make(map[int]bool)
	covers := make(map[int]int)
	for _, c := range f.Tree.Comments {
		if !inertComment(c, src, extra) {
			if l := lineOf(int(c.Start)); l >= 0 {
				read[l] = true
				switch {
				case holdsClaimWord(src[c.Start:c.End]):
					covers[l] = 2
				case len(bytes.TrimSpace(src[starts[l]:c.Start])) == 0: // alone, as suppress reads it
					covers[l] = 1
				}
			}
			continue
		}
		l := lineOf(int(c.Start))
		if l < 0 {
			continue
		}
		if e := end(l); int(c.End) != e && !(int(c.End) == e-1 && src[c.End] == '\r') {
			continue // not the line's end: keep it whole
		}
		at := c.Start
		for int(at) > starts[l] && (src[at-1] == ' ' || src[at-1] == '\t') {
			at--
		}
		cut[l] = int(at)
	}
	// Lines that must be kept even when blank: the last; one that a read
	// comment above may cover (covers); one after a backslash
	// continuation. The first
	// two lines are not: they placed an encoding declaration (PEP 263),
	// and the declared encoding is in the Sum.
	keep := func(l int) bool {
		return l == n-1 || covers[l-1] >= 1 || covers[l-2] >= 2 ||
			(l >= 1 && bytes.HasSuffix(bytes.TrimRight(src[starts[l-1]:end(l-1)], "\r"), []byte("\\")))
	}
	protected := protectedRanges(f, src, lineOf)
	inProtected := func(off int) bool {
		i := sort.Search(len(protected), func(i int) bool { return protected[i][1] > off })
		return i < len(protected) && protected[i][0] <= off
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%v\x00%s\x00", digestVersion, rel, DeclaredEncoding(src))
	for _, r := range lexImports(src) {
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", r.module, r.level, strings.Join(r.names, "\x01"))
	}
	docs, inDoc := inertDocstrings(f, src, extra, starts, lineOf, end, read)
	// A blanked kernel body (syntax.BlankKernels: device code, parsed as
	// `...`) is read by nothing but the fix model's kernel summary
	// (fixmodel.KernelSummary: which parameters it stores through): its
	// lines past the first are left out (that one holds the `...` node, and
	// a line's end there is read: kept whole), and each kernel's text is
	// hashed apart (Kernels), for SameKernels to compare.
	psrc, blanked := syntax.BlankKernels(src)
	device := func(l int) bool {
		return blanked && !bytes.Equal(src[starts[l]:end(l)], psrc[starts[l]:end(l)]) && blankLine(psrc[starts[l]:end(l)])
	}
	d := &FileDigest{Lines: n, starts: starts, size: len(src)}
	units := inertUnits(f, src, starts, lineOf, end, read, keep)
	keptLines := 0 // the lines hashed so far (a unit's place among them)
	for _, fn := range f.Funcs {
		if fn.Kernel {
			text := fixmodel.KernelText(fn)
			sum := sha256.Sum256(text)
			k := hex.EncodeToString(sum[:])
			d.Kernels = append(d.Kernels, [2]string{fn.Name, k})
			if d.texts == nil {
				d.texts = map[string][]byte{}
			}
			d.texts[k] = text
			fmt.Fprintf(h, "K%s\x00", fn.Name)
		}
	}
	// Each kept line is hashed as a kind and its parts, each after its
	// length: no two different lines hash alike.
	var head []byte
	frame := func(kind byte, parts ...[]byte) {
		head = append(head[:0], kind)
		for _, p := range parts {
			head = append(strconv.AppendInt(head, int64(len(p)), 10), ':')
			h.Write(head)
			h.Write(p)
			head = head[:0]
		}
	}
	newline := func(e int) []byte { // a line's '\n', none for the last
		if e < len(src) {
			return []byte{'\n'}
		}
		return nil
	}
	for l := 0; l < n; l++ {
		e := end(l)
		if u, ok := units[l]; ok {
			// A dead-store candidate: its lines are left out, and it is
			// listed with its place among the kept lines.
			u.At = keptLines
			d.Units = append(d.Units, u)
			if k := len(d.Dropped); k > 0 && d.Dropped[k-1][1] == l {
				d.Dropped[k-1][1] = l + u.lines
			} else {
				d.Dropped = append(d.Dropped, [2]int{l + 1, l + u.lines})
			}
			l += u.lines - 1
			continue
		}
		if device(l) {
			d.Device = true
			if k := len(d.Dropped); k > 0 && d.Dropped[k-1][1] == l {
				d.Dropped[k-1][1] = l + 1
			} else {
				d.Dropped = append(d.Dropped, [2]int{l + 1, l + 1})
			}
			continue
		}
		if inDoc[l] {
			// A docstring's lines after its first: dropped, its text is
			// not read.
			if k := len(d.Dropped); k > 0 && d.Dropped[k-1][1] == l {
				d.Dropped[k-1][1] = l + 1
			} else {
				d.Dropped = append(d.Dropped, [2]int{l + 1, l + 1})
			}
			continue
		}
		if doc, ok := docs[l]; ok {
			// A docstring's first line: what is before it, and its
			// opening quotes (the code is the same only with a docstring
			// of the same kind there).
			d.Tails = append(d.Tails, [2]int{l + 1, int(doc.Start) - starts[l]})
			frame('D', src[starts[l]:doc.Start], []byte(docDelimiter(doc, src)), newline(e))
			keptLines++
			continue
		}
		stop, cutHere := cut[l]
		if !cutHere {
			stop = e
		}
		text := src[starts[l]:stop]
		if blankLine(text) && !keep(l) && !inProtected(starts[l]) {
			if k := len(d.Dropped); k > 0 && d.Dropped[k-1][1] == l {
				d.Dropped[k-1][1] = l + 1
			} else {
				d.Dropped = append(d.Dropped, [2]int{l + 1, l + 1})
			}
			continue
		}
		keptLines++
		if !cutHere {
			frame('L', text, newline(e))
			continue
		}
		// A line that ends in an inert comment stays one: where a comment
		// comes or goes after code, the end of the code and the end of the
		// line part (a fix that takes a line to its end, a node that takes
		// in a trailing comment).
		d.Tails = append(d.Tails, [2]int{l + 1, stop - starts[l]})
		var cr []byte
		if e > 0 && e < len(src) && src[e-1] == '\r' {
			cr = []byte{'\r'}
		}
		frame('T', text, cr, newline(e))
	}
	d.Sum = hex.EncodeToString(h.Sum(nil))
	return d
}

// KernelText is the text of the kernel with the hash k (an entry of
// Kernels), nil when the digest was not made from the file (one read from
// a cache entry).
func (d *FileDigest) KernelText(k string) []byte { return d.texts[k] }

// SameKernels reports whether the kernels of two versions of a file with
// one Sum are read alike: each kernel whose text changed has the same
// summary (fixmodel.KernelSummary) in both. before's texts come from
// oldText (nil where it has none: not the same, then); why says why not.
func SameKernels(before, now *FileDigest, oldText func(hash string) []byte) (same bool, why string) {
	if len(before.Kernels) != len(now.Kernels) {
		return false, "the kernels differ"
	}
	for i, k := range now.Kernels {
		b := before.Kernels[i]
		if b == k {
			continue
		}
		if b[0] != k[0] {
			return false, "the kernels differ"
		}
		old, text := oldText(b[1]), now.texts[k[1]]
		if old == nil || text == nil {
			return false, "kernel " + k[0] + ": its text before the edit is not kept"
		}
		if sum := sha256.Sum256(old); hex.EncodeToString(sum[:]) != b[1] {
			return false, "kernel " + k[0] + ": its kept text fails its hash"
		}
		if fixmodel.KernelSummary(old) != fixmodel.KernelSummary(text) {
			return false, "kernel " + k[0] + ": it stores through other parameters now"
		}
	}
	return true, ""
}

// inertDocstrings are f's string statements whose text nothing reads, by
// their first line (0-based), and the lines they go on to (inDoc): a string
// that is a whole statement (a def's, class's or module's docstring, or a
// string left in code as a note) in triple quotes without interpolations,
// alone on its lines, not on the last nor on the line after a comment
// whose text is read (its lines are kept: digestOf), holding no claim,
// suppression, type or encoding word and no prefilter token (as an inert
// comment). The analysis reads such a string's node (a statement; a def's
// first is its docstring, not code) and, for a def's docstring, its text
// for a claim; a computed import's dotted names leave statement strings out
// (flow.noteString), and a message or fix that quotes one holds its quotes
// (mayQuote). Until the twenty-eighth pass only a def's docstring was
// taken, past the first two lines: an edit to a class's or module's
// docstring was a whole analysis.
func inertDocstrings(f *File, src []byte, extra [][]byte, starts []int, lineOf func(int) int, end func(int) int, read map[int]bool) (map[int]*syntax.Node, map[int]bool) {
	var docs map[int]*syntax.Node
	var inDoc map[int]bool
	var strs []*syntax.Node
	syntax.Walk(f.Tree.Root, func(n *syntax.Node) bool {
		if n.Kind() != "expression_statement" {
			return true
		}
		if kids := n.NamedChildren(); len(kids) == 1 && kids[0].Kind() == "string" {
			strs = append(strs, kids[0])
		}
		return false // no statement inside an expression
	})
	for _, d := range strs {
		if d.End <= d.Start || int(d.End) > len(src) {
			continue
		}
		first, last := lineOf(int(d.Start)), lineOf(int(d.End-1))
		if first < 0 || last >= len(starts)-1 || (first >= 1 && read[first-1]) || !blankLine(src[starts[first]:d.Start]) || !blankLine(src[d.End:end(last)]) {
			continue
		}
		delim := docDelimiter(d, src)
		if !strings.HasSuffix(delim, `"""`) && !strings.HasSuffix(delim, `'''`) {
			continue
		}
		interpolated := false
		syntax.Walk(d, func(x *syntax.Node) bool {
			if x.Kind() == "interpolation" {
				interpolated = true
			}
			return !interpolated
		})
		if interpolated || !inertText(src[d.Start:d.End], extra) {
			continue
		}
		if docs == nil {
			docs, inDoc = map[int]*syntax.Node{}, map[int]bool{}
		}
		docs[first] = d
		for l := first + 1; l <= last; l++ {
			inDoc[l] = true
		}
	}
	return docs, inDoc
}

// docDelimiter is a string's opening: its prefix and quotes.
func docDelimiter(d *syntax.Node, src []byte) string {
	for _, c := range d.Children() {
		if c.Kind() == "string_start" {
			return c.Text(src)
		}
	}
	return ""
}

// inertText: a comment's or docstring's text that nothing reads (no
// claim, reading word or prefilter token).
func inertText(text []byte, extra [][]byte) bool {
	lower := strings.ToLower(string(text))
	return !containsWord(lower, claimWords) && !containsWord(lower, readingWords) && !relevant(text, extra)
}

// holdsClaimWord: text holds a word every capture-safety claim holds.
func holdsClaimWord(text []byte) bool {
	return containsWord(strings.ToLower(string(text)), claimWords)
}

// containsWord: lower (a text in lower case) holds one of words.
func containsWord(lower string, words []string) bool {
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// protectedRanges are f's byte ranges whose lines are kept even when
// blank, sorted: strings spanning lines (their blank lines are the
// string's). A blanked kernel body's lines are left out whatever they
// hold (digestOf: its summary is hashed instead).
func protectedRanges(f *File, src []byte, lineOf func(int) int) [][2]int {
	var out [][2]int
	syntax.Walk(f.Tree.Root, func(n *syntax.Node) bool {
		if n.End-n.Start < 2 || lineOf(int(n.End-1)) == lineOf(int(n.Start)) {
			return false // one line: no line inside it
		}
		if strings.Contains(n.Kind(), "string") {
			out = append(out, [2]int{int(n.Start), int(n.End)})
			return false
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	// Merge overlaps, so that a search by end finds the covering one.
	merged := out[:0]
	for _, r := range out {
		if k := len(merged); k > 0 && r[0] <= merged[k-1][1] {
			merged[k-1][1] = max(merged[k-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// wholeDigests makes again, whole, the digests taken from
// Options.PriorDigests without their lines (Trimmed) of the files with
// findings or roots: the results cache keeps those files' lines, to move
// their findings after an inert edit.
func wholeDigests(res *Result, files map[string]*File) {
	if res.redigest == nil {
		return
	}
	whole := func(path string) {
		if d := res.Digests[path]; d.Trimmed() && files[path] != nil {
			res.Digests[path] = res.redigest(files[path])
		}
	}
	for _, d := range res.Diagnostics {
		whole(d.Path)
	}
	if res.Settings != nil {
		for _, r := range res.Settings.Roots {
			whole(r.Path)
		}
	}
}

// Trimmed reports whether a digest was kept without its lines (Lines,
// Dropped and Tails: the results cache keeps those of files with findings
// or roots only), its kept lines' hash in Kept.
func (d *FileDigest) Trimmed() bool { return d != nil && d.Lines == 0 }

// equal: the same extension modules and import presets.
func (r Relevance) equal(o Relevance) bool {
	return slices.Equal(r.ExtensionOps, o.ExtensionOps) && slices.Equal(r.ImportPresets, o.ImportPresets)
}

// fileDigests are the digests of the parsed files (by path), for the cache.
func fileDigests(files []*File, rel map[string]bool, extra [][]byte) map[string]*FileDigest {
	digs := make([]*FileDigest, len(files))
	par.Do(len(files), func(k int) { digs[k] = digestOf(files[k], rel[files[k].Path], extra) })
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
func DigestFile(path string, cfg *Config, maxFileSize int64, rel Relevance) (d *FileDigest, ok bool) {
	return digestFile(path, nil, cfg, maxFileSize, rel)
}

// DigestSource is DigestFile for a file's unsaved contents (an editor's
// buffer), as a run with them in Options.Overlay reads them.
func DigestSource(path string, src []byte, cfg *Config, maxFileSize int64, rel Relevance) (d *FileDigest, ok bool) {
	return digestFile(path, map[string][]byte{path: src}, cfg, maxFileSize, rel)
}

// Relevance is what, beside the configuration, the run's prefilter took a
// file's relevance from (load): the modules the project builds as CUDA
// extensions (each one's last name a token) and the presets the files'
// imports turned on (each pattern's literal parts a group that a file
// must hold whole). Both come from every file of the run, and a file's
// relevance is part of its digest's Sum, so a digest made apart from the
// run (DigestFile, DigestSource: the results cache after an edit) must be
// made with the run's Relevance: without it, a file relevant only through
// them had another Sum than the one the run stored, and every edit to it,
// a comment's included, was analysed again. An inert edit cannot change
// them: the lexed imports are in the Sum, and an extension is named in
// code.
type Relevance struct {
	ExtensionOps  []string `json:"extension_ops,omitempty"`
	ImportPresets []string `json:"import_presets,omitempty"`
}

// relevantFor is the run's relevance verdict on src (load's): the
// configuration's and the extensions' tokens, or every part of one of the
// imported presets' patterns. extra are the tokens the digest reads.
func (r Relevance) relevantFor(src []byte, cfg *Config) (rel bool, extra [][]byte) {
	base := configTokens(cfg)
	ext := extensionTokens(r.ExtensionOps)
	return relevant(src, base) || relevantBeyond(src, ext, presetTokens(r.ImportPresets)), append(base, ext...)
}

// relevantBeyond: src holds an extension's token (ext) or every part of
// one of the imported presets' patterns (groups), what the prefilter
// learns from every file (load).
func relevantBeyond(src []byte, ext [][]byte, groups [][][]byte) bool {
	return containsAny(src, ext) || holdsAll(src, groups)
}

func digestFile(path string, overlay map[string][]byte, cfg *Config, maxFileSize int64, relevance Relevance) (d *FileDigest, ok bool) {
	defer func() {
		if recover() != nil {
			d, ok = nil, false
		}
	}()
	limit := cfg.MaxFileBytes()
	if maxFileSize != 0 {
		limit = max(maxFileSize, 0)
	}
	src, ferr := readSource(path, overlay, limit)
	if ferr != nil {
		return nil, false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, false
	}
	f, ferr := parseFile(path, filepath.Clean(abs), "", src, nil)
	if ferr != nil {
		return nil, false
	}
	rel, extra := relevance.relevantFor(src, cfg)
	d = digestOf(f, rel, extra)
	return d, d != nil
}

// A Remap moves positions from a file's version with one digest to its
// version with an equal one: a position on a kept line goes to the same
// kept line (counted among the kept ones) at the same column.
type Remap struct {
	before, now *FileDigest
	keptBefore  []int // 1-based line numbers of the kept lines
	keptNow     []int
}

// NewRemap is the move from before's version to now's; ok is false when
// the digests differ, before lacks its lines or now its offsets (a digest
// from DigestFile or DigestSource has them).
func NewRemap(before, now *FileDigest) (*Remap, bool) {
	if before == nil || now == nil || before.Sum != now.Sum || before.Lines == 0 || len(now.starts) != now.Lines {
		return nil, false
	}
	r := &Remap{before: before, now: now, keptBefore: kept(before), keptNow: kept(now)}
	if len(r.keptBefore) != len(r.keptNow) {
		return nil, false
	}
	return r, true
}

// kept are d's kept lines.
func kept(d *FileDigest) []int {
	out := make([]int, 0, d.Lines)
	k := 0
	for l := 1; l <= d.Lines; l++ {
		for k < len(d.Dropped) && d.Dropped[k][1] < l {
			k++
		}
		if k < len(d.Dropped) && d.Dropped[k][0] <= l {
			continue
		}
		out = append(out, l)
	}
	return out
}

// KeptLines is a hash of the numbers of d's kept lines but the last (the
// lines LinesMoved compares), "" when d holds no lines: two versions of a
// file with one Sum whose KeptLines are equal have their kept lines where
// they were, so no text that quotes a line number of the file changed,
// and a digest stored without its lines (a file with no findings) keeps
// this instead: its Kept (Trimmed), "" for nil.
func (d *FileDigest) KeptLines() string {
	if d == nil {
		return ""
	}
	if d.Lines == 0 {
		return d.Kept
	}
	k := kept(d)
	if len(k) > 0 {
		k = k[:len(k)-1]
	}
	h := sha256.New()
	for _, l := range k {
		fmt.Fprintf(h, "%d,", l)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// LinesMoved reports whether a kept line (but the last, which holds
// nothing when the file ends in a newline) has another number now.
func (r *Remap) LinesMoved() bool {
	for k := 0; k+1 < len(r.keptBefore); k++ {
		if r.keptBefore[k] != r.keptNow[k] {
			return true
		}
	}
	return false
}

// Line moves a kept line's number; ok is false for a dropped line.
func (r *Remap) Line(l int) (int, bool) {
	k := sort.SearchInts(r.keptBefore, l)
	if k >= len(r.keptBefore) || r.keptBefore[k] != l {
		return l, false
	}
	return r.keptNow[k], true
}

// tail is the column where line l's cut comment begins, -1 for none.
func tail(d *FileDigest, l int) int {
	i := sort.Search(len(d.Tails), func(i int) bool { return d.Tails[i][0] >= l })
	if i < len(d.Tails) && d.Tails[i][0] == l {
		return d.Tails[i][1]
	}
	return -1
}

// Pos moves p; ok is false when p is not on a kept line, lies past where
// the line's inert comment began (it points into what was cut), or starts
// a line that blank or comment lines come before in one version only.
func (r *Remap) Pos(p Pos) (Pos, bool) {
	col := p.Column - 1
	if p.Line < 1 || p.Line > r.before.Lines || col < 0 {
		return p, false
	}
	k := sort.SearchInts(r.keptBefore, p.Line)
	if k >= len(r.keptBefore) || r.keptBefore[k] != p.Line {
		return p, false
	}
	tb := tail(r.before, p.Line)
	if tb >= 0 && col > tb {
		return p, false
	}
	l := r.keptNow[k]
	tn := tail(r.now, l)
	if tn >= 0 && col > tn {
		return p, false
	}
	if (tb >= 0) != (tn >= 0) {
		return p, false // (equal digests keep the comments after code)
	}
	if col == 0 && k > 0 && p.Line-r.keptBefore[k-1] != l-r.keptNow[k-1] {
		// The start of a line with lines dropped before it in one
		// version only: the start of the line after the previous one
		// (source.LineEndOf) moved, or this line's start did.
		return p, false
	}
	start, end := r.now.starts[l-1], r.now.size // a line's end: before the next one's start
	if l < len(r.now.starts) {
		end = r.now.starts[l] - 1
	}
	if start+col > end {
		return p, false
	}
	return Pos{Line: l, Column: p.Column, Offset: start + col}, true
}

// Moved is r after an edit the results cache served (guard/cache's
// ReuseResult): its findings and settings replaced, and the named files'
// sources (the bytes the moved offsets point into) replaced too.
func (r *Result) Moved(diags []*Diagnostic, settings *Settings, sources map[string][]byte) *Result {
	out := *r
	out.Diagnostics, out.Settings = diags, settings
	out.sources = make(map[string][]byte, len(r.sources))
	for p, src := range r.sources {
		out.sources[p] = src
	}
	for p, src := range sources {
		if dec, _, err := DecodeSource(src); err == nil {
			src = dec // as readSource gives it
		}
		out.sources[p] = src
	}
	return &out
}

// An InertUnit is a dead-store candidate of a file's digest: a module-level
// statement alone on its lines that binds names to a literal (`X = 4`,
// `A = B = (1, "b")`). Nothing the analysis does with it reaches past the
// names it binds: the literal calls nothing and reads no name, and a
// module-level statement runs at import, never under a capture. So when no
// file reads those names, the statement changes no finding, and an edit
// that adds, removes or changes only such statements is served like an edit
// to comments (ChangedUnitNames, UnreadNames).
type InertUnit struct {
	// At is how many kept lines come before it; with its order among the
	// units at one place and Sum it says whether two versions hold the same
	// unit in the same place.
	At int `json:"at"`
	// Sum is the SHA-256 of the statement's text.
	Sum string `json:"sum"`
	// Names are the names it binds.
	Names []string `json:"names"`

	lines int // how many lines it takes (digestOf)
}

// inertUnits finds f's dead-store candidates (InertUnit), by their first
// line (0-based): a module-level expression statement whose one child is an
// assignment (chained ones too) of plain names, without an annotation, to a
// literal (literalOnly), which no other statement and no comment whose text
// is read shares a line with, on lines none of which digestOf must keep
// (keep: the first two, the last, those after a read comment or a backslash
// continuation). Dunder names (`__all__`, `__version__`) are read by
// Python's machinery and never make one.
func inertUnits(f *File, src []byte, starts []int, lineOf func(int) int, end func(int) int, read map[int]bool, keep func(int) bool) map[int]InertUnit {
	var out map[int]InertUnit
	kids := f.Tree.Root.Children()
	for i, st := range kids {
		if st.Kind() != "expression_statement" || len(st.Children()) != 1 || st.End <= st.Start {
			continue
		}
		names := assignedNames(st.Children()[0], src)
		if names == nil {
			continue
		}
		first, last := lineOf(int(st.Start)), lineOf(int(st.End-1))
		if first < 0 || (i > 0 && lineOf(int(kids[i-1].End-1)) >= first) || (i+1 < len(kids) && lineOf(int(kids[i+1].Start)) <= last) {
			continue // another statement, or a `;`, shares a line
		}
		if !blankLine(src[starts[first]:st.Start]) {
			continue
		}
		rest := bytes.TrimLeft(src[st.End:end(last)], " \t\r")
		if len(rest) > 0 && rest[0] != '#' {
			continue
		}
		ok := true
		for l := first; l <= last && ok; l++ {
			ok = !read[l] && !keep(l)
		}
		if !ok {
			continue
		}
		sum := sha256.Sum256(src[st.Start:st.End])
		if out == nil {
			out = map[int]InertUnit{}
		}
		out[first] = InertUnit{Sum: hex.EncodeToString(sum[:]), Names: names, lines: last - first + 1}
	}
	return out
}

// assignedNames are the names an assignment of plain names to a literal
// binds (`A = B = 1`: A and B), nil when a is no such assignment.
func assignedNames(a *syntax.Node, src []byte) []string {
	var names []string
	for a != nil && a.Kind() == "assignment" {
		left, right := a.Get("left"), a.Get("right")
		if left == nil || right == nil || left.Kind() != "identifier" || a.Get("type") != nil {
			return nil
		}
		name := left.Text(src)
		if strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__") {
			return nil
		}
		names = append(names, name)
		if right.Kind() == "assignment" {
			a = right
			continue
		}
		if !literalOnly(right) || namesCode(right, src) {
			return nil
		}
		return names
	}
	return nil
}

// namesCode: a string in n reads as a dotted name, which
// `importlib.import_module` and a computed getattr may resolve to project
// code whether or not any file reads the name it is bound to
// (flow/importstr.go): such a literal is never inert.
func namesCode(n *syntax.Node, src []byte) bool {
	found := false
	syntax.Walk(n, func(x *syntax.Node) bool {
		if found {
			return false
		}
		if x.Kind() == "string" {
			if t, ok := index.StringLit(x, src); ok && index.IsDottedName(t) {
				found = true
			}
			return false
		}
		return true
	})
	return found
}

// literalOnly: n is a literal, or built of literals by operators,
// parentheses, tuples, lists, sets and dicts; it calls nothing and reads no
// name (a string with an interpolation reads one).
func literalOnly(n *syntax.Node) bool {
	switch n.Kind() {
	case "integer", "float", "true", "false", "none", "ellipsis":
		return true
	case "string":
		for _, c := range n.Children() {
			if c.Kind() == "interpolation" {
				return false
			}
		}
		return true
	case "concatenated_string", "unary_operator", "binary_operator", "parenthesized_expression",
		"tuple", "list", "set", "dictionary", "pair", "expression_list":
		for _, c := range n.NamedChildren() {
			if !literalOnly(c) {
				return false
			}
		}
		return len(n.NamedChildren()) > 0 || n.Kind() == "tuple" || n.Kind() == "list" || n.Kind() == "dictionary"
	}
	return false
}

// ChangedUnitNames are the names bound by the dead-store candidates that
// two versions of a file with one Sum do not share: a unit is shared when
// both hold one with its text at its place (InertUnit.At, and its order
// among the units there). Sorted, each once.
func ChangedUnitNames(before, now *FileDigest) []string {
	keys := func(d *FileDigest) map[string][]string {
		m := map[string][]string{}
		seq := map[int]int{}
		for _, u := range d.Units {
			m[fmt.Sprintf("%d/%d/%s", u.At, seq[u.At], u.Sum)] = u.Names
			seq[u.At]++
		}
		return m
	}
	b, n := keys(before), keys(now)
	set := map[string]bool{}
	only := func(in, other map[string][]string) {
		for k, names := range in {
			if _, ok := other[k]; !ok {
				for _, x := range names {
					set[x] = true
				}
			}
		}
	}
	only(b, n)
	only(n, b)
	return slices.Sorted(maps.Keys(set))
}

// UnreadNames says which of names some text could read ("" when none):
// the file now (its text src, its digest d) may hold each only where its
// dead-store candidates bind it, and no other text of the run (others: each
// other file's text, and the configuration's) may hold it at all. Any
// occurrence counts, in a comment, a string or a longer name too: a name
// that appears nowhere else is read by nothing (a getattr or an `__all__`
// spells it; a star import copies it, but then whatever reads the copy
// spells it).
func UnreadNames(d *FileDigest, src []byte, names []string, others func(yield func(path string, text []byte) bool)) string {
	if len(names) == 0 {
		return ""
	}
	bound := map[string]int{}
	for _, u := range d.Units {
		for _, x := range u.Names {
			bound[x]++
		}
	}
	pats := make([][]byte, len(names))
	for i, x := range names {
		pats[i] = []byte(x)
		if bytes.Count(src, pats[i]) != bound[x] {
			return "`" + x + "` appears in the file where no literal binds it"
		}
	}
	for p, text := range others {
		if bytes.IndexByte(text, 0) >= 0 {
			return p + " is not plain text (UTF-16?): a name in it would not be seen"
		}
		for i, pat := range pats {
			if bytes.Contains(text, pat) {
				return "`" + names[i] + "` appears in " + p
			}
		}
	}
	return ""
}
