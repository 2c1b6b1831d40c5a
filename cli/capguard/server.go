package main

// capguard server: a Language Server Protocol server over stdio. It keeps
// the open buffers as overlays and re-analyses the whole project (the
// workspace root) after each change (an edit to a buffer's inert
// comments, docstrings and blank lines only moves the last result, as the
// results cache does: cache.ReuseResult), so a file's findings carry the
// project's context exactly as `capguard check` run on the root gives
// them. Diagnostics are published for every open file and every file with
// findings; code actions offer a finding's fix (safe ones first, and one
// action that applies every safe fix of the file); hover shows the chain
// that makes a line captured; a long analysis shows the editor its
// progress (server_progress.go).
//
// The protocol layer is github.com/tliron/glsp (LSP 3.16 types over
// sourcegraph/jsonrpc2): the framing, dispatch and types are theirs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"
	glspserver "github.com/tliron/glsp/server"
	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/cli/internal/cache"
	"github.com/cudagraph-capguard/capguard/cli/internal/report"
	"github.com/cudagraph-capguard/capguard/guard"
	"github.com/cudagraph-capguard/capguard/patcher"
)

func serverCommand() *cli.Command {
	return &cli.Command{
		Name:  "server",
		Usage: "a language server (LSP, over stdio) that reports findings with the whole project's context as you type",
		Description: "Start it from an editor (see the README's \"Editors\" section). Each workspace folder is a project: every\n" +
			"change re-analyses the folder with the unsaved buffers in place of the files, and diagnostics are published\n" +
			"for the open files and every file with findings. A file outside every folder is analysed in its own\n" +
			"project (its config's folder, else its VCS root, else its top package). Code actions apply a finding's\n" +
			"fix (safe first); hover shows the call chain that makes the line captured.",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "debounce", Value: 250 * time.Millisecond, Usage: "wait this long after the last change before re-analysing"},
			&cli.StringFlag{Name: "config", Usage: "use this config file instead of discovering one (`FILE`)"},
			&cli.BoolFlag{Name: "no-cache", Usage: "neither read nor write the results cache that capguard check keeps"},
			&cli.StringFlag{Name: "cache-dir", EnvVars: []string{"CAPGUARD_CACHE_DIR"}, Usage: "the cache folder", DefaultText: "as capguard check's"},
			&cli.DurationFlag{Name: "free-after", Value: 2 * time.Second, Usage: "return the memory an analysis left to the system once idle this long after it (0: never)"},
			&cli.DurationFlag{Name: "progress-after", Value: 500 * time.Millisecond, Usage: "show the editor a progress bar for an analysis still running after this long (clients that support work-done progress)"},
		},
		Action: func(c *cli.Context) error {
			s := newLSP(c.Duration("debounce"), c.String("config"))
			s.useCache, s.cacheDir = !c.Bool("no-cache"), c.String("cache-dir")
			s.progressAfter, s.freeAfter = c.Duration("progress-after"), c.Duration("free-after")
			srv := glspserver.NewServer(newWorkspace(s).handler(), "capguard", false)
			return srv.RunStdio()
		},
	}
}

// lspDoc is an open buffer.
type lspDoc struct {
	uri     protocol.DocumentUri
	rel     string // path relative to the root, as findings name it
	text    []byte
	version protocol.Integer
}

