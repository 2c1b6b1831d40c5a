// Package cache keeps `capguard check`'s results between runs, as ruff's
// .ruff_cache does, in a folder (.capguard_cache by default). It is the
// command line's client of the analysis, a layer above package guard:
// findings are stored in their one JSON form (guard.Diagnostic's).
//
// A finding depends on the whole project: a call chain through files that
// hold nothing relevant themselves, the module names that __init__.py files
// make, the configuration and capguard itself. So a result is keyed by all
// of it: capguard's version and binary, the working directory, the options
// and resolved configuration, every checked file's path and content hash,
// and the __init__.py facts of their folders. An edit to any file of the
// run, a new or removed file, or another configuration is a miss; a re-run
// on an unchanged tree reads the stored result instead of parsing and
// analysing.
//
// Content hashes are themselves cached per file, by path, size, inode,
// modification and change time, as git's index does: a file whose stat has
// not changed since it was hashed is not read again. A file changed within
// two seconds of the index being written is hashed again on the next run
// (git's "racy" rule).
//
// A run with buffers (guard.Options.Overlay: an editor's unsaved file,
// through standard input) is keyed the same way, each buffer's hash taken
// from its bytes and no stat recorded for it, so the same buffer again is
// a hit, an inert edit to it moves the stored findings, and a later run on
// the disk's bytes hashes that file again.
//
// The walk that finds the files is cached the same way: a folder's stat
// changes when an entry is added, removed or renamed in it, so while no
// folder the walk listed (and no .gitignore it read) changed, the stored
// file list stands and a re-run only stats.
//
// Layout: <dir>/<format version>/<run id>.json per distinct run (paths,
// options, working directory), holding the key, the walk, the per-file
// hashes and stats, and the findings grouped per file, each the whole
// guard.Diagnostic in its JSON form; a .gitignore with "*" and a
// CACHEDIR.TAG. An entry begins with a line holding the SHA-256 of the rest:
// an entry that fails it (a disk or copy error, an edit) is not served but
// recomputed, and the run says so once.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cudagraph-capguard/capguard/guard"
)

// formatVersion changes whenever the entry layout changes.
const formatVersion = "v5"

// DirName is the default cache folder's name.
const DirName = ".capguard_cache"

// Options of a cached run.
type Options struct {
	Dir     string // the cache folder
	Version string // capguard's version (with its VCS revision)
	// Extra is more key material: anything else that changes the result.
	Extra []string
	// Sources, when set, has a served result (a hit, or a stored result
	// moved past inert edits) carry the text of the files it names, as
	// guard.Run's result does (guard.Result.Source): FixSources, every
	// file a finding's fix edits (capguard fix, so that a fix is applied
	// to the bytes it was made for); FindingSources, every file with a
	// finding (capguard server, which counts a diagnostic's range in its
	// file's text). Each file is read again, checked against the hash the
	// result was served for and decoded; where a file's bytes are no
	// longer those, the run is analysed and not stored (Bypassed).
	Sources Sources
	// Covers, when set, is asked whether the run's files (as its walk
	// spells them) cover what the caller needs, before anything is
	// analysed or served; when it says no, Run does nothing more and
	// returns NotCovered. capguard check FILE sets it to take the stored
	// result of the file's project (a run over files reports on them what
	// the run over their project does).
	Covers func(files []string) bool
}

// Sources names the files whose texts a served result carries
// (Options.Sources).
type Sources int

const (
	NoSources      Sources = iota
	FixSources             // the files a finding's fix edits
	FindingSources         // the files with a finding
)

// Status says what the cache did.
type Status string

const (
	Hit      Status = "hit"      // the stored result was used
	Miss     Status = "miss"     // analysed, and stored
	Bypassed Status = "bypassed" // not cacheable (a buffer of a file not on disk, unreadable paths), analysed
	Failed   Status = "failed"   // analysed, but the result could not be stored
	// NotCovered: Options.Covers said the run's files do not cover what
	// the caller needs; nothing was analysed.
	NotCovered Status = "not covered"
)

