// Package cache keeps `capguard check`'s results between runs, as ruff's
// .ruff_cache does, in a folder (.capguard_cache by default).
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
// The walk that finds the files is cached the same way: a folder's stat
// changes when an entry is added, removed or renamed in it, so while no
// folder the walk listed (and no .gitignore it read) changed, the stored
// file list stands and a re-run only stats.
//
// Layout: <dir>/<format version>/<run id>.gob per distinct run (paths,
// options, working directory), holding the key, the walk, the per-file
// hashes and stats, and the findings grouped per file; a .gitignore with
// "*" and a CACHEDIR.TAG.
package cache

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/capguard/capguard/guard"
)

// formatVersion changes whenever the entry layout changes.
const formatVersion = "v2"

// DirName is the default cache folder's name.
const DirName = ".capguard_cache"

// Options of a cached run.
type Options struct {
	Dir     string // the cache folder
	Version string // capguard's version (with its VCS revision)
	// Extra is more key material: anything else that changes the result.
	Extra []string
}

// Status says what the cache did.
type Status string

const (
	Hit      Status = "hit"      // the stored result was used
	Miss     Status = "miss"     // analysed, and stored
	Bypassed Status = "bypassed" // not cacheable (standard input, unreadable paths), analysed
	Failed   Status = "failed"   // analysed, but the result could not be stored
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
	if opts.Config == nil || len(opts.Overlay) > 0 {
		res, err := guard.Run(opts)
		return res, Bypassed, err
	}
	dir := filepath.Join(c.Dir, formatVersion)
	id, err := runID(opts, c)
	if err != nil {
		res, err := guard.Run(opts)
		return res, Bypassed, err
	}
	entryPath := filepath.Join(dir, id+".gob")
	old := readEntry(entryPath)
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
			res, err := guard.Run(opts)
			return res, Bypassed, err
		}
		files = found
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				res, err := guard.Run(opts)
				return res, Bypassed, err
			}
			walked = append(walked, walkEntry{Path: p, Stat: statOf(fi)})
		}
	}
	hashes, stats, rehashed, ok := hashFiles(files, old)
	if !ok { // a file could not be read: let guard report it
		res, err := guard.Run(opts)
		return res, Bypassed, err
	}
	key := resultKey(id, files, hashes, guard.PackageDirs(files))
	if old != nil && old.Key == key {
		res := old.result(opts.Config)
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
	res, err := guard.Run(opts)
	if err != nil {
		return nil, Miss, err
	}
	e := newEntry(key, files, hashes, stats, res)
	e.Written = start.UnixNano()
	e.Discovered, e.Walked = files, walked
	if err := writeEntry(c.Dir, entryPath, e); err != nil {
		return res, Failed, err
	}
	return res, Miss, nil
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
	w("capguard-cache", formatVersion, c.Version, runtime.Version())
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			w("exe", exe, fmt.Sprint(st.Size(), st.ModTime().UnixNano()))
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	w("wd", wd)
	w("paths")
	w(opts.Paths...)
	w("select")
	w(opts.Select...)
	w("ignore")
	w(opts.Ignore...)
	w("max", fmt.Sprint(opts.MaxFileSize))
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

// hashFiles returns each file's content hash and stat, reusing old's hash
// where the file's stat is unchanged and was not racy, and how many files
// it read. ok is false when a file cannot be read.
func hashFiles(files []string, old *entry) (hashes []string, stats []fileStat, read int, ok bool) {
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
}

// fileEntry is a file's hash and stat, and its findings.
type fileEntry struct {
	Path     string       `json:"path"`
	Hash     string       `json:"hash"`
	Stat     fileStat     `json:"stat"`
	Findings []diagnostic `json:"findings,omitempty"`
}

type fileError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Syntax  bool   `json:"syntax,omitempty"`
	Decode  bool   `json:"decode,omitempty"`
}

type pos struct{ Line, Column, Offset int }

type edit struct {
	Start, End int
	NewText    string
}

type fix struct {
	Message       string
	Applicability guard.Applicability
	Edits         []edit
	NeedsHelper   bool
}