type lspServer struct {
	debounce time.Duration
	config   string

	mu        sync.Mutex
	root      string
	docs      map[string]*lspDoc // by rel path
	result    *guard.Result      // the last analysis
	graph     *guard.GraphResult // built on demand for hover, for result's generation
	gen       int                // bumped by each change (newGen)
	resultGen int                // the generation result was computed from
	published map[string]bool    // rel paths with diagnostics published
	// early: the diagnostics the running analysis published for the open
	// buffers before the other files' rules ran (guard.Options.Early), by
	// rel path, with the version they were for; the run's last
	// publication leaves out those it would repeat.
	early  map[string]earlyPub
	timer  *time.Timer
	notify glsp.NotifyFunc
	call   glsp.CallFunc // a request to the client (progress' create)
	// progressOK: the client handles work-done progress; an analysis
	// still running after progressAfter shows it (server_progress.go),
	// numbered by progressSeq.
	progressOK    bool
	progressAfter time.Duration
	progressSeq   int
	// watchOK: the client registers file watchers for the server
	// (workspace/didChangeWatchedFiles, dynamic registration); diskGen is
	// the generation a watched file's change on disk began (watched.go).
	watchOK bool
	diskGen int
	// spell is how the analysis names the folder: "." for the one the
	// process works from (findings relative to it, as `capguard check .`
	// there names them), else its absolute path; file is set for a lone
	// script outside every folder, analysed alone (root is the script).
	// closed: the folder left the workspace (its results are dropped).
	// implicit: made for a file outside every workspace folder (it goes
	// when its last document is closed).
	spell    string
	file     bool
	implicit bool
	closed   bool
	// freeAfter: memory is returned to the system once the server has
	// been idle this long after an analysis (freeIdle, by freeTimer).
	freeAfter time.Duration
	freeTimer *time.Timer
	runMu     *sync.Mutex      // one analysis at a time, shared by the folders
	trees     *guard.TreeCache // the last analysis' syntax trees: an edit re-parses its file only
	// overlay and digests are the last analysis' buffers and its files'
	// digests (guard.FileDigest): an edit that keeps a buffer's digest is
	// served by moving the last result (runMu guards digests).
	overlay map[string][]byte
	digests map[string]*guard.FileDigest
	// useCache: analyses with every open buffer as its file is on disk
	// go through the results cache (the one `capguard check .` at the
	// root uses when run without flags), and the first
	// analysis with unsaved buffers reads the cache's syntax trees
	// (treesWarm: the TreeCache holds them since).
	useCache  bool
	cacheDir  string // --cache-dir, else the config's (cache.DefaultDir)
	treesWarm bool
	// cancelRun cancels the analysis in flight (guard.Options.Context;
	// mu guards it):
	// a change makes its result stale, and the run for the change waits
	// for it to end (runMu).
	cancelRun context.CancelFunc
}

// afterRun, set by tests only, runs when an analysis' run has returned
// and before its result is adopted: where a change that makes it stale
// can come.
var afterRun func()

func newLSP(debounce time.Duration, config string) *lspServer {
	return &lspServer{debounce: debounce, config: config, spell: ".", docs: map[string]*lspDoc{}, published: map[string]bool{},
		trees: guard.NewTreeCache(), runMu: &sync.Mutex{}}
}

// uriPath turns a file:// URI into a path ("" for other schemes).
func uriPath(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "file" && p.Scheme != "") {
		return ""
	}
	return filepath.FromSlash(p.Path)
}

