package patcher

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// fuzzSource is a Python file the fuzz targets mutate: its path (it must
// exist on disk, as guard discovers paths there; the contents come from an
// overlay) and its bytes.
type fuzzSource struct {
	path string
	src  []byte
}

var (
	fuzzOnce    sync.Once
	fuzzSources []fuzzSource
)

// sources returns the fixtures of testdata and a few standard-library files,
// as absolute paths.
func sources(t testing.TB) []fuzzSource {
	fuzzOnce.Do(func() {
		var paths []string
		filepath.WalkDir("../testdata", func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") && !strings.Contains(p, "/gpu/") {
				paths = append(paths, p)
			}
			return nil
		})
		if dir := testenv.StdlibDir(); dir != "" {
			for _, name := range testenv.StdlibSeeds {
				paths = append(paths, filepath.Join(dir, name))
			}
		}
		for _, p := range paths {
			abs, err := filepath.Abs(p)
			if err != nil {
				continue
			}
			if src, err := os.ReadFile(abs); err == nil {
				fuzzSources = append(fuzzSources, fuzzSource{abs, src})
			}
		}
	})
	if len(fuzzSources) == 0 {
		t.Fatal("no fuzz sources")
	}
	return fuzzSources
}

// fuzzTokens are the fragments the fuzzer splices into sources: the
// motivating pattern, pieces of Python syntax, line endings, indentation.
var fuzzTokens = []string{
	"\nimport torch\nimport triton\n\n\n@triton.jit\ndef _k(x_ptr, y_ptr):\n    pass\n\n\ndef _reader(q, seq_lens):\n    \"\"\"Capture-safe.\"\"\"\n    _k[(1,)](q[:, 0].contiguous(), seq_lens.to(torch.int32))\n",
	"\ndef _r2(q, pt):\n    \"\"\"Capture-safe.\"\"\"\n    pt32 = pt.to(torch.int32)\n    _k[(1,)](q, pt32)\n    return pt32\n",
	".to(torch.int32)", ".contiguous()", ".reshape(-1)", "persistent_buffer", "torch", "_k[(1,)](",
	"\n", "\r\n", "    ", "\t", "(", ")", "[", "]", ":", ",", "\"\"\"", "'", "#", "\\", "\xef\xbb\xbf",
	"def f(x):\n", "import torch\n", "from __future__ import annotations\n", "if x:\n", "return ", "x = ",
	"with torch.cuda.graph(g):\n    ", "\xc3\xa9", "\xff",
}

// mutate applies the edits that ops encodes to src: each 4 bytes give a
// position, a length to delete and a token to insert.
func mutateSource(src []byte, ops []byte) []byte {
	out := append([]byte(nil), src...)
	for len(ops) >= 4 {
		pos := int(binary.LittleEndian.Uint16(ops)) % (len(out) + 1)
		del := int(ops[2] % 8)
		tok := fuzzTokens[int(ops[3])%len(fuzzTokens)]
		ops = ops[4:]
		end := min(len(out), pos+del)
		out = append(out[:pos], append([]byte(tok), out[end:]...)...)
	}
	return out
}

// FuzzPatch runs the whole fixer (guard included) on randomly edited
// fixtures and standard-library files: it must never panic, never turn a
// file that parses into one that does not, leave a file that does not parse
// alone, and be idempotent.
func FuzzPatch(f *testing.F) {
	srcs := sources(f)
	for i := range srcs {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte{0, 0, 0, 0})       // the motivating pattern at the top
		f.Add(uint8(i), []byte{0xff, 0xff, 0, 1}) // another at the end
	}
	f.Fuzz(func(t *testing.T, which uint8, ops []byte) {
		s := srcs[int(which)%len(srcs)]
		in := mutateSource(s.src, ops)
		for _, unsafe := range []bool{false, true} {
			res, err := Fix(Options{Paths: []string{s.path}, Overlay: map[string][]byte{s.path: in}, UnsafeFixes: unsafe})
			if err != nil {
				t.Fatal(err)
			}
			out := in
			if fr := res.File(s.path); fr != nil {
				out = fr.Fixed
				if !bytes.Equal(fr.Original, in) {
					t.Fatal("Original is not the input")
				}
				if got, err := applyUnified(in, fr.Diff); err != nil || !bytes.Equal(got, out) {
					t.Fatalf("the diff does not give the fixed bytes: %v", err)
				}
			}
			inOK := guard.ParseOK(in) && checkEncoding(in) == nil
			if !inOK && !bytes.Equal(out, in) {
				t.Fatalf("changed a file that does not parse or is not UTF-8:\n%s", UnifiedDiff("f.py", in, out))
			}
			if inOK && !guard.ParseOK(out) {
				t.Fatalf("the fix made a file that parsed unparsable:\n%s", UnifiedDiff("f.py", in, out))
			}
			if !res.Converged {
				t.Fatalf("did not converge:\n%s", UnifiedDiff("f.py", in, out))
			}
			again, err := Fix(Options{Paths: []string{s.path}, Overlay: map[string][]byte{s.path: out}, UnsafeFixes: unsafe})
			if err != nil {
				t.Fatal(err)
			}
			if d := again.Diff(); d != "" {
				t.Fatalf("not idempotent: fixing the output again gives\n%s\ninput:\n%s", d, in)
			}
		}
	})
}

