package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cudagraph-capguard/capguard/cli/internal/report"
	"github.com/cudagraph-capguard/capguard/guard"
)

// TestDiagnosticRoundTrip: every finding of every fixture decodes from its
// stored form equal to itself (conditions, fixes and their edits, offsets
// included).
func TestDiagnosticRoundTrip(t *testing.T) {
	res, err := guard.Run(guard.Options{Paths: []string{"../../../testdata"}, Config: &guard.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	var conds, fixes int
	for i, d := range res.Diagnostics {
		b, err := encodeDiagnostic(d, i)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeDiagnostic(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d, got) {
			t.Errorf("%s:%d %s: stored and read back differs:\n%+v\n%+v", d.Path, d.Start.Line, d.Rule.ID, d, got)
		}
		if d.Condition != "" {
			conds++
		}
		if d.Fix != nil && len(d.Fix.Edits) > 0 {
			fixes++
		}
	}
	if conds == 0 || fixes == 0 {
		t.Fatalf("%d findings, %d with a condition, %d with a fix: the fixtures no longer cover them", len(res.Diagnostics), conds, fixes)
	}
}

// jsonOf is the JSON report of a result.
func jsonOf(t *testing.T, res *guard.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.JSON(&b, res, report.Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCacheHitSameJSON: on a fixture project with conditional findings and
// fixes, a cache hit gives the same JSON report, byte for byte, as an
// uncached run (the hit used to drop every "captured only if" condition).
func TestCacheHitSameJSON(t *testing.T) {
	dir, err := filepath.Abs("../../../testdata/flow/conditional")
	if err != nil {
		t.Fatal(err)
	}
	noRacy(t)
	opts := guard.Options{Paths: []string{dir}, Config: &guard.Config{}}
	cacheDir := t.TempDir()
	plain, err := guard.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := jsonOf(t, plain)
	if !bytes.Contains(want, []byte(`"condition"`)) {
		t.Fatal("the fixture has no conditional finding")
	}
	for i, wantSt := range []Status{Miss, Hit} {
		if i == 1 {
			settle()
		}
		res, st, err := Run(opts, Options{Dir: cacheDir, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if st != wantSt {
			t.Fatalf("run %d: %s, want %s", i, st, wantSt)
		}
		if got := jsonOf(t, res); !bytes.Equal(got, want) {
			t.Errorf("run %d (%s): the JSON report differs from the uncached one:\n%s\nwant\n%s", i, st, got, want)
		}
	}
}

// noRacy makes stats trusted at once (a test's files are all new); settle
// lets the clock move past the last write.
func noRacy(t *testing.T) {
	old := racyWindow
	racyWindow = 0
	t.Cleanup(func() { racyWindow = old })
}

func settle() { time.Sleep(20 * time.Millisecond) }

// TestCorruptEntryRecomputed: an entry with flipped bytes is not served:
// the run recomputes, warns once, and stores a good entry again.
func TestCorruptEntryRecomputed(t *testing.T) {
	noRacy(t)
	files := map[string]string{"pkg/lib.py": "import torch\n\ndef g(x):\n    with torch.cuda.graph(x):\n        x.tolist()\n"}
	for k, v := range chainProject {
		files[k] = v
	}
	dir := project(t, files)
	cacheDir := t.TempDir()
	settle()
	first, _ := run(t, dir, cacheDir, nil)
	opts := guard.Options{Paths: []string{filepath.Join(dir, "pkg")}, Config: &guard.Config{}}
	id, _ := runID(opts, Options{Dir: cacheDir, Version: "test"})
	entryPath := filepath.Join(cacheDir, formatVersion, id+".json")
	data, err := os.ReadFile(entryPath)
	if err != nil {
		t.Fatal(err)
	}
	// Flip one byte in the stored findings (a message's text): still valid
	// JSON, so only the checksum can tell.
	i := bytes.Index(data, []byte(`"message":"`))
	if i < 0 {
		t.Fatalf("no stored message in %s", data)
	}
	data[i+len(`"message":"`)] ^= 0x01
	if err := os.WriteFile(entryPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	settle()
	res, st := run(t, dir, cacheDir, nil)
	if st == Hit {
		t.Fatal("the corrupt entry was served")
	}
	var warned int
	for _, w := range res.Warnings {
		if strings.Contains(w, "checksum") {
			warned++
		}
	}
	if warned != 1 || codes(res) != codes(first) || res.Diagnostics[0].Message != first.Diagnostics[0].Message {
		t.Fatalf("after a corrupt entry: %d checksum warnings, findings %q (want 1 warning and %q)", warned, codes(res), codes(first))
	}
	settle()
	res, st = run(t, dir, cacheDir, nil)
	if st != Hit || len(res.Warnings) != len(first.Warnings) {
		t.Fatalf("the entry was not rewritten: %s, warnings %v", st, res.Warnings)
	}
}