func pathURI(p string) protocol.DocumentUri {
	return protocol.DocumentUri((&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String())
}

// relOf is a document's path as the folder's findings name it: relative
// to the root in the folder the process works from, else absolute (a
// file outside the root keeps its absolute path). root never changes.
func (s *lspServer) relOf(u protocol.DocumentUri) string {
	p := uriPath(u)
	if p == "" {
		return string(u)
	}
	if s.spell != "." {
		return p
	}
	if rel, err := filepath.Rel(s.root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

func (s *lspServer) uriOf(rel string) protocol.DocumentUri {
	if d := s.docs[rel]; d != nil {
		return d.uri
	}
	if filepath.IsAbs(rel) {
		return pathURI(rel)
	}
	return pathURI(filepath.Join(s.root, filepath.FromSlash(rel)))
}

func (s *lspServer) setDoc(ctx *glsp.Context, u protocol.DocumentUri, text []byte, version protocol.Integer, wait time.Duration) {
	s.mu.Lock()
	rel := s.relOf(u)
	s.docs[rel] = &lspDoc{uri: u, rel: rel, text: text, version: version}
	s.newGen()
	s.mu.Unlock()
	s.schedule(ctx, wait)
}

// run analyses the project with the open buffers (runMu held): through
// the results cache while every buffer is its file on disk (just opened,
// saved), else with the buffers as overlays and the TreeCache.
//
// The open buffers' rules run first, and early (when set) is given their
// part of the result as soon as it is known (guard.Options.Early).
func (s *lspServer) run(ctx context.Context, overlay map[string][]byte, progress func(guard.Progress), early func(*guard.Result)) (*guard.Result, error) {
	opts := guard.Options{Paths: []string{s.spell}, Overlay: overlay, ConfigPath: s.config, Trees: s.trees, Digests: true, Context: ctx, Progress: progress}
	if early != nil {
		for p := range overlay {
			opts.First = append(opts.First, p)
		}
		sort.Strings(opts.First)
		opts.Early = early
	}
	if !s.useCache {
		return s.runGuard(opts)
	}
	cfg, err := serverConfig(s.config, s.spell)
	if err != nil {
		return nil, err
	}
	opts.Config, opts.ConfigPath = cfg, ""
	co := cache.Options{Dir: s.cacheDir, Version: versionString(), Sources: cache.FindingSources}
	if co.Dir == "" {
		co.Dir = cache.DefaultDir(cfg)
	}
	if !onDisk(overlay) {
		if !s.treesWarm {
			opts.TreeFile = cache.TreeFile(co)
		}
		return s.runGuard(opts)
	}
	opts.Overlay = nil
	res, st, err := cache.Run(opts, co)
	if os.Getenv("CAPGUARD_TIMING") != "" {
		fmt.Fprintf(os.Stderr, "capguard: server: cache %s\n", st)
	}
	if st == cache.Failed && res != nil {
		err = nil // analysed, not stored
	}
	if err != nil {
		return nil, err
	}
	if st == cache.Hit || st == cache.Reused {
		// A served result carries the texts of the files with findings,
		// read again and checked against the hashes it was served for
		// (cache.FindingSources); the open files' are the buffers, which
		// are those files' bytes (onDisk).
		for p := range overlay {
			if res.Source(p) == nil {
				res.SetSource(p, overlay[p])
			}
		}
		s.digests = res.Digests
		return res, nil
	}
	s.digests, s.treesWarm = res.Digests, true
	return res, nil
}

// runGuard is guard.Run, keeping the run's digests for an inert edit.
func (s *lspServer) runGuard(opts guard.Options) (*guard.Result, error) {
	res, err := guard.Run(opts)
	if err == nil {
		s.digests, s.treesWarm = res.Digests, true
	}
	return res, err
}

// serverConfig is the configuration a run of the server uses: the file
// --config names, else the one found from the folder (spelled as the run
// names it), as `capguard check FOLDER` finds it.
func serverConfig(path, folder string) (*guard.Config, error) {
	if path == "" {
		return guard.FindConfig(folder)
	}
	cfg, err := guard.LoadConfig(path)
	if err == nil && cfg == nil {
		err = fmt.Errorf("%s: no [tool.capguard] table", path)
	}
	return cfg, err
}

// onDisk reports whether every buffer holds its file's bytes on disk.
func onDisk(overlay map[string][]byte) bool {
	for p, text := range overlay {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, text) {
			return false
		}
	}
	return true
}

// newGen starts a generation (s.mu held): the analysis in flight, if any,
// is stale now, and is canceled (its result would be dropped).
func (s *lspServer) newGen() {
	s.gen++
	if s.cancelRun != nil {
		s.cancelRun()
		s.cancelRun = nil
	}
}

// schedule runs an analysis after wait (a later change restarts the wait).
func (s *lspServer) schedule(ctx *glsp.Context, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notify, s.call = ctx.Notify, ctx.Call
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timer = time.AfterFunc(wait, s.analyse)
}

// analyse runs the project's analysis with the open buffers as overlays and
// publishes the diagnostics. A run whose generation is stale by the time it
// ends is dropped (a newer one is scheduled).
func (s *lspServer) analyse() {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.mu.Lock()
	gen := s.gen
	if s.closed || s.result != nil && s.resultGen == gen {
		s.mu.Unlock()
		return
	}
	// A change from now on cancels this run (newGen).
	ctx, cancel := context.WithCancel(context.Background())
	s.cancelRun = cancel
	defer func() {
		s.mu.Lock()
		s.cancelRun = nil
		s.mu.Unlock()
		cancel()
	}()
	overlay := map[string][]byte{}
	for rel, d := range s.docs {
		overlay[rel] = d.text
	}
	notify, call := s.notify, s.call
	// A result from before a change on disk is stale beyond the buffers:
	// it is not moved (watched.go).
	movable := s.resultGen >= s.diskGen
	if !s.progressOK {
		call = nil
	}
	s.progressSeq++
	token := fmt.Sprintf("capguard-analysis-%d", s.progressSeq)
	if s.spell != "." {
		token = fmt.Sprintf("capguard-analysis-%d %s", s.progressSeq, s.root)
	}
	s.mu.Unlock()

	// An edit to inert comments and blank lines only moves the last
	// result's findings (the results cache's path); else the project is
	// analysed again. Both set s.digests (runMu guards it); a result this
	// run drops (canceled, failed, stale) puts the last result's digests
	// back, or the next inert edit would move the last result by the
	// dropped run's digests: findings of one text placed on another.
	digestsBefore := s.digests
	adopted := false
	defer func() {
		if !adopted {
			s.digests = digestsBefore
		}
	}()
	var res *guard.Result
	if changed, ok := s.changedDocs(overlay); ok && movable {
		r, digests, why := cache.ReuseResult(s.result, s.digests, changed, 0)
		if why == "" {
			res, s.digests = r, digests
		}
		if os.Getenv("CAPGUARD_TIMING") != "" {
			if why == "" {
				why = "the last result moved"
			}
			fmt.Fprintf(os.Stderr, "capguard: server: %s\n", why)
		}
	}
	var err error
	if res == nil {
		prog := startProgress(call, notify, token, s.progressAfter)
		res, err = s.run(ctx, overlay, prog.report, func(part *guard.Result) { s.publishEarly(gen, part) })
		prog.end(outcome(res, err))
	}
	if afterRun != nil {
		afterRun()
	}
	if errors.Is(err, context.Canceled) {
		return // a change made it stale: the run for the change is scheduled
	}
	if err != nil {
		if notify != nil {
			notify(protocol.ServerWindowShowMessage, protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: "capguard: " + oneLine(err.Error())})
		}
		return
	}
	s.mu.Lock()
	if s.gen != gen || s.closed {
		s.mu.Unlock()
		return
	}
	s.result, s.resultGen, s.graph, s.overlay = res, gen, nil, overlay
	adopted = true
	paths := map[string]bool{}
	for _, d := range res.Diagnostics {
		paths[d.Path] = true
	}
	for _, e := range res.Errors {
		paths[e.Path] = true
	}
	for p := range s.docs {
		paths[p] = true
	}
	for p := range s.published {
		paths[p] = true
	}
	s.published = map[string]bool{}
	var pubs []protocol.PublishDiagnosticsParams
	for _, x := range s.publications(res, paths) {
		p, pub := x.rel, x.pub
		if len(pub.Diagnostics) > 0 {
			s.published[p] = true
		}
		if e, ok := s.early[p]; ok && e.same(pub) {
			continue // published so already, early in this run
		}
		pubs = append(pubs, pub)
	}
	s.early = nil
	s.idleTimer(gen)
	s.mu.Unlock()
	if notify != nil {
		for _, pub := range pubs {
			notify(protocol.ServerTextDocumentPublishDiagnostics, pub)
		}
	}
}

// earlyPub is a publication made early in a run (lspServer.early).
type earlyPub struct {
	version *protocol.UInteger
	diags   []protocol.Diagnostic
}

// same says whether pub repeats the early publication.
func (e earlyPub) same(pub protocol.PublishDiagnosticsParams) bool {
	if (e.version == nil) != (pub.Version == nil) || e.version != nil && *e.version != *pub.Version {
		return false
	}
	return reflect.DeepEqual(e.diags, pub.Diagnostics)
}

// publications are the diagnostics of the paths (rel) in res, one
// publication a path (an empty one for a path without), in path order,
// each with its open buffer's version (s.mu held).
func (s *lspServer) publications(res *guard.Result, paths map[string]bool) []publication {
	byFile := map[string][]protocol.Diagnostic{}
	for _, d := range res.Diagnostics {
		byFile[d.Path] = append(byFile[d.Path], lspDiagnostic(d, res.Source(d.Path)))
	}
	for _, e := range res.Errors {
		byFile[e.Path] = append(byFile[e.Path], fileErrorDiagnostic(e))
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var pubs []publication
	for _, p := range sorted {
		ds := byFile[p]
		if ds == nil {
			ds = []protocol.Diagnostic{}
		}
		pub := protocol.PublishDiagnosticsParams{URI: s.uriOf(p), Diagnostics: ds}
		if d := s.docs[p]; d != nil {
			v := protocol.UInteger(d.version)
			pub.Version = &v
		}
		pubs = append(pubs, publication{p, pub})
	}
	return pubs
}

// publication is one file's publishDiagnostics, with its rel path.
type publication struct {
	rel string
	pub protocol.PublishDiagnosticsParams
}

// publishEarly publishes the open buffers' diagnostics from part, the
// part of generation gen's result that holds them (guard.Options.Early),
// unless a change made that generation stale. The run's last publication
// leaves them out where it would repeat them.
func (s *lspServer) publishEarly(gen int, part *guard.Result) {
	s.mu.Lock()
	if s.gen != gen || s.closed {
		s.mu.Unlock()
		return
	}
	paths := map[string]bool{}
	for p := range s.docs {
		paths[p] = true
	}
	pubs := s.publications(part, paths)
	s.early = map[string]earlyPub{}
	for _, x := range pubs {
		s.early[x.rel] = earlyPub{version: x.pub.Version, diags: x.pub.Diagnostics}
	}
	notify := s.notify
	s.mu.Unlock()
	if notify != nil {
		for _, x := range pubs {
			notify(protocol.ServerTextDocumentPublishDiagnostics, x.pub)
		}
	}
}

// idleTimer (s.mu held) frees memory once the server has been idle for
// freeAfter since the analysis of generation gen: the collector runs at
// 4x the live heap (cli's tuneGC), so between analyses the process kept
// the last run's garbage and the heap's free pages, FlagGems' src/ about
// 600 MB resident for 260 MiB live. A change or an analysis in between
// puts it off (the next analysis sets it again).
func (s *lspServer) idleTimer(gen int) {
	if s.freeTimer != nil {
		s.freeTimer.Stop()
	}
	if s.freeAfter <= 0 {
		return
	}
	s.freeTimer = time.AfterFunc(s.freeAfter, func() { s.freeIdle(gen) })
}

// freeIdle returns the heap's free memory to the system
// (debug.FreeOSMemory: a collection, then the free pages) unless an
// analysis runs or a change came after generation gen's analysis.
func (s *lspServer) freeIdle(gen int) {
	if !s.runMu.TryLock() {
		return
	}
	defer s.runMu.Unlock()
	s.mu.Lock()
	stale := s.gen != gen
	s.mu.Unlock()
	if stale {
		return
	}
	if os.Getenv("CAPGUARD_TIMING") == "" {
		debug.FreeOSMemory()
		return
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	fmt.Fprintf(os.Stderr, "capguard: server: idle: %d MiB live, %d MiB returned to the system\n",
		after.HeapAlloc>>20, (after.HeapReleased-before.HeapReleased)>>20)
}

// changedDocs are the buffers whose text differs from the last result's,
// by path; ok is false when there is no result of an earlier generation
// or a buffer was closed since (its file's text on disk is unknown here).
func (s *lspServer) changedDocs(overlay map[string][]byte) (map[string][]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.result == nil || s.overlay == nil {
		return nil, false
	}
	for p := range s.overlay {
		if _, open := overlay[p]; !open {
			return nil, false
		}
	}
	changed := map[string][]byte{}
	for p, text := range overlay {
		before, open := s.overlay[p]
		if !open {
			before = s.result.Source(p)
		}
		if !bytes.Equal(before, text) {
			changed[p] = text
		}
	}
	return changed, len(changed) > 0
}

func lspDiagnostic(d *guard.Diagnostic, src []byte) protocol.Diagnostic {
	sev := protocol.DiagnosticSeverityWarning
	if d.Severity == guard.SeverityError {
		sev = protocol.DiagnosticSeverityError
	}
	code := protocol.IntegerOrString{Value: d.Rule.ID}
	source := "capguard"
	msg := d.Message
	if d.Context != "" && d.Context != guard.Eager {
		msg += " [" + string(d.Context) + "]"
	}
	out := protocol.Diagnostic{
		Range:    protocol.Range{Start: lspPos(src, d.Start.Offset), End: lspPos(src, d.End.Offset)},
		Severity: &sev,
		Code:     &code,
		Source:   &source,
		Message:  msg,
		Data:     map[string]any{"function": d.Function, "chain": d.Chain, "resolution": d.Resolution},
	}
	out.CodeDescription = &protocol.CodeDescription{HRef: protocol.URI(report.RuleURL(d.Rule.ID))}
	return out
}

func fileErrorDiagnostic(e guard.FileError) protocol.Diagnostic {
	sev := protocol.DiagnosticSeverityError
	source := "capguard"
	line := protocol.UInteger(0)
	return protocol.Diagnostic{
		Range:    protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line}},
		Severity: &sev, Source: &source, Message: e.Message,
	}
}

// lspPos turns a byte offset of src into an LSP position (0-based line,
// UTF-16 code units), as the protocol counts.
func lspPos(src []byte, off int) protocol.Position {
	if off > len(src) {
		off = len(src)
	}
	line, start := 0, 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	col := 0
	for _, r := range string(src[start:off]) {
		col += len(utf16.Encode([]rune{r}))
	}
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(col)}
}

