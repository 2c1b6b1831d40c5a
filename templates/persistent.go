package templates

import (
	_ "embed"
	"strings"
)

// PersistentBuffer is the source of the persistent-buffer helper module,
// persistent_buffer.py: a real, importable Python module whose docstring
// documents the helper's behaviour and limits. A project that keeps the
// helper in one place copies it and sets helper-module in its configuration.
//
//go:embed persistent_buffer.py
var PersistentBuffer string

// PersistentBufferName is the function the helper defines.
const PersistentBufferName = "persistent_buffer"

// PersistentBufferInline returns the part of PersistentBuffer that the fixer
// inserts into a file: everything after the module's docstring and its
// `import torch`, that is the comment that says why, the buffer tables and
// the function, ending with one newline. The file it goes into provides
// `import torch`.
func PersistentBufferInline() string {
	const imp = "\nimport torch\n"
	i := strings.Index(PersistentBuffer, imp)
	if i < 0 {
		panic("templates: persistent_buffer.py lost its `import torch` line")
	}
	body := strings.TrimLeft(PersistentBuffer[i+len(imp):], "\n")
	return strings.TrimRight(body, "\n") + "\n"
}
