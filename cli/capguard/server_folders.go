package main

// Workspace folders. A client can open several folders in one window (a
// multi-root workspace), add and remove them while it runs, and open a
// file that lies in none. Each folder is a project of its own, analysed
// from its root with its own configuration, results cache entry, buffers
// and diagnostics (an lspServer), and a document goes to the folder that
// holds it. Until now the server analysed the first folder only: the
// other folders' files, and any file outside the first, were published
// with no diagnostics, which read as "no findings" (a warning named the
// other folders; a file outside every folder got none).
//
//   - A folder inside another is no project of its own: its files are the
//     outer folder's, analysed with the outer project's context as
//     `capguard check OUTER` analyses them. Adding a folder that holds
//     others takes their documents over.
//   - The first folder is the one the process works from: its findings
//     are named relative to it, as `capguard check .` there names them
//     (and its results cache entry is that run's). The others' are named
//     by their absolute paths, as `capguard check /abs/folder` names them.
//   - A file outside every folder is analysed in its own project, found as
//     `capguard check FILE` finds it (guard.ProjectRoot: its config's
//     folder, else its VCS root, else its top package); a lone script is
//     analysed alone. A file of an installed package (site-packages,
//     dist-packages) outside every folder is not analysed: it gets no
//     diagnostics at all (installed).
//   - A project made for files outside every folder goes when its last
//     document is closed (its diagnostics cleared).
//   - Analyses run one at a time across folders (one runMu): two at once
//     would hold two projects' solves in memory on the same cores.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/cudagraph-capguard/capguard/guard"
)

// lspWorkspace is the server the client talks to: the protocol's handler,
// which routes each document's requests to the folder that holds it.
type lspWorkspace struct {
	proto   *lspServer // the settings each folder starts from
	mu      sync.Mutex
	folders []*lspServer // folders[0], when there is one, is the first workspace folder
	h       protocol.Handler
}

func newWorkspace(proto *lspServer) *lspWorkspace { return &lspWorkspace{proto: proto} }

// newFolder is a project rooted at the absolute path root, spelled as its
// analysis names it (spell), with the workspace's settings.
func (w *lspWorkspace) newFolder(root, spell string, file bool) *lspServer {
	p := w.proto
	f := newLSP(p.debounce, p.config)
	f.root, f.spell, f.file = root, spell, file
	f.runMu = p.runMu
	f.useCache, f.cacheDir = p.useCache, p.cacheDir
	f.progressOK, f.progressAfter, f.freeAfter = p.progressOK, p.progressAfter, p.freeAfter
	f.watchOK = p.watchOK
	return f
}

// holds reports whether the absolute path p is the folder's: under its
// root, or the lone script itself.
func (s *lspServer) holds(p string) bool {
	if s.file {
		return p == s.root
	}
	return inDir(p, s.root)
}

// folderOf is the folder a document belongs to (w.mu held): the one that
// holds its path, else a new one for the file's own project (a document
// whose URI names no file goes to the first folder, as before). It is nil
// before initialize, and for an installed package's file outside every
// folder (installed), which is not analysed.
func (w *lspWorkspace) folderOf(u protocol.DocumentUri) *lspServer {
	p := uriPath(u)
	if p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
	}
	for _, f := range w.folders {
		if p != "" && f.holds(p) {
			return f
		}
	}
	if p == "" {
		if len(w.folders) == 0 {
			return nil
		}
		return w.folders[0]
	}
	if installed(p) {
		return nil
	}
	// The file's own project, as `capguard check FILE` finds it.
	cfg, _ := guard.FindConfig(p)
	f := w.newFolder(p, p, true) // a lone script, analysed alone
	if root := guard.ProjectRoot(p, cfg); root != "" {
		f = w.newFolder(root, root, false)
	}
	f.implicit = true
	w.adopt(f)
	return f
}