// FuzzApply checks Apply on random edits: never a panic, applied edits never
// overlap, and the bytes outside the applied edits are kept.
func FuzzApply(f *testing.F) {
	srcs := sources(f)
	f.Add(uint8(0), []byte{1, 0, 5, 0, 3, 0, 2, 0, 1, 0})
	f.Fuzz(func(t *testing.T, which uint8, ops []byte) {
		src := srcs[int(which)%len(srcs)].src
		var changes []Change
		for len(ops) >= 5 {
			start := int(binary.LittleEndian.Uint16(ops)) % (len(src) + 2)
			end := start + int(ops[2]%16) - 2
			c := Change{Edits: []Edit{{start, end, fuzzTokens[int(ops[3])%len(fuzzTokens)]}}}
			if ops[4]%3 == 0 && len(changes) > 0 { // a second edit in the previous change
				changes[len(changes)-1].Edits = append(changes[len(changes)-1].Edits, c.Edits[0])
			} else {
				changes = append(changes, c)
			}
			ops = ops[5:]
		}
		out, reasons := Apply(src, changes)
		if len(reasons) != len(changes) {
			t.Fatalf("%d reasons for %d changes", len(reasons), len(changes))
		}
		// The same bytes and the same changes refused as the first,
		// quadratic version (which names the first clashing edit it met).
		refused := func(rs []string) []bool {
			out := make([]bool, len(rs))
			for i, r := range rs {
				out[i] = r != ""
			}
			return out
		}
		if nout, nreasons := applyNaive(src, changes); !bytes.Equal(nout, out) || !slices.Equal(refused(nreasons), refused(reasons)) {
			t.Fatalf("Apply and applyNaive differ:\n%q\n%q\nreasons %q vs %q", out, nout, reasons, nreasons)
		}
		var taken []Change
		for i, r := range reasons {
			if r == "" {
				taken = append(taken, changes[i])
			}
		}
		// Applying the taken changes alone gives the same bytes, none refused.
		again, rs := Apply(src, taken)
		if !bytes.Equal(again, out) {
			t.Fatal("the applied changes alone give other bytes")
		}
		for _, r := range rs {
			if r != "" {
				t.Fatalf("an applied change is refused on its own: %s", r)
			}
		}
		if len(taken) == 0 && !bytes.Equal(out, src) {
			t.Fatal("no change applied but the bytes changed")
		}
	})
}

// FuzzEnsureHelper checks the helper insertion on random edits of the
// sources: a file that parses still parses, the helper is there once, and a
// second insertion changes nothing.
func FuzzEnsureHelper(f *testing.F) {
	srcs := sources(f)
	for i := range srcs {
		f.Add(uint8(i), []byte{}, false)
		f.Add(uint8(i), []byte{0, 0, 0, 20}, true)
	}
	f.Fuzz(func(t *testing.T, which uint8, ops []byte, module bool) {
		in := mutateSource(srcs[int(which)%len(srcs)].src, ops)
		mod := ""
		if module {
			mod = "serving.buffers"
		}
		out, inserted, err := EnsureHelper(in, mod)
		if !guard.ParseOK(in) {
			if err == nil {
				t.Fatal("no error for a file that does not parse")
			}
			return
		}
		if err == ErrHelperBreaks {
			return // refused, as it must be: nothing inserted
		}
		if err != nil {
			t.Fatal(err)
		}
		if !guard.ParseOK(out) {
			t.Fatalf("the helper made the file unparsable:\n%s", UnifiedDiff("f.py", in, out))
		}
		if inserted == bytes.Equal(in, out) {
			t.Fatalf("inserted=%v but the bytes changed=%v", inserted, !bytes.Equal(in, out))
		}
		// One insertion: every byte of the input is kept, in order, around it.
		pre := 0
		for pre < len(in) && in[pre] == out[pre] {
			pre++
		}
		suf := 0
		for suf < len(in)-pre && in[len(in)-1-suf] == out[len(out)-1-suf] {
			suf++
		}
		if pre+suf != len(in) {
			t.Fatalf("the insertion changed bytes of the file:\n%s", UnifiedDiff("f.py", in, out))
		}
		again, insertedAgain, err := EnsureHelper(out, mod)
		if err != nil || insertedAgain || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent (err %v):\n%s", err, UnifiedDiff("f.py", out, again))
		}
	})
}

// applyNaive is Apply with clash scanning every taken edit, as Apply was
// first written: the reference for FuzzApply.
func applyNaive(src []byte, changes []Change) ([]byte, []string) {
	return apply(src, changes, func(taken []Edit, e Edit) (*Edit, bool) {
		for k := range taken {
			if e == taken[k] {
				return &taken[k], true
			}
			if overlaps(e, taken[k]) {
				return &taken[k], false
			}
		}
		return nil, false
	})
}
