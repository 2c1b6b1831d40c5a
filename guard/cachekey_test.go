package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// digestText is the digest of src written as a file.
func digestText(t *testing.T, src string) *FileDigest {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.py")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	d, ok := DigestFile(p, &Config{}, 0, Relevance{})
	if !ok {
		t.Fatalf("no digest for %q", src)
	}
	return d
}

const digestBase = `import torch


def f(x):
    """One line."""
    y = x + 1  # add one
    return y.item()


def g(x):
    s = """a
b"""
    return x
`

// TestDigestLines: edits to inert comments and blank lines keep the digest
// and move positions with their lines; code, a blank line inside a string
// spanning lines, and a comment read by the analysis change it.
func TestDigestLines(t *testing.T) {
	base := digestText(t, digestBase)
	same := []struct{ name, old, new string }{
		{"a comment's text", "# add one", "# add one, then read"},
		{"a blank line", "def f(x):\n", "\ndef f(x):\n"},
		{"a comment line", "    return y.item()", "    # read it\n    return y.item()"},
		{"a comment at column 0", "    return y.item()", "# read it\n    return y.item()"},
		{"blank lines removed", "\n\n\ndef g", "\ndef g"},
		{"a comment appended", "    return x\n", "    return x\n# end\n"},
		{"a docstring's text", "One line.", "Another line, longer."},
		{"a docstring over lines", "One line.\"\"\"", "One line.\n\n    And more.\n    \"\"\""},
	}
	for _, c := range same {
		src := strings.Replace(digestBase, c.old, c.new, 1)
		if src == digestBase {
			t.Fatalf("%s: no edit", c.name)
		}
		d := digestText(t, src)
		if d.Sum != base.Sum {
			t.Errorf("%s: the digest changed", c.name)
			continue
		}
		r, ok := NewRemap(base, d)
		if !ok {
			t.Errorf("%s: no remap", c.name)
			continue
		}
		// The read: line 7, column 12 in the base.
		off := strings.Index(digestBase, "y.item()")
		p, ok := r.Pos(Pos{Line: 7, Column: 12, Offset: off})
		want := strings.Index(src, "y.item()")
		wantLine := strings.Count(src[:want], "\n") + 1
		if !ok || p.Offset != want || p.Line != wantLine || p.Column != 12 {
			t.Errorf("%s: the read moved to %+v, want line %d offset %d", c.name, p, wantLine, want)
		}
	}
	differ := []struct{ name, old, new string }{
		{"a literal", "x + 1", "x + 2"},
		{"a blank line in a string", "s = \"\"\"a\n", "s = \"\"\"a\n\n"},
		{"a suppression", "# add one", "# noqa: CG101"},
		{"a claim", "# add one", "# capture-safe"},
		{"a prefilter token", "# add one", "# torch.cuda"},
		{"spaces inside a line", "y = x + 1", "y = x+1"},
		{"a line break in a statement", "y = x + 1", "y = (x +\n         1)"},
		{"a docstring removed", "    \"\"\"One line.\"\"\"\n", ""},
		{"a docstring's claim", "One line.", "Capture-safe."},
		{"a docstring's quotes", "\"\"\"One line.\"\"\"", "\"One line.\""},
		{"a trailing comment removed", "  # add one", ""},
		{"a trailing comment added", "return y.item()", "return y.item()  # the read"},
		{"a blank line under a suppression", "    return y.item()", "    # noqa: CG101\n\n    return y.item()"},
		{"a docstring after code", "    \"\"\"One line.\"\"\"\n", "    \"\"\"One line.\"\"\"; z = 1\n"},
	}
	for _, c := range differ {
		src := strings.Replace(digestBase, c.old, c.new, 1)
		if d := digestText(t, src); d.Sum == base.Sum {
			t.Errorf("%s: the digest did not change", c.name)
		}
	}
	// Under a suppression alone on its line, or a claim comment above a
	// def, a blank line is code: it decides what the comment covers.
	for _, c := range []struct{ name, src, old, new string }{
		{"a suppression", digestBase, "    return y.item()", "    # noqa: CG101\n    return y.item()"},
		{"a claim", digestBase, "def g(x):", "# capture-safe: the caller owns the buffers\ndef g(x):"},
	} {
		src := strings.Replace(c.src, c.old, c.new, 1)
		d1 := digestText(t, src)
		d2 := digestText(t, strings.Replace(src, c.new, strings.Replace(c.new, "\n", "\n\n", 1), 1))
		if d1.Sum == d2.Sum {
			t.Errorf("%s: a blank line under it kept the digest", c.name)
		}
	}
	// The start of a line that a blank line now comes before: the start
	// of the line after the previous one, or of this one? Refused; the
	// start of one whose gap did not change moves.
	gap := digestText(t, strings.Replace(digestBase, "    return y.item()", "\n    return y.item()", 1))
	r0, _ := NewRemap(base, gap)
	if _, ok := r0.Pos(Pos{Line: 7, Column: 1}); ok {
		t.Error("the start of a line that a blank line now comes before moved")
	}
	if p, ok := r0.Pos(Pos{Line: 6, Column: 1}); !ok || p.Line != 6 {
		t.Error("the start of a line before the new blank line did not stay")
	}
	if p, ok := r0.Pos(Pos{Line: 7, Column: 5}); !ok || p.Line != 8 {
		t.Error("a position inside a moved line did not move")
	}
	// A position inside a cut comment, or on a dropped line, is refused.
	d := digestText(t, strings.Replace(digestBase, "# add one", "# add", 1))
	r, _ := NewRemap(base, d)
	if _, ok := r.Pos(Pos{Line: 6, Column: 17}); ok {
		t.Error("a position inside a trailing comment moved")
	}
	if _, ok := r.Pos(Pos{Line: 3, Column: 1}); ok {
		t.Error("a position on a dropped line moved")
	}
}