// closedDoc takes an implicit folder (one made for a file outside every
// workspace folder) out once its last document is closed, and reports
// whether it did (then nothing is analysed for the close): its syntax
// trees and result would otherwise stay in memory for the rest of the
// session, one project for each file an editor ever opened from outside.
func (w *lspWorkspace) closedDoc(f *lspServer) bool {
	w.mu.Lock()
	f.mu.Lock()
	last := f.implicit && len(f.docs) == 0
	f.mu.Unlock()
	if !last {
		w.mu.Unlock()
		return false
	}
	w.take(func(g *lspServer) bool { return g == f })
	w.mu.Unlock()
	return true
}

// adopt adds the folder f (w.mu held); a folder f holds is merged into it:
// dropped, with its open documents moved to f.
func (w *lspWorkspace) adopt(f *lspServer) {
	for _, d := range w.take(func(g *lspServer) bool { return f.holds(g.root) }) {
		f.takeDoc(d)
	}
	w.folders = append(w.folders, f)
}

// take takes the folders that match out of the workspace (w.mu held),
// closing each (close), and returns their open documents.
func (w *lspWorkspace) take(match func(*lspServer) bool) []*lspDoc {
	var docs []*lspDoc
	kept := w.folders[:0:0]
	for _, g := range w.folders {
		if match(g) {
			docs = append(docs, g.close()...)
			continue
		}
		kept = append(kept, g)
	}
	w.folders = kept
	return docs
}

// takeDoc makes the open document d, of a folder that left, one of s's
// (s may be analysing: s.mu guards its documents).
func (s *lspServer) takeDoc(d *lspDoc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rel := s.relOf(d.uri)
	s.docs[rel] = &lspDoc{uri: d.uri, rel: rel, text: d.text, version: d.version}
}

// close takes the folder out of the workspace: its analysis in flight is
// canceled and any result dropped, its diagnostics are cleared, and its
// open documents are returned for the folder that takes them over.
func (s *lspServer) close() []*lspDoc {
	s.mu.Lock()
	s.closed = true
	s.newGen()
	if s.timer != nil {
		s.timer.Stop()
	}
	var docs []*lspDoc
	paths := map[string]bool{}
	for p, d := range s.docs {
		docs = append(docs, d)
		paths[p] = true
	}
	for p := range s.published {
		paths[p] = true
	}
	notify := s.notify
	var uris []protocol.DocumentUri
	for p := range paths {
		uris = append(uris, s.uriOf(p))
	}
	s.mu.Unlock()
	sort.Slice(docs, func(i, j int) bool { return docs[i].uri < docs[j].uri })
	sort.Slice(uris, func(i, j int) bool { return uris[i] < uris[j] })
	if notify != nil {
		for _, u := range uris {
			notify(protocol.ServerTextDocumentPublishDiagnostics, protocol.PublishDiagnosticsParams{URI: u, Diagnostics: []protocol.Diagnostic{}})
		}
	}
	return docs
}

// doc is the folder of the document u, and the document's path there.
func (w *lspWorkspace) doc(u protocol.DocumentUri) (*lspServer, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.folderOf(u)
	if f == nil {
		return nil, ""
	}
	return f, f.relOf(u)
}

// openDoc is the folder of the document u and its open buffer (nil when
// it is not open).
func (w *lspWorkspace) openDoc(u protocol.DocumentUri) (*lspServer, *lspDoc) {
	s, rel := w.doc(u)
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s, s.docs[rel]
}