// DefaultDir is the cache folder for a config: its cache-dir, else
// .capguard_cache beside it, else in the working directory.
func DefaultDir(cfg *guard.Config) string {
	if cfg != nil && cfg.Path != "" {
		if cfg.CacheDir != "" {
			if filepath.IsAbs(cfg.CacheDir) {
				return cfg.CacheDir
			}
			return filepath.Join(cfg.Dir(), cfg.CacheDir)
		}
		return filepath.Join(cfg.Dir(), DirName)
	}
	return DirName
}

// Run is guard.Run with the cache: it returns the stored result when the
// key matches, else runs guard.Run and stores its result. opts.Config must
// be set (the resolved configuration is part of the key).
func Run(opts guard.Options, c Options) (*guard.Result, Status, error) {
	if len(opts.Overlay) > 0 {
		// Buffers (an editor's, through standard input) stand for their
		// files: hashed from the buffers, and never trusted by stat (their
		// stat is the disk's), so a run on the disk's bytes hashes those
		// files again. A run not served analyses with the other files'
		// trees from the pack.
		opts.TreeFile = TreeFile(c)
		for p := range opts.Overlay {
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				return bypass(opts, c, nil) // a new file: no walk holds it
			}
		}
	}
	if opts.Config == nil {
		return bypass(opts, c, nil)
	}
	dir := filepath.Join(c.Dir, formatVersion)
	id, err := runID(opts, c)
	if err != nil {
		return bypass(opts, c, nil)
	}
	entryPath := filepath.Join(dir, id+".json")
	old, corrupt := readEntry(entryPath)
	// warn adds the warning about a corrupt entry to a result (after it is
	// stored: the stored result does not carry it).
	warn := func(res *guard.Result) {
		if corrupt && res != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the cache entry %s failed its checksum (a disk, copy or edit error); results recomputed", entryPath))
		}
	}
	start := time.Now()
	// The files of the run: the walk's again when no folder it listed (and
	// no .gitignore it read) changed since; else a new walk.
	var files []string
	var walked []walkEntry
	if old != nil {
		files, walked = old.Discovered, old.Walked
		if !unchanged(walked, old.Written) {
			files, walked = nil, nil
		}
	}
	if walked == nil {
		found, paths, errs := guard.DiscoverWalk(opts.Paths, opts.Config)
		if len(errs) > 0 {
			return bypass(opts, c, warn)
		}
		files = found
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				return bypass(opts, c, warn)
			}
			walked = append(walked, walkEntry{Path: p, Stat: statOf(fi)})
		}
	}
	if c.Covers != nil && !c.Covers(files) {
		return nil, NotCovered, nil
	}
	hashes, stats, rehashed, ok := hashFiles(files, old, opts.Overlay)
	if !ok { // a file could not be read: let guard report it
		return bypass(opts, c, warn)
	}
	pkgs := guard.PackageDirs(files)
	key := resultKey(id, files, hashes, pkgs)
	if old != nil && old.Key != key {
		// An edit to inert comments only: the stored result, moved.
		if e, ok := reuse(opts, id, key, old, files, hashes, stats, pkgs, packPath(entryPath)); ok {
			e.Written = start.UnixNano()
			e.Discovered, e.Walked = files, walked
			res := e.result(opts.Config)
			setOverlay(res, opts.Overlay)
			if c.Sources != NoSources && !fixSources(res, files, hashes, opts.Overlay, c.Sources) {
				return bypass(opts, c, warn)
			}
			if err := writeEntry(c.Dir, entryPath, e); err != nil {
				return res, Failed, err
			}
			return res, Reused, nil
		}
	}
	if old != nil && old.Key == key {
		res := old.result(opts.Config)
		setOverlay(res, opts.Overlay)
		if c.Sources != NoSources && !fixSources(res, files, hashes, opts.Overlay, c.Sources) {
			return bypass(opts, c, warn)
		}
		if rehashed > 0 || !sameWalk(old.Walked, walked) {
			// Record the new stats, so that the next run need not read
			// those files again.
			old.Written = start.UnixNano()
			old.Walked = walked
			for i := range old.Files {
				if i < len(stats) && old.Files[i].Path == files[i] {
					old.Files[i].Stat = stats[i]
				}
			}
			writeEntry(c.Dir, entryPath, old)
		}
		return res, Hit, nil
	}
	opts.Digests = true
	// The run's syntax trees, kept for its next run (guard's treeStore):
	// after an edit only the changed files are parsed again.
	opts.TreeFile = treesPath(dir, c)
	// The stored digests of the files whose bytes are the stored run's,
	// taken again instead of made (guard.Options.PriorDigests); their
	// kernels' texts are in the stored run's pack.
	var oldTexts map[string][]byte
	if old != nil {
		opts.PriorDigests, opts.PriorRelevance = priorDigests(old, files, hashes)
		if len(opts.PriorDigests) > 0 {
			oldTexts = readKernels(packPath(entryPath))
		}
	}
	res, err := guard.Run(opts)
	if err != nil {
		return nil, Miss, err
	}
	digests := make([]*guard.FileDigest, 0, len(res.Digests))
	for _, d := range res.Digests {
		digests = append(digests, d)
	}
	writeKernels(packPath(entryPath), digests, oldTexts)
	e := newEntry(key, files, hashes, stats, res)
	e.Written = start.UnixNano()
	e.Discovered, e.Walked = files, walked
	err = writeEntry(c.Dir, entryPath, e)
	warn(res)
	if err != nil {
		return res, Failed, err
	}
	return res, Miss, nil
}

