package patcher

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cudagraph-capguard/capguard/templates"
)

// HelperModuleFile is the file name of the shared helper module Fix writes
// at the top of a package when no helper-module is configured.
const HelperModuleFile = "_capguard_buffers.py"

// helperModule is a shared persistent-buffer module: its file and the name
// files import it by.
type helperModule struct {
	path, name string
}

// autoHelperModule is the shared helper module of the package holding the
// Python file at path: HelperModuleFile in the package's top-level folder
// (the highest folder of the chain of __init__.py files), imported as
// `<top>._capguard_buffers`. Fixed files then import persistent_buffer from
// it instead of each carrying a copy. It is nil for a file outside any
// package (a script: the helper is inserted into it), and when a file of
// that name already holds something else.
func autoHelperModule(path string) *helperModule {
	dir := filepath.Dir(path)
	if !isFile(filepath.Join(dir, "__init__.py")) {
		return nil
	}
	top := dir
	for {
		up := filepath.Dir(top)
		if up == top || !isFile(filepath.Join(up, "__init__.py")) {
			break
		}
		top = up
	}
	name := filepath.Base(top)
	if abs, err := filepath.Abs(top); err == nil {
		name = filepath.Base(abs)
	}
	if !isIdentifier(name) {
		return nil
	}
	m := &helperModule{path: filepath.Join(top, HelperModuleFile), name: name + "." + strings.TrimSuffix(HelperModuleFile, ".py")}
	if old, err := os.ReadFile(m.path); err == nil && !bytes.Equal(old, []byte(templates.PersistentBuffer)) {
		return nil
	}
	return m
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isIdentifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// NewFileDiff is the unified diff that creates the file at path with body
// (from /dev/null, as git writes it; patch -p1 and git apply create it).
func NewFileDiff(path string, body []byte) string {
	d := UnifiedDiff(path, nil, body)
	if i := strings.IndexByte(d, '\n'); i >= 0 && strings.HasPrefix(d, "--- ") {
		d = "--- /dev/null\n" + d[i+1:]
	}
	return d
}

// createFile writes a new file; one already there is left alone unless it
// holds exactly data.
func createFile(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil {
		if bytes.Equal(old, data) {
			return nil
		}
		return fmt.Errorf("%s: exists and holds something else; not written", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%s: %w; not written", path, bare(err))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w; not written", path, bare(err))
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("%s: %w; not written", path, bare(err))
	}
	return f.Close()
}
