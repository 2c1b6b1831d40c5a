package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// PyCompile byte-compiles the files with python3 (py_compile), leaving no
// __pycache__ behind, and returns an error with python's output when one
// does not compile.
func PyCompile(t testing.TB, files ...string) error {
	t.Helper()
	cmd := exec.Command("python3", append([]string{"-m", "py_compile"}, files...)...)
	cmd.Env = append(os.Environ(), "PYTHONPYCACHEPREFIX="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("py_compile: %v\n%s", err, out)
	}
	return nil
}

// StdlibSeeds are standard-library modules the fuzz targets start from
// besides testdata: varied headers (docstrings, `from __future__`, guarded
// imports, long import blocks), decorators, nested classes, long literals.
var StdlibSeeds = []string{"bisect.py", "colorsys.py", "shlex.py", "textwrap.py", "dataclasses.py",
	"__future__.py", "pprint.py", "functools.py", "contextlib.py", "tokenize.py"}

// StdlibDir is python3's standard library folder, or "" without python3.
func StdlibDir() string {
	out, err := exec.Command("python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
