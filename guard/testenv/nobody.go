// Package testenv holds what capguard's tests share: the fixture projects
// of testdata, python3 (py_compile, the standard library and its fuzz
// seeds), and running a test as an unprivileged user.
//
// Permission bits do not stop root, and CI runs as root. A test that needs
// a permission check to be real (an unreadable file, a read-only folder)
// runs its work in a helper test of the same binary as the user nobody.
package testenv

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Nobody is the uid and gid helpers run as.
const Nobody = 65534

// AsNobody runs the test named helper of this test binary as the user
// nobody, with env added to the environment, from a copy of the binary in
// dir (the binary's own folder may admit only root; dir must admit nobody)
// and dir as working folder. The helper prints its answer on a line
// starting with "RESULT "; AsNobody returns the rest of that line.
func AsNobody(t testing.TB, dir, helper string, env ...string) string {
	t.Helper()
	bin := filepath.Join(dir, "test.bin")
	in, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+helper+"$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}}
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as nobody: %v\n%s", helper, err, b)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(l, "RESULT "); ok {
			return s
		}
	}
	t.Fatalf("%s as nobody printed no RESULT line:\n%s", helper, b)
	return ""
}

// Result prints a helper's answer for AsNobody.
func Result(s string) { os.Stdout.WriteString("RESULT " + s + "\n") }

// IsHelper reports whether this run is a helper started by AsNobody with
// env var name set (and fails the test when a helper runs as root).
func IsHelper(t testing.TB, name string) (string, bool) {
	v := os.Getenv(name)
	if v == "" {
		return "", false
	}
	if os.Geteuid() == 0 {
		t.Fatal("a helper for AsNobody runs as root")
	}
	return v, true
}