// bypass analyses a run that is not stored (its files cannot all be
// hashed, or changed while it was being served: fixSources), and warns of
// a corrupt entry (warn, when not nil). A run whose caller needs its
// files covered (Options.Covers) is not analysed: NotCovered, and the
// caller runs its own.
func bypass(opts guard.Options, c Options, warn func(*guard.Result)) (*guard.Result, Status, error) {
	if c.Covers != nil {
		return nil, NotCovered, nil
	}
	res, err := guard.Run(opts)
	if warn != nil {
		warn(res)
	}
	return res, Bypassed, err
}

// fixSources gives a served result the text of each file a finding's fix
// edits, or of each file with a finding (which: Options.Sources): a
// buffer's decoded, or the file's read again and decoded when its bytes
// hash to hashes' entry for it. It reports false when a file cannot be
// read, is not one of files, or changed.
func fixSources(res *guard.Result, files, hashes []string, overlay map[string][]byte, which Sources) bool {
	at := make(map[string]int, len(files))
	for i, f := range files {
		at[f] = i
	}
	done := map[string]bool{}
	for _, d := range res.Diagnostics {
		if (which == FixSources && d.Fix == nil) || done[d.Path] {
			continue
		}
		done[d.Path] = true
		raw, open := overlay[d.Path]
		if !open {
			i, ok := at[d.Path]
			if !ok {
				return false
			}
			var err error
			if raw, err = os.ReadFile(d.Path); err != nil {
				return false
			}
			if hashBytes(raw) != hashes[i] {
				return false
			}
		}
		text, _, err := guard.DecodeSource(raw)
		if err != nil {
			return false
		}
		res.SetSource(d.Path, text)
	}
	return true
}

