package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run this binary as the capguard command: with
// CAPGUARD_AS_MAIN=1 it is `capguard ARGS...`.
func TestMain(m *testing.M) {
	if os.Getenv("CAPGUARD_AS_MAIN") == "1" {
		os.Exit(run(os.Args))
	}
	// The tests' check runs use a cache of their own, not one in the tree.
	dir, err := os.MkdirTemp("", "capguard-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("CAPGUARD_CACHE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// capguardCmd is `capguard args...` run as a separate process.
func capguardCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CAPGUARD_AS_MAIN=1")
	return cmd
}

// TestFixWriteSurvivesKill kills `capguard fix --write` with SIGKILL while
// it writes, and at random points of its run: the file must always hold
// either its old bytes or the new ones, whole, with its mode.
func TestFixWriteSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kills about 40 processes")
	}
	reader, err := os.ReadFile("../../testdata/readers/bf16_index_reader.py")
	if err != nil {
		t.Fatal(err)
	}
	// 30 MB, so the write takes long enough to be caught in the middle; a
	// string literal makes it cheap to analyse.
	old := append(append([]byte(nil), reader...), []byte("\n_PAD = \"\"\"\n"+strings.Repeat(strings.Repeat("x", 99)+"\n", 300000)+"\"\"\"\n")...)
	dir := t.TempDir()
	path := filepath.Join(dir, "reader.py")
	reset := func() {
		t.Helper()
		if err := os.WriteFile(path, old, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		tmps, _ := filepath.Glob(filepath.Join(dir, ".reader.py.capguard-*"))
		for _, p := range tmps {
			os.Remove(p)
		}
	}
	args := []string{"fix", "--write", "--max-file-size", "0", path}

	// An uninterrupted run gives the new bytes and the run's length.
	reset()
	start := time.Now()
	if out, err := capguardCmd(args...).CombinedOutput(); err != nil {
		t.Fatalf("fix --write: %v\n%s", err, out)
	}
	runTime := time.Since(start)
	fixed, err := os.ReadFile(path)
	if err != nil || bytes.Equal(fixed, old) {
		t.Fatalf("fix --write changed nothing (%v)", err)
	}
	check := func(when string) {
		t.Helper()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if !bytes.Equal(got, old) && !bytes.Equal(got, fixed) {
			t.Fatalf("%s: the file is neither the old bytes (%d) nor the new (%d): %d bytes", when, len(old), len(fixed), len(got))
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
			t.Fatalf("%s: mode %v", when, st.Mode().Perm())
		}
	}

	// Killed while the temporary file is being written: watch for it and
	// kill as soon as it holds some but not all of the new bytes.
	midWrite := 0
	for i := 0; i < 10 && midWrite < 3; i++ {
		reset()
		cmd := capguardCmd(args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		caught := false
		for deadline := time.Now().Add(runTime * 4); time.Now().Before(deadline) && !caught; {
			tmps, _ := filepath.Glob(filepath.Join(dir, ".reader.py.capguard-*"))
			for _, p := range tmps {
				if st, err := os.Stat(p); err == nil && st.Size() > 0 && st.Size() < int64(len(fixed)) {
					cmd.Process.Signal(syscall.SIGKILL)
					caught = true
				}
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		check("killed mid-write")
		if caught {
			midWrite++
		}
	}
	if midWrite == 0 {
		t.Fatal("never caught the write in the middle: the test proved nothing")
	}

	// Killed at random points of the whole run.
	rng := rand.New(rand.NewPCG(1, 2))
	olds, news := 0, 0
	for i := 0; i < 16; i++ {
		reset()
		cmd := capguardCmd(args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(runTime) * 11 / 10)))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		check("killed at a random point")
		if got, _ := os.ReadFile(path); bytes.Equal(got, old) {
			olds++
		} else {
			news++
		}
	}
	t.Logf("run %v; caught mid-write %d times; random kills left the old bytes %d times, the new %d", runTime, midWrite, olds, news)
}