// byteOffset is lspPos's inverse.
func byteOffset(src []byte, p protocol.Position) int {
	line, i := 0, 0
	for i < len(src) && line < int(p.Line) {
		if src[i] == '\n' {
			line++
		}
		i++
	}
	units := 0
	for i < len(src) && src[i] != '\n' && units < int(p.Character) {
		r, size := utf8.DecodeRune(src[i:])
		units += len(utf16.Encode([]rune{r}))
		i += size
	}
	return i
}

func applyLSPChange(text []byte, ch protocol.TextDocumentContentChangeEvent) []byte {
	if ch.Range == nil {
		return []byte(ch.Text)
	}
	a, b := byteOffset(text, ch.Range.Start), byteOffset(text, ch.Range.End)
	if b < a {
		a, b = b, a
	}
	out := append([]byte{}, text[:a]...)
	out = append(out, ch.Text...)
	return append(out, text[b:]...)
}

// current returns the last result once it reflects every change (running
// the analysis now when it does not).
func (s *lspServer) current() *guard.Result {
	s.mu.Lock()
	fresh := s.result != nil && s.resultGen == s.gen
	s.mu.Unlock()
	if !fresh {
		s.analyse()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result
}

func (s *lspServer) codeAction(ctx *glsp.Context, p *protocol.CodeActionParams) (any, error) {
	res := s.current()
	if res == nil {
		return nil, nil
	}
	s.mu.Lock()
	rel := s.relOf(p.TextDocument.URI)
	uri := p.TextDocument.URI
	s.mu.Unlock()
	src := res.Source(rel)
	if src == nil {
		return nil, nil
	}
	lo, hi := byteOffset(src, p.Range.Start), byteOffset(src, p.Range.End)
	var safe, unsafe, all []*guard.Diagnostic
	for _, d := range res.Diagnostics {
		if d.Path != rel || d.Fix == nil || len(d.Fix.Edits) == 0 || d.Fix.Applicability == guard.DisplayOnly {
			continue
		}
		if d.Fix.Applicability == guard.Safe {
			all = append(all, d)
		}
		if d.Start.Offset > hi || d.End.Offset < lo {
			continue
		}
		if d.Fix.Applicability == guard.Safe {
			safe = append(safe, d)
		} else {
			unsafe = append(unsafe, d)
		}
	}
	helper := ""
	if res.Config != nil {
		helper = res.Config.HelperModule
	}
	var actions []protocol.CodeAction
	quick := protocol.CodeActionKindQuickFix
	for _, d := range append(safe, unsafe...) {
		edit, err := fixEdit(src, uri, helper, []*guard.Diagnostic{d})
		if err != nil {
			continue
		}
		title := d.Rule.ID + ": " + d.Fix.Message
		if d.Fix.Applicability != guard.Safe {
			title += " (unsafe: read it first)"
		}
		preferred := d.Fix.Applicability == guard.Safe
		actions = append(actions, protocol.CodeAction{Title: title, Kind: &quick, Edit: edit, IsPreferred: &preferred,
			Diagnostics: []protocol.Diagnostic{lspDiagnostic(d, src)}})
	}
	if len(all) > 0 {
		if edit, err := fixEdit(src, uri, helper, all); err == nil {
			kind := codeActionSourceFixAll
			actions = append(actions, protocol.CodeAction{Title: fmt.Sprintf("capguard: apply the %d safe fixes of this file", len(all)), Kind: &kind, Edit: edit})
		}
	}
	return actions, nil
}

// fixEdit applies the fixes of ds to src (with the persistent-buffer helper
// where one needs it) and returns the change as one edit of the whole text.
func fixEdit(src []byte, uri protocol.DocumentUri, helperModule string, ds []*guard.Diagnostic) (*protocol.WorkspaceEdit, error) {
	var changes []patcher.Change
	needs := false
	for _, d := range ds {
		var c patcher.Change
		for _, e := range d.Fix.Edits {
			c.Edits = append(c.Edits, patcher.Edit{Start: e.Start, End: e.End, NewText: e.NewText})
		}
		changes = append(changes, c)
		needs = needs || d.Fix.NeedsHelper
	}
	out, reasons := patcher.Apply(src, changes)
	for _, r := range reasons {
		if r != "" {
			return nil, errors.New(r)
		}
	}
	if needs {
		var err error
		if out, _, err = patcher.EnsureHelper(out, helperModule); err != nil {
			return nil, err
		}
	}
	end := lspPos(src, len(src))
	return &protocol.WorkspaceEdit{Changes: map[protocol.DocumentUri][]protocol.TextEdit{
		uri: {{Range: protocol.Range{Start: protocol.Position{}, End: end}, NewText: string(out)}},
	}}, nil
}

func (s *lspServer) hover(ctx *glsp.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
	res := s.current()
	if res == nil {
		return nil, nil
	}
	s.mu.Lock()
	rel := s.relOf(p.TextDocument.URI)
	s.mu.Unlock()
	src := res.Source(rel)
	var b strings.Builder
	if src != nil {
		off := byteOffset(src, p.Position)
		line := int(p.Position.Line) + 1
		for _, d := range res.Diagnostics {
			if d.Path != rel || line < d.Start.Line || line > d.End.Line {
				continue
			}
			fmt.Fprintf(&b, "**%s** %s: %s\n\n", d.Rule.ID, d.Severity, d.Message)
			writeChain(&b, string(d.Context), d.Chain, string(d.Resolution))
			_ = off
		}
	}
	if b.Len() == 0 {
		if fn := s.enclosing(rel, int(p.Position.Line)+1); fn != nil && fn.Context != guard.Eager {
			fmt.Fprintf(&b, "`%s` runs **%s**", fn.Name, fn.Context)
			if fn.Condition != "" {
				fmt.Fprintf(&b, " only if %s", fn.Condition)
			}
			b.WriteString("\n\n")
			writeChain(&b, "", fn.Chain, string(fn.Resolution))
			if fn.Assumes != "" {
				b.WriteString(fn.Assumes + "\n\n")
			}
		}
	}
	if b.Len() == 0 {
		return nil, nil
	}
	return &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: strings.TrimSpace(b.String())}}, nil
}

