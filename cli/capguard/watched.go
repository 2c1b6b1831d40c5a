package main

import (
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// Files changed outside the editor. An analysis reads every file of the
// project that is not an open buffer from disk, but nothing started one
// after a `git checkout`, a formatter run in a terminal or a file created
// or deleted there: the diagnostics stayed those of the files as they were
// until the next edit to an open buffer, and an inert edit then moved that
// stale result. So the server asks the client to watch the files an
// analysis reads (watchedGlobs) and analyses the project again when one
// changes, created or deleted, after the debounce (a burst of changes is
// one analysis). A change to an open buffer's file is none to the
// analysis, which reads the buffer (the editor's own save sends didSave).
// Until an analysis that began after a change on disk has ended,
// no edit is served by moving the last result (analyse: diskGen).
//
// LSP lets a server watch files only through the client, and only where
// the client registers watchers at the server's request (dynamic
// registration); a client that does not (the server is told in initialize)
// gets no watching, and its user saves or edits an open file to see a
// change on disk.

// watchedGlobs are the files an analysis reads: Python sources, the
// configurations (capguard.toml, pyproject.toml's [tool.capguard]) and
// the .gitignore files that select the files.
var watchedGlobs = []string{"**/*.py", "**/capguard.toml", "**/pyproject.toml", "**/.gitignore"}

// watchRegistration is the registration id of the watchers.
const watchRegistration = "capguard-watched-files"

// watchFiles asks the client to watch watchedGlobs, when it can. The
// request is answered after this notification's handler returns, so it
// is sent from its own goroutine.
func (s *lspServer) watchFiles(ctx *glsp.Context) {
	s.mu.Lock()
	ok := s.watchOK
	s.mu.Unlock()
	if !ok {
		return
	}
	var ws []protocol.FileSystemWatcher
	for _, g := range watchedGlobs {
		ws = append(ws, protocol.FileSystemWatcher{GlobPattern: g})
	}
	params := protocol.RegistrationParams{Registrations: []protocol.Registration{{
		ID:              watchRegistration,
		Method:          string(protocol.MethodWorkspaceDidChangeWatchedFiles),
		RegisterOptions: protocol.DidChangeWatchedFilesRegistrationOptions{Watchers: ws},
	}}}
	call := ctx.Call
	go func() {
		var answer any
		call(string(protocol.ServerClientRegisterCapability), params, &answer)
	}()
}

// filesChanged starts a new generation, analysed after the debounce,
// unless every change is to an open buffer's file.
func (s *lspServer) filesChanged(ctx *glsp.Context, p *protocol.DidChangeWatchedFilesParams) error {
	s.mu.Lock()
	changed := false
	for _, ch := range p.Changes {
		if s.docs[s.relOf(ch.URI)] == nil {
			changed = true
		}
	}
	if changed {
		s.newGen()
		s.diskGen = s.gen
	}
	s.mu.Unlock()
	if changed {
		s.schedule(ctx, s.debounce)
	}
	return nil
}