// runID names a run by what is fixed for it: the cache format, capguard's
// version and binary, the working directory, the paths and options, and
// the resolved configuration.
func runID(opts guard.Options, c Options) (string, error) {
	h := sha256.New()
	w := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s\x00", len(p), p)
		}
	}
	w("binary", binaryID(c))
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	w("wd", wd)
	ok, err := optionsKey(opts)
	if err != nil {
		return "", err
	}
	w("options", ok)
	cfg, err := json.Marshal(opts.Config)
	if err != nil {
		return "", err
	}
	w("config", opts.Config.Path, string(cfg))
	// A capture map recorded by capguard trace joins the contexts: its
	// contents are part of the key (a map that cannot be read: no cache).
	if m := guard.CaptureMapFile(opts); m != "" {
		sum, err := hashFile(m)
		if err != nil {
			return "", err
		}
		w("capture-map", m, sum, fmt.Sprint(opts.CoverageRequired))
	}
	w("extra")
	w(c.Extra...)
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// binaryID names the capguard that runs: the cache format, its version,
// Go's, and its executable's path, size and time. A syntax tree is read
// back only by the binary that parsed it (treesPath).
func binaryID(c Options) string {
	h := sha256.New()
	for _, p := range []string{"capguard-cache", formatVersion, c.Version, runtime.Version()} {
		fmt.Fprintf(h, "%d:%s\x00", len(p), p)
	}
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			fmt.Fprintf(h, "exe\x00%s\x00%d %d\x00", exe, st.Size(), st.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// optionsKey is every field of guard.Options in its JSON form but those
// that do not change the result or are keyed apart: the progress callback,
// the overlay (a run with one is not cached), the resolved config (runID
// keys it), the tree cache and the digests, asked for or given, the
// context, and the files whose findings are given early (they change how,
// when, or what else is returned, not the findings: guard's
// TestEarlyIsTheFilesPart), unless the run checks those files only.
// A field added to Options joins the key unasked.
func optionsKey(opts guard.Options) (string, error) {
	v := reflect.ValueOf(opts)
	t := v.Type()
	var b bytes.Buffer
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		switch {
		case !f.IsExported(), f.Name == "Progress", f.Name == "Overlay", f.Name == "Config", f.Name == "Trees", f.Name == "TreeFile", f.Name == "Digests",
			f.Name == "PriorDigests", f.Name == "PriorRelevance", f.Name == "Context", f.Name == "First" && !opts.FirstOnly:
			continue
		case f.Type.Kind() == reflect.Func || f.Type.Kind() == reflect.Chan:
			continue
		}
		j, err := json.Marshal(v.Field(i).Interface())
		if err != nil {
			return "", fmt.Errorf("cache key: option %s: %w", f.Name, err)
		}
		fmt.Fprintf(&b, "%s=%s\x00", f.Name, j)
	}
	return b.String(), nil
}

// resultKey adds what changes between runs of one id: the files, their
// contents and their folders' __init__.py facts.
func resultKey(id string, files []string, hashes []string, pkgs map[string]bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", id, len(files))
	for i, f := range files {
		fmt.Fprintf(h, "%s\x00%s\x00", f, hashes[i])
	}
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		fmt.Fprintf(h, "pkg\x00%s\x00%v\x00", d, pkgs[d])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fileStat is what decides that a file's stored hash still holds.
type fileStat struct {
	Size  int64 `json:"size"`
	Mtime int64 `json:"mtime"`
	Ctime int64 `json:"ctime"`
	Ino   uint64
}

func statOf(fi os.FileInfo) fileStat {
	s := fileStat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Ino = st.Ino
		s.Ctime = time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)).UnixNano()
	}
	return s
}

// racyWindow: a file modified this close to (or after) the time its hash
// was recorded may change again within the same timestamp; hash it again.
var racyWindow = 2 * time.Second

// setOverlay gives a stored result the buffers it was served for: their
// hashes are the stored run's, so they are the bytes it read.
func setOverlay(res *guard.Result, overlay map[string][]byte) {
	for p, src := range overlay {
		res.SetSource(p, src)
	}
}

// hashFiles returns each file's content hash and stat, reusing old's hash
// where the file's stat is unchanged and was not racy, and how many files
// it read. ok is false when a file cannot be read. A file in overlay is
// hashed from its buffer and gets no stat.
func hashFiles(files []string, old *entry, overlay map[string][]byte) (hashes []string, stats []fileStat, read int, ok bool) {
	prev := map[string]fileEntry{}
	var written int64
	if old != nil {
		written = old.Written
		for _, f := range old.Files {
			prev[f.Path] = f
		}
	}
	out := make([]string, len(files))
	stats = make([]fileStat, len(files))
	var bad sync.Once
	ok = true
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if src, open := overlay[files[i]]; open {
					out[i] = hashBytes(src) // as hashFile; no stat
					continue
				}
				fi, err := os.Stat(files[i])
				if err != nil || !fi.Mode().IsRegular() {
					bad.Do(func() { ok = false })
					continue
				}
				st := statOf(fi)
				stats[i] = st
				if p, found := prev[files[i]]; found && p.Stat == st &&
					st.Mtime < written-int64(racyWindow) && st.Ctime < written-int64(racyWindow) {
					out[i] = p.Hash
					continue
				}
				h, err := hashFile(files[i])
				if err != nil {
					bad.Do(func() { ok = false })
					continue
				}
				out[i] = h
				mu.Lock()
				read++
				mu.Unlock()
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, stats, read, ok
}