func writeChain(b *strings.Builder, ctx string, chain []string, resolution string) {
	if len(chain) == 0 {
		return
	}
	if ctx != "" {
		fmt.Fprintf(b, "%s: ", ctx)
	}
	b.WriteString("`" + strings.Join(chain, "` → `") + "`")
	if resolution != "" && resolution != string(guard.Resolved) {
		fmt.Fprintf(b, " (weakest edge: %s)", resolution)
	}
	b.WriteString("\n\n")
}

// enclosing returns the graph function whose body holds the 1-based line of
// file rel: the innermost def at or above the line whose indented block
// reaches it. The graph is built once per analysed generation.
func (s *lspServer) enclosing(rel string, line int) *guard.GraphFunction {
	s.mu.Lock()
	g, gen := s.graph, s.resultGen
	overlay := map[string][]byte{}
	for r, d := range s.docs {
		overlay[r] = d.text
	}
	var src []byte
	if s.result != nil {
		src = s.result.Source(rel)
	}
	s.mu.Unlock()
	if g == nil {
		var err error
		if g, err = guard.BuildGraph(guard.Options{Paths: []string{s.spell}, Overlay: overlay, ConfigPath: s.config}); err != nil {
			return nil
		}
		s.mu.Lock()
		if s.resultGen == gen {
			s.graph = g
		}
		s.mu.Unlock()
	}
	if src == nil {
		return nil
	}
	lines := strings.Split(string(src), "\n")
	var best *guard.GraphFunction
	for i := range g.Functions {
		fn := &g.Functions[i]
		if fn.Path != rel || fn.Line < 1 || fn.Line > line {
			continue
		}
		if !blockHolds(lines, fn.Line, line) {
			continue
		}
		if best == nil || fn.Line > best.Line {
			best = fn
		}
	}
	return best
}

