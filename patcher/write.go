package patcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces the file at path with data atomically: it writes a
// temporary file in the same folder, gives it the file's mode, syncs it and
// renames it over the file, then syncs the folder. On any error the file is
// left as it was and the temporary file is removed. A symbolic link is
// followed: the file it points to is replaced, the link stays. A file
// nobody may write (no w bit in its mode) is not replaced.
//
// Its errors begin with path: "reader.py: read-only (mode -r--r--r--); not
// written", "reader.py: cannot create a temporary file beside it:
// permission denied".
func WriteFile(path string, data []byte) (err error) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, bare(err))
	}
	info, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("%s: %w", path, bare(err))
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	// The rename below would replace a read-only file as easily as any
	// other (even for its owner): a file without write permission is
	// someone's "do not change", so it is refused.
	if info.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s: read-only (mode %v); not written", path, info.Mode().Perm())
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".capguard-*")
	if err != nil {
		return fmt.Errorf("%s: cannot create a temporary file beside it: %w", path, bare(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("%s: %w; not written", path, bare(err))
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // the rename is durable once the folder is; best effort
		d.Close()
	}
	return nil
}

// bare drops an *fs.PathError's operation and path, which WriteFile's own
// messages give better.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