func (w *lspWorkspace) handler() *protocol.Handler {
	w.h = protocol.Handler{
		Initialize: w.initialize,
		Initialized: func(ctx *glsp.Context, _ *protocol.InitializedParams) error {
			w.proto.watchFiles(ctx)
			return nil
		},
		WorkspaceDidChangeWatchedFiles:     w.filesChanged,
		WorkspaceDidChangeWorkspaceFolders: w.foldersChanged,
		Shutdown:                           func(*glsp.Context) error { return nil },
		Exit:                               func(*glsp.Context) error { return nil },
		SetTrace:                           func(*glsp.Context, *protocol.SetTraceParams) error { return nil },
		TextDocumentDidOpen: func(ctx *glsp.Context, p *protocol.DidOpenTextDocumentParams) error {
			if s, _ := w.doc(p.TextDocument.URI); s != nil {
				s.setDoc(ctx, p.TextDocument.URI, []byte(p.TextDocument.Text), p.TextDocument.Version, 0)
			}
			return nil
		},
		TextDocumentDidChange: func(ctx *glsp.Context, p *protocol.DidChangeTextDocumentParams) error {
			s, d := w.openDoc(p.TextDocument.URI)
			if s == nil {
				return nil
			}
			var text []byte
			if d != nil {
				text = d.text
			}
			for _, ch := range p.ContentChanges {
				switch ch := ch.(type) {
				case protocol.TextDocumentContentChangeEventWhole:
					text = []byte(ch.Text)
				case protocol.TextDocumentContentChangeEvent:
					text = applyLSPChange(text, ch)
				}
			}
			s.setDoc(ctx, p.TextDocument.URI, text, p.TextDocument.Version, s.debounce)
			return nil
		},
		TextDocumentDidSave: func(ctx *glsp.Context, p *protocol.DidSaveTextDocumentParams) error {
			s, d := w.openDoc(p.TextDocument.URI)
			if s == nil {
				return nil
			}
			if d != nil && p.Text != nil {
				s.setDoc(ctx, p.TextDocument.URI, []byte(*p.Text), d.version, 0)
			} else {
				s.schedule(ctx, 0)
			}
			return nil
		},
		TextDocumentDidClose: func(ctx *glsp.Context, p *protocol.DidCloseTextDocumentParams) error {
			s, rel := w.doc(p.TextDocument.URI)
			if s == nil {
				return nil
			}
			s.mu.Lock()
			delete(s.docs, rel)
			s.newGen()
			s.mu.Unlock()
			if !w.closedDoc(s) {
				s.schedule(ctx, 0)
			}
			return nil
		},
		TextDocumentCodeAction: func(ctx *glsp.Context, p *protocol.CodeActionParams) (any, error) {
			if s, _ := w.doc(p.TextDocument.URI); s != nil {
				return s.codeAction(ctx, p)
			}
			return nil, nil
		},
		TextDocumentHover: func(ctx *glsp.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
			if s, _ := w.doc(p.TextDocument.URI); s != nil {
				return s.hover(ctx, p)
			}
			return nil, nil
		},
	}
	return &w.h
}

// initialize makes the workspace's folders (the client's workspace
// folders, else its root) and works from the first.
func (w *lspWorkspace) initialize(ctx *glsp.Context, p *protocol.InitializeParams) (any, error) {
	var roots []string
	switch {
	case len(p.WorkspaceFolders) > 0:
		for _, f := range p.WorkspaceFolders {
			if r := uriPath(f.URI); r != "" {
				roots = append(roots, r)
			}
		}
	case p.RootURI != nil:
		roots = append(roots, uriPath(*p.RootURI))
	case p.RootPath != nil:
		roots = append(roots, *p.RootPath)
	}
	if len(roots) == 0 || roots[0] == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		roots = append([]string{wd}, roots...)
	}
	var abs []string
	for i, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(a); err != nil || !st.IsDir() {
			if i == 0 {
				return nil, fmt.Errorf("capguard server: the workspace root %s is not a folder", a)
			}
			continue // a later folder that is gone: nothing to analyse
		}
		abs = append(abs, a)
	}
	// A folder inside another is the outer one's (the first of two equal).
	var tops []string
	for i, a := range abs {
		inner := false
		for j, b := range abs {
			if i != j && inDir(a, b) && (a != b || j < i) {
				inner = true
			}
		}
		if !inner {
			tops = append(tops, a)
		}
	}
	// Findings name files relative to the working directory, as `capguard
	// check .` run at the root does: the server works from the first
	// folder.
	if err := os.Chdir(tops[0]); err != nil {
		return nil, err
	}
	pr := w.proto
	pr.mu.Lock()
	pr.progressOK = p.Capabilities.Window != nil && p.Capabilities.Window.WorkDoneProgress != nil && *p.Capabilities.Window.WorkDoneProgress
	ws := p.Capabilities.Workspace
	pr.watchOK = ws != nil && ws.DidChangeWatchedFiles != nil && ws.DidChangeWatchedFiles.DynamicRegistration != nil && *ws.DidChangeWatchedFiles.DynamicRegistration
	pr.mu.Unlock()
	w.mu.Lock()
	for i, a := range tops {
		spell := a
		if i == 0 {
			spell = "."
		}
		w.folders = append(w.folders, w.newFolder(a, spell, false))
	}
	w.mu.Unlock()
	caps := w.h.CreateServerCapabilities()
	full := protocol.TextDocumentSyncKindFull
	yes := true
	caps.TextDocumentSync = protocol.TextDocumentSyncOptions{
		OpenClose: &yes,
		Change:    &full,
		Save:      protocol.SaveOptions{IncludeText: &yes},
	}
	caps.CodeActionProvider = protocol.CodeActionOptions{CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix, codeActionSourceFixAll}}
	caps.HoverProvider = true
	caps.Workspace = &protocol.ServerCapabilitiesWorkspace{WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
		Supported: &yes, ChangeNotifications: &protocol.BoolOrString{Value: true}}}
	name := "capguard"
	v := versionString()
	return protocol.InitializeResult{Capabilities: caps, ServerInfo: &protocol.InitializeResultServerInfo{Name: name, Version: &v}}, nil
}

