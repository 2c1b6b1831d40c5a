package patcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "reader.py")
	if err := os.WriteFile(p, []byte("old\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.py")
	if err := os.Symlink("reader.py", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new\r\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "new\r\n" {
		t.Errorf("content %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o750 {
		t.Errorf("mode %v, want 0750", fi.Mode().Perm())
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symbolic link was replaced by a file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "missing.py"), []byte("x")); err == nil {
		t.Error("wrote a file that did not exist")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.py")); err == nil {
		t.Error("created missing.py")
	}
	if err := WriteFile(dir, []byte("x")); err == nil {
		t.Error("replaced a folder")
	}
}

// A read-only file is refused, by root too, and left as it was.
func TestWriteFileReadOnlyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "reader.py")
	if err := os.WriteFile(p, []byte("old\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new\n")); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("WriteFile on a read-only file: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old\n" {
		t.Errorf("file changed to %q", got)
	}
}

// In a folder it may not write to, WriteFile fails and leaves the file as
// it was. Root writes anywhere, and CI runs as root: there the write runs
// in a copy of this test binary as the user nobody.
func TestWriteFileReadOnlyFolder(t *testing.T) {
	base, err := os.MkdirTemp("", "capguard-ro-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		os.Chmod(filepath.Join(base, "ro"), 0o755)
		os.RemoveAll(base)
	}()
	dir := filepath.Join(base, "ro")
	p := filepath.Join(dir, "reader.py")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("old\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o666)
	os.Chmod(base, 0o755)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	var werr string
	if os.Geteuid() != 0 {
		if err := WriteFile(p, []byte("new\n")); err != nil {
			werr = err.Error()
		}
	} else {
		werr = testenv.AsNobody(t, base, "TestWriteFileAsNobody", "CAPGUARD_WRITE_AS_NOBODY="+p)
	}
	if !strings.Contains(werr, "permission denied") {
		t.Errorf("WriteFile into a read-only folder: error %q, want permission denied", werr)
	}
	if got, _ := os.ReadFile(p); string(got) != "old\n" {
		t.Errorf("file changed to %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestWriteFileAsNobody is TestWriteFileReadOnlyFolder's unprivileged half.
func TestWriteFileAsNobody(t *testing.T) {
	p, ok := testenv.IsHelper(t, "CAPGUARD_WRITE_AS_NOBODY")
	if !ok {
		t.Skip("run by TestWriteFileReadOnlyFolder")
	}
	msg := "<nil>"
	if err := WriteFile(p, []byte("new\n")); err != nil {
		msg = err.Error()
	}
	testenv.Result(msg)
}
