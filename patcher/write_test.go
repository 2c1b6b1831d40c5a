package patcher

import (
	"os"
	"path/filepath"
	"testing"
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

func TestWriteFileReadOnlyFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only folders")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "reader.py")
	os.WriteFile(p, []byte("old\n"), 0o644)
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	if err := WriteFile(p, []byte("new\n")); err == nil {
		t.Error("no error writing into a read-only folder")
	}
	if got, _ := os.ReadFile(p); string(got) != "old\n" {
		t.Errorf("file changed to %q", got)
	}
}