// hashBytes is the SHA-256 of b in hex: a file's content hash (hashFile
// streams the same from disk) and an entry's checksum.
func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// walkEntry is a folder the walk listed (or a .gitignore it read) and its
// stat then.
type walkEntry struct {
	Path string
	Stat fileStat
}

// unchanged reports whether every folder and .gitignore of a walk still has
// the stat it had, and none was changed so close to the walk (written) that
// a later change could keep its timestamps.
func unchanged(walked []walkEntry, written int64) bool {
	if len(walked) == 0 {
		return false
	}
	for _, w := range walked {
		fi, err := os.Stat(w.Path)
		if err != nil {
			return false
		}
		st := statOf(fi)
		if st != w.Stat || st.Mtime >= written-int64(racyWindow) || st.Ctime >= written-int64(racyWindow) {
			return false
		}
	}
	return true
}

func sameWalk(a, b []walkEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// entry is one stored run.
type entry struct {
	Key     string `json:"key"`
	Written int64  `json:"written"` // when the run started (ns): files and folders changed after are racy
	// Discovered are the run's files in the walk's order, Walked what the
	// walk listed and read to find them.
	Discovered []string    `json:"discovered"`
	Walked     []walkEntry `json:"walked"`
	Files      []fileEntry `json:"files"`
	Checked    int         `json:"checked"`
	Parsed     int         `json:"parsed"`
	Errors     []fileError `json:"errors"`
	Warnings   []string    `json:"warnings"`
	Presets    []string    `json:"presets"`
	// Relevance is what beside the configuration the run's prefilter read
	// (guard.Relevance): the digests of edited files are made with it.
	Relevance guard.Relevance `json:"relevance"`

	// Settings are what the run assumed (check --show-settings, JSON).
	Settings *guard.Settings `json:"settings,omitempty"`
}

// fileEntry is a file's hash and stat, and its findings.
type fileEntry struct {
	Path     string       `json:"path"`
	Hash     string       `json:"hash"`
	Stat     fileStat     `json:"stat"`
	Findings []diagnostic `json:"findings,omitempty"`
	// Digest is the file's digest (guard.FileDigest) when it was parsed
	// without a syntax error; its lines only when it has findings or
	// roots (the settings').
	Digest *guard.FileDigest `json:"digest,omitempty"`
}

type fileError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Syntax  bool   `json:"syntax,omitempty"`
	Decode  bool   `json:"decode,omitempty"`
}

// diagnostic is a stored finding: the guard.Diagnostic in its one JSON
// form (the JSON report's finding: guard/analysis), and its place in the
// result.
type diagnostic struct {
	Order      int              `json:"order"`
	Diagnostic guard.Diagnostic `json:"diagnostic"`
}

// encodeDiagnostic and decodeDiagnostic are the stored form of a finding;
// decoding gives back an equal Diagnostic (reflect.DeepEqual), its Rule the
// registered one (a stand-in for an ID this capguard lacks).
func encodeDiagnostic(d *guard.Diagnostic, order int) ([]byte, error) {
	return json.Marshal(storedDiagnostic(d, order))
}

func decodeDiagnostic(b []byte) (*guard.Diagnostic, error) {
	var cd diagnostic
	if err := json.Unmarshal(b, &cd); err != nil {
		return nil, err
	}
	return cd.restore(), nil
}

func storedDiagnostic(d *guard.Diagnostic, order int) diagnostic {
	return diagnostic{Order: order, Diagnostic: *d}
}

func (cd diagnostic) restore() *guard.Diagnostic {
	d := cd.Diagnostic
	return &d
}