type diagnostic struct {
	Rule       string
	Path       string
	Start, End pos
	Message    string
	Severity   guard.Severity
	Context    guard.Context
	Function   string
	Chain      []string
	Resolution guard.EdgeKind
	Fix        *fix
	Order      int // the finding's place in the result
}

func newEntry(key string, files, hashes []string, stats []fileStat, res *guard.Result) *entry {
	e := &entry{Key: key, Checked: res.Files, Parsed: res.Parsed, Warnings: res.Warnings}
	index := map[string]int{}
	for i, f := range files {
		fe := fileEntry{Path: f, Hash: hashes[i]}
		if i < len(stats) {
			fe.Stat = stats[i]
		}
		index[f] = len(e.Files)
		e.Files = append(e.Files, fe)
	}
	for i, d := range res.Diagnostics {
		cd := diagnostic{Rule: d.Rule.ID, Path: d.Path, Start: pos{d.Start.Line, d.Start.Column, d.Start.Offset},
			End: pos{d.End.Line, d.End.Column, d.End.Offset}, Message: d.Message, Severity: d.Severity, Context: d.Context,
			Function: d.Function, Chain: d.Chain, Resolution: d.Resolution, Order: i}
		if d.Fix != nil {
			cd.Fix = &fix{Message: d.Fix.Message, Applicability: d.Fix.Applicability, NeedsHelper: d.Fix.NeedsHelper}
			for _, ed := range d.Fix.Edits {
				cd.Fix.Edits = append(cd.Fix.Edits, edit{ed.Start, ed.End, ed.NewText})
			}
		}
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
	return e
}

// result rebuilds a guard.Result (without sources: the report reads the
// files with findings from disk).
func (e *entry) result(cfg *guard.Config) *guard.Result {
	res := &guard.Result{Files: e.Checked, Parsed: e.Parsed, Warnings: e.Warnings, Config: cfg}
	var all []diagnostic
	for _, f := range e.Files {
		all = append(all, f.Findings...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Order < all[j].Order })
	for _, d := range all {
		rule := guard.LookupRule(d.Rule)
		if rule == nil {
			rule = &guard.Rule{ID: d.Rule, Name: d.Rule}
		}
		gd := &guard.Diagnostic{Rule: rule, Path: d.Path, Start: guard.Pos{Line: d.Start.Line, Column: d.Start.Column, Offset: d.Start.Offset},
			End: guard.Pos{Line: d.End.Line, Column: d.End.Column, Offset: d.End.Offset}, Message: d.Message, Severity: d.Severity,
			Context: d.Context, Function: d.Function, Chain: d.Chain, Resolution: d.Resolution}
		if d.Fix != nil {
			gd.Fix = &guard.Fix{Message: d.Fix.Message, Applicability: d.Fix.Applicability, NeedsHelper: d.Fix.NeedsHelper}
			for _, ed := range d.Fix.Edits {
				gd.Fix.Edits = append(gd.Fix.Edits, guard.TextEdit{Start: ed.Start, End: ed.End, NewText: ed.NewText})
			}
		}
		res.Diagnostics = append(res.Diagnostics, gd)
	}
	for _, fe := range e.Errors {
		res.Errors = append(res.Errors, guard.FileError{Path: fe.Path, Message: fe.Message, Syntax: fe.Syntax, Decode: fe.Decode})
	}
	return res
}

func readEntry(p string) *entry {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	var e entry
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&e); err != nil {
		return nil
	}
	return &e
}

// writeEntry stores e atomically (a temporary file renamed over the old
// entry), making the cache folder with its .gitignore and CACHEDIR.TAG.
func writeEntry(root, p string, e *entry) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	for name, body := range map[string]string{
		".gitignore":   "# Made by capguard's cache.\n*\n",
		"CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag made by capguard.\n",
	} {
		if _, err := os.Stat(filepath.Join(root, name)); errors.Is(err, os.ErrNotExist) {
			os.WriteFile(filepath.Join(root, name), []byte(body), 0o644)
		}
	}
	var data bytes.Buffer
	if err := gob.NewEncoder(&data).Encode(e); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".entry-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if _, err := tmp.Write(data.Bytes()); err != nil {
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
