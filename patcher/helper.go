package patcher

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard"
	"github.com/cudagraph-capguard/capguard/templates"
)

// EnsureHelper makes persistent_buffer available in a Python file. With
// module == "" it inserts the helper's source (templates.PersistentBufferInline)
// after the module docstring, the `from __future__` imports and the import
// block, adding `import torch` to the imports when the file lacks it; with a
// module it adds `from <module> import persistent_buffer` at the end of the
// import block. A file that already binds persistent_buffer at its top level
// (a def, an import, an assignment) is returned unchanged.
//
// The inserted text follows the file: its line ending, its indentation step
// (spaces or tabs) and two blank lines around top-level definitions. It
// reports whether anything was inserted; src must parse.
func EnsureHelper(src []byte, module string) ([]byte, bool, error) {
	f := parsePy(src)
	if f.bad {
		return nil, false, errors.New("cannot insert the persistent-buffer helper into a file with a syntax error")
	}
	if f.binds(guard.HelperName) {
		return src, false, nil
	}
	at, last := f.header()
	var b strings.Builder
	if at > 0 && src[at-1] != '\n' {
		b.WriteString("\n") // the last import ends the file without a newline
	}
	gap, toEOF := blankLinesAt(src, at)
	if last == "docstring" {
		b.WriteString("\n")
	}
	if module != "" {
		fmt.Fprintf(&b, "from %s import %s\n", module, guard.HelperName)
		if last != "import" && !toEOF {
			b.WriteString(strings.Repeat("\n", max(0, 2-gap)))
		}
	} else {
		if !f.binds("torch") {
			b.WriteString("import torch\n")
			last = "import"
		}
		if last != "" {
			b.WriteString("\n\n")
		}
		b.WriteString(reindent(templates.PersistentBufferInline(), f.indentUnit()))
		if !toEOF {
			b.WriteString(strings.Repeat("\n", max(0, 2-gap)))
		}
	}
	text := b.String()
	if lineEnding(src) == "\r\n" {
		text = toCRLF(text)
	}
	out := make([]byte, 0, len(src)+len(text))
	out = append(out, src[:at]...)
	out = append(out, text...)
	out = append(out, src[at:]...)
	if !guard.ParseOK(out) {
		// Degenerate sources only (a file that is a lone line continuation).
		return nil, false, ErrHelperBreaks
	}
	return out, true, nil
}

// ErrHelperBreaks is EnsureHelper's error when the file would not parse with
// the helper inserted.
var ErrHelperBreaks = errors.New("inserting the persistent-buffer helper would break the file's syntax")

// reindent rewrites the four-space indentation steps of s (the template's
// style) as unit.
func reindent(s, unit string) string {
	if unit == "    " {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		n := 0
		for strings.HasPrefix(l[n*4:], "    ") {
			n++
		}
		if n > 0 {
			lines[i] = strings.Repeat(unit, n) + l[n*4:]
		}
	}
	return strings.Join(lines, "")
}