// blockHolds says whether line (1-based) is inside the body of the def
// that starts on line def (at its decorators or its def): the header runs
// to the ':' that closes it, then every non-blank line up to line must be
// indented more than the def.
func blockHolds(lines []string, def, line int) bool {
	if def > len(lines) {
		return false
	}
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }
	base := indent(lines[def-1])
	i, depth := def-1, 0
	for ; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if depth == 0 && strings.HasPrefix(t, "@") {
			continue
		}
		if k := strings.Index(t, "#"); k >= 0 {
			t = strings.TrimSpace(t[:k])
		}
		depth += strings.Count(t, "(") + strings.Count(t, "[") + strings.Count(t, "{") -
			strings.Count(t, ")") - strings.Count(t, "]") - strings.Count(t, "}")
		if depth <= 0 && strings.HasSuffix(t, ":") {
			break
		}
		if depth <= 0 && strings.Contains(t, ":") { // def f(): return x
			return line == i+1
		}
	}
	if line <= i+1 {
		return line >= def
	}
	for j := i + 1; j < line && j < len(lines); j++ {
		l := lines[j]
		if strings.TrimSpace(l) == "" {
			continue
		}
		if indent(l) <= base {
			return false
		}
	}
	return true
}

// codeActionSourceFixAll is LSP 3.17's source.fixAll kind (3.16's types
// lack the constant; clients of both accept it).
const codeActionSourceFixAll protocol.CodeActionKind = "source.fixAll"