func newEntry(key string, files, hashes []string, stats []fileStat, res *guard.Result) *entry {
	e := &entry{Key: key, Checked: res.Files, Parsed: res.Parsed, Warnings: res.Warnings, Presets: res.Presets, Relevance: res.Relevance}
	e.Settings = res.Settings
	index := map[string]int{}
	for i, f := range files {
		fe := fileEntry{Path: f, Hash: hashes[i], Digest: res.Digests[f]}
		if i < len(stats) {
			fe.Stat = stats[i]
		}
		index[f] = len(e.Files)
		e.Files = append(e.Files, fe)
	}
	for i, d := range res.Diagnostics {
		cd := storedDiagnostic(d, i)
		j, ok := index[d.Path]
		if !ok {
			j = len(e.Files)
			index[d.Path] = j
			e.Files = append(e.Files, fileEntry{Path: d.Path})
		}
		e.Files[j].Findings = append(e.Files[j].Findings, cd)
	}
	for _, fe := range res.Errors {
		e.Errors = append(e.Errors, fileError{fe.Path, fe.Message, fe.Syntax, fe.Decode})
	}
	// A file's lines are kept only where there are findings or roots to
	// move.
	rooted := map[string]bool{}
	if e.Settings != nil {
		for _, r := range e.Settings.Roots {
			rooted[r.Path] = true
		}
	}
	for j := range e.Files {
		if len(e.Files[j].Findings) == 0 && !rooted[e.Files[j].Path] {
			e.Files[j].Digest = sumOnly(e.Files[j].Digest)
		}
	}
	return e
}

// result rebuilds a guard.Result (without sources: the report reads the
// files with findings from disk).
func (e *entry) result(cfg *guard.Config) *guard.Result {
	res := &guard.Result{Files: e.Checked, Parsed: e.Parsed, Warnings: e.Warnings, Presets: e.Presets, Relevance: e.Relevance, Config: cfg}
	res.Settings = e.Settings
	// The stored digests (trimmed where a file has no findings or roots):
	// capguard server moves a served result after an inert edit with them.
	res.Digests = map[string]*guard.FileDigest{}
	for _, f := range e.Files {
		if f.Digest != nil {
			res.Digests[f.Path] = f.Digest
		}
	}
	var all []diagnostic
	for _, f := range e.Files {
		all = append(all, f.Findings...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Order < all[j].Order })
	for _, d := range all {
		res.Diagnostics = append(res.Diagnostics, d.restore())
	}
	for _, fe := range e.Errors {
		res.Errors = append(res.Errors, guard.FileError{Path: fe.Path, Message: fe.Message, Syntax: fe.Syntax, Decode: fe.Decode})
	}
	return res
}

// entryMagic begins an entry's first line, which then holds the SHA-256
// of the rest.
const entryMagic = "capguard-cache " + formatVersion + " sha256 "

// readEntry reads a stored run: nil when there is none or it cannot be
// decoded; corrupt when it is there but fails its checksum.
func readEntry(p string) (e *entry, corrupt bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	body, ok := checkEntry(data)
	if !ok {
		return nil, true
	}
	e = &entry{}
	if err := json.Unmarshal(body, e); err != nil {
		return nil, true
	}
	return e, false
}

// checkEntry returns an entry's body when its first line's checksum holds.
func checkEntry(data []byte) ([]byte, bool) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.HasPrefix(data, []byte(entryMagic)) {
		return nil, false
	}
	if string(data[len(entryMagic):nl]) != hashBytes(data[nl+1:]) {
		return nil, false
	}
	return data[nl+1:], true
}

// encodeEntry is an entry's bytes: the checksum line, then its JSON.
func encodeEntry(e *entry) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(entryMagic)+65+len(body))
	out = append(out, entryMagic...)
	out = append(out, hashBytes(body)...)
	out = append(out, '\n')
	return append(out, body...), nil
}

// A kernel pack (<run id>.kernels, beside the entry) keeps the texts of
// the run's kernels (guard.FileDigest's Kernels) by hash: an edit inside a
// kernel body is served when the kernel's summary before the edit, made
// from its kept text, is the summary now. Each record is a line "K <hash>
// <length>" and the text; a run that analyses writes the pack anew (its
// kernels only), one that reuses appends the changed files' kernels. A
// record that is cut short or fails its hash only stops a reuse.
func packPath(entryPath string) string { return strings.TrimSuffix(entryPath, ".json") + ".kernels" }

// treesPath is the pack of syntax trees in cache folder dir, one for
// every run of this binary (a tree depends only on the parser and the
// bytes it read): a run of one file with its project's context
// (`capguard check FILE`, an editor's route) reads the trees a run of the
// folder left, and an entry for each file checked adds no pack of its own
// (FlagGems' src/: 18.5 MB). A pack of another binary goes when this one's
// is first written.
func treesPath(dir string, c Options) string {
	p := filepath.Join(dir, "trees-"+binaryID(c)+".pack")
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		if old, _ := filepath.Glob(filepath.Join(dir, "trees-*.pack")); len(old) > 0 {
			for _, o := range old {
				os.Remove(o)
			}
		}
	}
	return p
}