// foldersChanged removes and adds workspace folders. A removed folder's
// diagnostics are cleared and its open documents go to the folder that
// holds them now (their own project, when none does); an added folder
// inside another changes nothing, and one that holds others takes them
// over. Each folder given documents is analysed.
func (w *lspWorkspace) foldersChanged(ctx *glsp.Context, p *protocol.DidChangeWorkspaceFoldersParams) error {
	w.mu.Lock()
	var moved []*lspDoc
	for _, r := range p.Event.Removed {
		if root := uriPath(r.URI); root != "" {
			root = filepath.Clean(root)
			moved = append(moved, w.take(func(f *lspServer) bool { return !f.file && f.root == root })...)
		}
	}
	touched := map[*lspServer]bool{}
	for _, a := range p.Event.Added {
		root := uriPath(a.URI)
		if root == "" {
			continue
		}
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			continue
		}
		root = filepath.Clean(root)
		held := false
		for _, f := range w.folders {
			if !f.file && inDir(root, f.root) {
				held = true
			}
		}
		if held {
			continue
		}
		f := w.newFolder(root, root, false)
		w.adopt(f)
		if len(f.docs) > 0 {
			touched[f] = true
		}
	}
	for _, d := range moved {
		if f := w.folderOf(d.uri); f != nil {
			f.takeDoc(d)
			touched[f] = true
		}
	}
	w.mu.Unlock()
	for f := range touched {
		f.mu.Lock()
		f.newGen()
		f.mu.Unlock()
		f.schedule(ctx, 0)
	}
	return nil
}

// filesChanged hands each folder the changes to its files.
func (w *lspWorkspace) filesChanged(ctx *glsp.Context, p *protocol.DidChangeWatchedFilesParams) error {
	w.mu.Lock()
	by := map[*lspServer][]protocol.FileEvent{}
	var order []*lspServer
	for _, ch := range p.Changes {
		path := uriPath(ch.URI)
		for _, f := range w.folders {
			if path != "" && f.holds(path) {
				if by[f] == nil {
					order = append(order, f)
				}
				by[f] = append(by[f], ch)
				break
			}
		}
	}
	w.mu.Unlock()
	for _, f := range order {
		f.filesChanged(ctx, &protocol.DidChangeWatchedFilesParams{Changes: by[f]})
	}
	return nil
}

// installed reports whether the path lies in an installed package
// (a site-packages or dist-packages folder). An editor opens such files
// on a jump to a definition; their project would be the whole installed
// package (its top package: all of torch for a look at one of its
// modules), and they are no code of the user's.
func installed(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == "site-packages" || part == "dist-packages" {
			return true
		}
	}
	return false
}