// TestDigestKernelBody: a blanked kernel body is read only through its
// summary (fixmodel.KernelSummary): an edit past its first line that stores
// through the same parameters keeps the digest (its lines are left out and
// marked Device) and the kernels' summaries (SameKernels); one that stores
// through another parameter, edits the first body line (the `...` node is
// on it) or the signature, or ends the body earlier, changes one of them.
func TestDigestKernelBody(t *testing.T) {
	// same: one Sum, and the kernels whose text changed read alike.
	same := func(before, now *FileDigest) bool {
		ok, _ := SameKernels(before, now, before.KernelText)
		return before.Sum == now.Sum && ok
	}
	src := "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x, y, n: tl.constexpr):\n    i = tl.program_id(0)\n    v = tl.load(y + i)\n    tl.store(x + i, v * 2)\n\n\ndef h():\n    pass\n"
	base := digestText(t, src)
	if !base.Device {
		t.Fatal("no kernel body line was left out: the kernel is not blanked")
	}
	alike := []struct{ name, old, new string }{
		{"a blank line in the body", "(0)\n", "(0)\n\n"},
		{"a blank line after the body", "\n\ndef h", "\n\n\ndef h"},
		{"a literal in the body", "v * 2", "v * 3"},
		{"a statement added to the body", "    v = tl.load(y + i)\n", "    v = tl.load(y + i)\n    w = v + 1\n    v = w\n"},
		{"a comment in the body", "    v = tl.load(y + i)\n", "    # capguard: ignore[CG101] not a node here\n    v = tl.load(y + i)\n"},
	}
	for _, c := range alike {
		if !strings.Contains(src, c.old) {
			t.Fatalf("%s: %q not in the source", c.name, c.old)
		}
		if !same(base, digestText(t, strings.Replace(src, c.old, c.new, 1))) {
			t.Errorf("%s changed the digest", c.name)
		}
	}
	differ := []struct{ name, old, new string }{
		{"a store through another parameter", "tl.store(x + i, v * 2)", "tl.store(y + i, v * 2)"},
		{"a store through a pointer derived from another parameter", "    v = tl.load(y + i)\n", "    v = tl.load(y + i)\n    p = y + 1\n    tl.atomic_add(p, v)\n"},
		{"the first body line", "i = tl.program_id(0)", "j = tl.program_id(0)\n    i = j"},
		{"the signature", "def k(x, y, n: tl.constexpr)", "def k(x, y, n)"},
		{"a body line moved to the top level", "    tl.store(x + i, v * 2)\n", "tl.store(x + 1, 2)\n"},
	}
	for _, c := range differ {
		if !strings.Contains(src, c.old) {
			t.Fatalf("%s: %q not in the source", c.name, c.old)
		}
		if same(base, digestText(t, strings.Replace(src, c.old, c.new, 1))) {
			t.Errorf("%s kept the digest", c.name)
		}
	}
	// The text before the edit must be there, and be the one hashed.
	edited := digestText(t, strings.Replace(src, "v * 2", "v * 3", 1))
	if ok, _ := SameKernels(base, edited, func(string) []byte { return nil }); ok {
		t.Error("a kernel edit compared without the text before it")
	}
	if ok, _ := SameKernels(base, edited, func(k string) []byte { return []byte(strings.Replace(string(base.KernelText(k)), "v * 2", "v * 4", 1)) }); ok {
		t.Error("a kernel's text that fails its hash was compared")
	}
	// A kernel not blanked (not at the top level) is code like any other.
	nested := "import triton\nimport triton.language as tl\n\n\ndef make():\n    @triton.jit\n    def k(x):\n        i = tl.program_id(0)\n        tl.store(x + i, i)\n    return k\n"
	if d1, d2 := digestText(t, nested), digestText(t, strings.Replace(nested, "(x + i, i)", "(x + i, i + 1)", 1)); same(d1, d2) || d1.Device {
		t.Error("an edit in a nested kernel (parsed as code) kept the digest")
	}
}