// priorDigests are a stored run's digests of the files whose hashes are
// the same now, by path, and that run's relevance (guard.Options).
func priorDigests(old *entry, files, hashes []string) (map[string]*guard.FileDigest, *guard.Relevance) {
	now := make(map[string]string, len(files))
	for i, f := range files {
		now[f] = hashes[i]
	}
	prior := map[string]*guard.FileDigest{}
	for _, fe := range old.Files {
		if fe.Digest != nil && fe.Hash != "" && now[fe.Path] == fe.Hash {
			prior[fe.Path] = fe.Digest
		}
	}
	rel := old.Relevance
	return prior, &rel
}

// TreeFile is the pack of syntax trees a run with c keeps in its cache
// folder (guard.Options.TreeFile): capguard server's first analysis with
// unsaved buffers and capguard fix's analyses read the trees a cached run
// left there, and write the pack of theirs. The folder is made here, with
// its markers (markCacheDir), as a stored entry makes it: a pack written
// alone into a new folder left it without its .gitignore.
func TreeFile(c Options) string {
	markCacheDir(c.Dir)
	return treesPath(filepath.Join(c.Dir, formatVersion), c)
}

// markCacheDir makes the cache folder root, with a .gitignore that
// ignores all of it and a CACHEDIR.TAG (best effort: a folder that cannot
// be made is reported by the write that needs it).
func markCacheDir(root string) {
	if os.MkdirAll(root, 0o755) != nil {
		return
	}
	for name, body := range map[string]string{
		".gitignore":   "# Made by capguard's cache.\n*\n",
		"CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag made by capguard.\n",
	} {
		if _, err := os.Stat(filepath.Join(root, name)); errors.Is(err, os.ErrNotExist) {
			os.WriteFile(filepath.Join(root, name), []byte(body), 0o644)
		}
	}
}

// packRecords are the records of the digests' kernel texts, each once;
// a digest taken from a stored run (guard.Options.PriorDigests) has no
// texts, and oldTexts (that run's pack) gives them.
func packRecords(digests []*guard.FileDigest, oldTexts map[string][]byte) []byte {
	var b bytes.Buffer
	seen := map[string]bool{}
	for _, d := range digests {
		if d == nil {
			continue
		}
		for _, k := range d.Kernels {
			text := d.KernelText(k[1])
			if text == nil {
				text = oldTexts[k[1]]
			}
			if text == nil || seen[k[1]] {
				continue
			}
			seen[k[1]] = true
			fmt.Fprintf(&b, "K %s %d\n", k[1], len(text))
			b.Write(text)
		}
	}
	return b.Bytes()
}

// writeKernels writes the pack of a run that analysed (best effort).
func writeKernels(path string, digests []*guard.FileDigest, oldTexts map[string][]byte) {
	data := packRecords(digests, oldTexts)
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kernels-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// appendKernels adds the digests' kernel texts to a pack (best effort).
func appendKernels(path string, digests []*guard.FileDigest) {
	data := packRecords(digests, nil)
	if len(data) == 0 {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	f.Write(data)
	f.Close()
}

// readKernels reads a pack: the texts by hash (the records before the
// first one that is cut short or not a record).
func readKernels(path string) map[string][]byte {
	data, err := os.ReadFile(path)
	out := map[string][]byte{}
	if err != nil {
		return out
	}
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			break
		}
		var hash string
		var n int
		if c, err := fmt.Sscanf(string(data[:nl]), "K %s %d", &hash, &n); err != nil || c != 2 || n < 0 || nl+1+n > len(data) {
			break
		}
		out[hash] = data[nl+1 : nl+1+n]
		data = data[nl+1+n:]
	}
	return out
}

// writeEntry stores e atomically (a temporary file renamed over the old
// entry), making the cache folder with its .gitignore and CACHEDIR.TAG.
func writeEntry(root, p string, e *entry) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	markCacheDir(root)
	data, err := encodeEntry(e)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".entry-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}
