package patcher

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard"
	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// A file in a PEP 263 encoding is fixed in its decoded text and written
// back in its own encoding: its other bytes are kept, the diff is in that
// encoding and applies to the file, and Python reads the fixed file.
func TestFixKeepsEncoding(t *testing.T) {
	reader := "import torch\nimport triton\n\n\ndef read(q, seq_lens):\n    \"\"\"Capture-safe: callers may capture this reader in a CUDA graph.\"\"\"\n    sl = seq_lens.to(torch.int32)\n    _kernel[(1,)](q, sl)\n\n\n@triton.jit\ndef _kernel(q, sl):\n    pass\n"
	for _, c := range []struct{ enc, text string }{
		{"latin-1", "s = 'caf\xe9 \xff'\n"},
		{"koi8-r", "s = '\xc1\xc2\xd7'\n"},
		{"cp1252", "s = '\x80 \x9f'\n"},
		{"shift_jis", "s = '\x82\xa0\x82\xa2'\n"},
	} {
		t.Run(c.enc, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "reader.py")
			raw := []byte("# -*- coding: " + c.enc + " -*-\n" + c.text + reader)
			if err := os.WriteFile(p, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Fix(Options{Paths: []string{p}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) != 0 || len(res.Changed()) != 1 {
				t.Fatalf("errors %v, changed %d", res.Errors, len(res.Changed()))
			}
			f := res.Changed()[0]
			if f.Encoding != c.enc || !bytes.Equal(f.Original, raw) {
				t.Fatalf("encoding %q, original kept %v", f.Encoding, bytes.Equal(f.Original, raw))
			}
			// The non-ASCII line is kept byte for byte, in the file's encoding.
			if !bytes.Contains(f.Fixed, []byte(c.text)) || !bytes.Contains(f.Fixed, []byte("persistent_buffer(")) {
				t.Fatalf("fixed bytes:\n%q", f.Fixed)
			}
			if got, err := applyUnified(raw, f.Diff); err != nil || !bytes.Equal(got, f.Fixed) {
				t.Fatalf("the diff does not give the fixed bytes: %v", err)
			}
			if err := res.Write(); err != nil {
				t.Fatal(err)
			}
			if err := testenv.PyCompile(t, p); err != nil {
				t.Fatalf("the fixed file does not compile: %v", err)
			}
			// Python decodes the line as it did before the fix.
			want, _, _ := guard.DecodeSource(raw)
			out, err := exec.Command("python3", "-c", "import sys,tokenize; print([l for l in tokenize.open(sys.argv[1]).read().splitlines() if l.startswith('s = ')][0])", p).Output()
			if err != nil {
				t.Fatal(err)
			}
			if line := strings.Split(string(want), "\n")[1]; strings.TrimSpace(string(out)) != line {
				t.Errorf("Python reads the line as %q, want %q", out, line)
			}
			// Fixing the written file again changes nothing.
			again, err := Fix(Options{Paths: []string{p}})
			if err != nil || again.Diff() != "" {
				t.Errorf("not idempotent: %v\n%s", err, again.Diff())
			}
		})
	}
}

// A fix that a file's encoding cannot hold is refused, and the file is left
// alone.
func TestFixRefusesUnencodable(t *testing.T) {
	src := []byte("# coding: latin-1\nimport torch\nimport triton\n\n\ndef read(q, seq_lens):\n    \"\"\"Capture-safe: callers may capture this reader in a CUDA graph.\"\"\"\n    sl = seq_lens.to(torch.int32)\n    _kernel[(1,)](q, sl)\n\n\n@triton.jit\ndef _kernel(q, sl):\n    pass\n")
	calls := 0
	euro := func(o guard.Options) (*guard.Result, error) {
		calls++
		res, err := guard.Run(o)
		if err != nil {
			return nil, err
		}
		for _, d := range res.Diagnostics {
			if d.Fix != nil {
				for i := range d.Fix.Edits {
					d.Fix.Edits[i].NewText += "  # \u20ac"
				}
			}
		}
		return res, nil
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "k.py")
	os.WriteFile(p, src, 0o644)
	res, err := Fix(Options{Paths: []string{p}, Analyze: euro, UnsafeFixes: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed()) != 0 {
		t.Fatalf("wrote a euro sign into a Latin-1 file:\n%s", res.Diff())
	}
	f := res.File(p)
	if f == nil || len(f.Skipped) == 0 || !strings.Contains(f.Skipped[0].Reason, "encoding latin-1") {
		t.Fatalf("skipped: %+v", f)
	}
}