// TestDigestsWhileSolving: a run's digests, made on another core while the
// solve writes its nodes into the trees (syntax.Node.Aux), are the digests
// of the files read alone, one per file, on a project whose capture makes
// the solve run. (`go test -race` checks that the two share no memory.)
func TestDigestsWhileSolving(t *testing.T) {
	res, err := Run(Options{Paths: []string{"../testdata/sglang_like"}, Config: &Config{}, Digests: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) == 0 {
		t.Fatal("no findings: the fixture's capture should make the solve run and find its hazards")
	}
	var files []string
	if err := filepath.Walk("../testdata/sglang_like", func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".py") {
			files = append(files, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 || res.Parsed < 2 || len(res.Digests) != res.Parsed {
		t.Fatalf("%d digests for %d parsed files of %d", len(res.Digests), res.Parsed, len(files))
	}
	for _, p := range files {
		got, ok := res.Digests[p]
		if !ok {
			continue // not parsed: no token that matters
		}
		want, ok := DigestFile(p, &Config{}, 0, Relevance{})
		if !ok || got == nil || got.Sum != want.Sum || got.Lines != want.Lines {
			t.Errorf("%s: digest %+v in the run, %+v alone", p, got, want)
		}
	}
}

// TestDigestReadCommentCovers: a read comment keeps the lines it may cover
// below it — a suppression alone on its line the next line, a claim a def
// up to two lines below, after code too — and no more: a trailing
// suppression (`# noqa: F401` on a re-export) covers its own line only,
// so a comment line put under one is inert.
func TestDigestReadCommentCovers(t *testing.T) {
	const src = `from os import path  # noqa: F401
import torch

# capguard: ignore[CG101] read once by design
n = torch.ones(1).item()
k = 1  # capture-safe

def f(x):
    return x
`
	checkDigestEdits(t, src, []digestEdit{
		{"a comment line under a trailing noqa", "import torch\n", "# the tensor library\nimport torch\n", true},
		{"a blank line under a trailing noqa", "import torch\n", "\nimport torch\n", true},
		{"a comment line under a suppression alone on its line", "n = torch", "# the count\nn = torch", false},
		{"a blank line under a trailing claim", "k = 1  # capture-safe\n", "k = 1  # capture-safe\n\n", false},
		{"a comment line above the def a trailing claim covers", "\ndef f", "\n# f\ndef f", false},
		{"a comment line under the def", "def f(x):\n", "def f(x):\n    # f\n", true},
	})
}

// TestDigestStringStatements: a string that is a whole statement is read
// only as a statement (and a def's docstring for a claim), so its text is
// inert wherever it stands — a module's docstring on the first lines, a
// class's, one left in a body as a note — unless it interpolates (an
// f-string's holes run code), holds a word something reads, or is in
// single quotes.
func TestDigestStringStatements(t *testing.T) {
	const src = `# Copyright the authors
"""The engine's steps."""
import torch


class Runner:
    """Runs the steps."""

    def step(self, x):
        y = x + 1
        """Scale, then read back."""
        tag = "a value"
        return y.item()
`
	checkDigestEdits(t, src, []digestEdit{
		{"a module docstring's text", "The engine's steps.", "The engine's decode steps.", true},
		{"a class docstring's text", "Runs the steps.", "Runs every step.", true},
		{"a class docstring over lines", "Runs the steps.\"\"\"", "Runs the steps.\n\n    One at a time.\n    \"\"\"", true},
		{"a string statement in a body", "Scale, then read back.", "Scale by one, then read back.", true},
		{"a string statement that interpolates", "\"\"\"Scale, then read back.\"\"\"", "f\"\"\"Scale by {x}.\"\"\"", false},
		{"a class docstring's claim", "Runs the steps.", "Capture-safe: runs the steps.", false},
		{"a class docstring's prefilter token", "Runs the steps.", "Runs the steps on torch.cuda.", false},
		{"a string that is a value", "a value", "another value", false},
		{"a module docstring's quotes", "\"\"\"The engine's steps.\"\"\"", "\"The engine's steps.\"", false},
	})
}

// digestEdit is an edit of a source (its first old replaced by new) and
// whether the digest stays the same.
type digestEdit struct {
	name, old, new string
	same           bool
}

// checkDigestEdits makes each edit of src and checks whether its digest's
// Sum is src's.
func checkDigestEdits(t *testing.T, src string, edits []digestEdit) {
	t.Helper()
	base := digestText(t, src)
	for _, c := range edits {
		edited := strings.Replace(src, c.old, c.new, 1)
		if edited == src {
			t.Fatalf("%s: no edit", c.name)
		}
		if same := digestText(t, edited).Sum == base.Sum; same != c.same {
			t.Errorf("%s: digest unchanged %v, want %v", c.name, same, c.same)
		}
	}
}
