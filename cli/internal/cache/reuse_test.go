package cache

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard"
)

// An engine in miniature: the runner captures step (in another module),
// which reads a value back to the host through sync; the fixable
// temporary feeds a kernel launcher; comments sit before, on and after
// the findings' lines.
var editProject = map[string]string{
	"eng/__init__.py": "",
	"eng/runner.py": `import torch

from eng.steps import step


# the runner owns the graph
def capture(x):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step(x)  # one decode step
    return g
`,
	"eng/steps.py": `import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n):
    i = tl.program_id(0)
    tl.store(out_ptr + i, tl.load(x_ptr + i) * n)


def sync(x):
    # reads a value back to the host
    return x.item()


def launch(x, out):
    """Capture-safe: the caller owns every buffer."""
    # a temporary into the kernel
    y = x.to(torch.int32)  # an int32 copy
    scale_kernel[(1,)](y, out, 2)
    return out


def other(x):
    # another host read
    return x.sum().tolist()


def step(x):
    # scale, then read back
    y = x * 2  # scale
    n = sync(y)  # the host read
    z = launch(y, x)  # the launch
    return z + n
`,
}

// TestEditReuseEqualsUncached: after each edit the cached run reports what
// an uncached run reports, offsets and fix edits included; an edit to
// inert comments is served from the stored result (Reused), an edit that
// changes a call edge, a capture root or a suppression comment is
// analysed again (Miss).
func TestEditReuseEqualsUncached(t *testing.T) {
	noRacy(t)
	dir := project(t, editProject)
	cacheDir := t.TempDir()
	steps := filepath.Join(dir, "eng", "steps.py")
	runner := filepath.Join(dir, "eng", "runner.py")
	src := map[string]string{steps: editProject["eng/steps.py"], runner: editProject["eng/runner.py"]}
	opts := guard.Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &guard.Config{}}
	edits := []editStep{
		{"first run", "", "", "", Miss, true},
		{"unchanged", "", "", "", Hit, false},
		{"longer comment before the findings", steps, "# reads a value back to the host", "# reads a value back to the host, which waits for the device", Reused, false},
		{"shorter comment on a finding's line", steps, "# an int32 copy", "#", Reused, false},
		{"comment after a finding in another file", runner, "# one decode step", "# one captured decode step, every replay", Reused, false},
		{"a call edge", steps, "return z + n", "return z + n + other(x)", Miss, true},
		{"a capture root", runner, "    with torch.cuda.graph(g):\n        step(x)", "    step(x)\n    with torch.cuda.graph(g):\n        pass", Miss, true},
		{"the capture root back", runner, "    step(x)\n    with torch.cuda.graph(g):\n        pass", "    with torch.cuda.graph(g):\n        step(x)", Miss, true},
		{"a suppression comment", steps, "return x.item()", "return x.item()  # capguard: ignore[CG101] read once per step by design", Miss, true},
		{"a comment moved to a new line", steps, "    # another host read\n", "\n    # another host read\n", Reused, false},
		// Lines that move: blank lines and comments added and removed
		// before, between and after the findings.
		{"a blank line before the findings", steps, "def sync(x):\n", "\ndef sync(x):\n", Reused, true},
		{"a comment line in a captured function", steps, "    y = x.to(torch.int32)", "    # int32 for the kernel\n    y = x.to(torch.int32)", Reused, true},
		{"a comment at column 0 in a function body", steps, "    return x.sum().tolist()", "# the read\n    return x.sum().tolist()", Reused, true},
		// A comment that comes after code or goes: the end of the code
		// or of the line? Analysed again (guard.FileDigest). A comment's
		// text changed after code is served ("shorter comment on a
		// finding's line").
		{"the comment after the fixed statement removed", steps, "    y = x.to(torch.int32)  #\n", "    y = x.to(torch.int32)\n", Miss, false},
		{"a comment after the fixed statement", steps, "    y = x.to(torch.int32)\n", "    y = x.to(torch.int32)  # to int32\n", Miss, false},
		{"a comment after a finding", steps, "    return x.sum().tolist()\n", "    return x.sum().tolist()  # waits\n", Miss, false},
		{"blank lines removed", steps, "\n\ndef other", "\ndef other", Reused, true},
		{"a comment appended", steps, "    return z + n + other(x)\n", "    return z + n + other(x)\n# the end\n", Reused, false},
		// Docstrings: text nothing reads, unless it claims capture safety.
		{"a docstring added", steps, "def sync(x):\n", "def sync(x):\n    \"\"\"Reads back.\"\"\"\n", Miss, false},
		{"the docstring's text", steps, "Reads back.", "Reads the value back.", Reused, false},
		{"the docstring over lines", steps, "Reads the value back.\"\"\"", "Reads the value back.\n\n    It waits for the kernels before it.\n    \"\"\"", Reused, true},
		{"a claim in the docstring", steps, "Reads the value back.", "Capture-safe: reads the value back.", Miss, true},
		{"the capture root's file: a blank line", runner, "    g = torch.cuda.CUDAGraph()\n", "\n    g = torch.cuda.CUDAGraph()\n", Reused, false},
		{"the same bytes again", steps, "", "", Hit, false},
		// Blank lines that are code: inside a string spanning lines, inside
		// a Triton kernel body.
		{"a docstring over lines", steps, `"""Capture-safe: the caller owns every buffer."""`, "\"\"\"Capture-safe.\n\n    The caller owns every buffer.\n    \"\"\"", Miss, false},
		{"a blank line in the docstring", steps, "    The caller owns", "\n    The caller owns", Miss, false},
		{"a blank line in a kernel body", steps, "    i = tl.program_id(0)\n", "    i = tl.program_id(0)\n\n", Reused, true},
		// Kernel bodies: device code, read through which parameters the
		// kernel stores through (guard.FileDigest).
		{"a literal in a kernel body", steps, "tl.load(x_ptr + i) * n)", "tl.load(x_ptr + i) * n + 1)", Reused, false},
		{"a statement in a kernel body", steps, "    i = tl.program_id(0)\n\n", "    i = tl.program_id(0)\n    j = i + 1\n", Reused, false},
		{"a store through the temporary's parameter", steps, "    j = i + 1\n", "    j = i + 1\n    tl.store(x_ptr + j, j)\n", Miss, true},
		{"the store gone", steps, "    tl.store(x_ptr + j, j)\n", "", Miss, true},
		{"the kernel's first body line", steps, "    i = tl.program_id(0)\n", "    i = tl.program_id(0) + 0\n", Miss, false},
		// Code edits: analysed again.
		{"a literal", steps, "y = x * 2", "y = x * 3", Miss, false},
		{"a statement in a captured function", steps, "    z = launch(y, x)", "    w = y + 1\n    z = launch(y, x)", Miss, false},
		{"a host read in a captured function", steps, "    w = y + 1\n", "    w = y.item()\n", Miss, true},
		{"a local renamed", steps, "    z = launch(y, x)", "    zz = launch(y, x)\n    z = zz", Miss, false},
		{"a new call", runner, "        step(x)", "        step(x + 1)\n        step(x)", Miss, false},
		// A suppression alone on its line covers the next line: a blank
		// line put under it is analysed again (the finding comes back).
		{"a suppression above a finding", steps, "    return x.sum().tolist()  # waits", "    # capguard: ignore[CG101] read once by design\n    return x.sum().tolist()  # waits", Miss, true},
		{"a blank line under the suppression", steps, "read once by design\n", "read once by design\n\n", Miss, true},
		{"the blank line gone", steps, "read once by design\n\n", "read once by design\n", Miss, true},
	}
	if reused := checkEdits(t, opts, cacheDir, src, edits); reused < 14 {
		t.Errorf("%d runs reused, want 14", reused)
	}
}

// An editStep is one edit of an edit sequence (checkEdits): old replaced
// by new in file ("" for none; old "" writes the same bytes again), the
// cache's status it should give, and whether the findings should differ
// from the previous step's.
type editStep struct {
	name    string
	file    string
	old     string
	new     string
	want    Status
	changes bool
}

// checkEdits makes each edit in turn, runs the cached and the uncached
// analysis after each, and checks that they report the same (findings,
// offsets, fix edits, the JSON report), that the cache did what the step
// wants and that the findings changed where the step says; it returns how
// many runs the cache served by reuse.
func checkEdits(t *testing.T, opts guard.Options, cacheDir string, src map[string]string, edits []editStep) int {
	t.Helper()
	var prev []byte
	reused := 0
	for i, ed := range edits {
		if ed.file != "" {
			if ed.old == "" { // the same bytes, written again
				write(t, ed.file, src[ed.file])
			} else if !strings.Contains(src[ed.file], ed.old) {
				t.Fatalf("%s: %q not in %s", ed.name, ed.old, ed.file)
			}
			src[ed.file] = strings.Replace(src[ed.file], ed.old, ed.new, 1)
			write(t, ed.file, src[ed.file])
		}
		got, want, st := runStep(t, opts, cacheDir, ed)
		if st == Reused {
			reused++
		}
		if len(got.Diagnostics) != len(want.Diagnostics) {
			t.Fatalf("%s: %d findings, uncached %d", ed.name, len(got.Diagnostics), len(want.Diagnostics))
		}
		fixes := 0
		for k := range want.Diagnostics {
			if !reflect.DeepEqual(got.Diagnostics[k], want.Diagnostics[k]) {
				t.Errorf("%s: finding %d differs from the uncached run's:\n%+v\n%+v", ed.name, k, got.Diagnostics[k], want.Diagnostics[k])
			}
			if want.Diagnostics[k].Fix != nil && len(want.Diagnostics[k].Fix.Edits) > 0 {
				fixes++
			}
		}
		if i == 0 && fixes == 0 {
			t.Fatalf("the project gives %d findings, none with fix edits: it no longer covers a moved fix", len(want.Diagnostics))
		}
		if j := jsonOf(t, want); !bytes.Equal(jsonOf(t, got), j) {
			t.Errorf("%s: the JSON report differs from the uncached one:\n%s\n%s", ed.name, jsonOf(t, got), j)
		} else if i > 0 && bytes.Equal(j, prev) == ed.changes && ed.changes {
			t.Errorf("%s: the findings did not change: the edit no longer tests what it names", ed.name)
		}
		prev = jsonOf(t, want)
	}
	return reused
}

// TestReuseResultEqualsUncached: the in-memory path (capguard server)
// moves a result after a buffer's comment and blank lines change, or a
// kernel body's code that stores through the same parameters, as an
// analysis of the buffer reports it; another code edit is refused.
func TestReuseResultEqualsUncached(t *testing.T) {
	dir := project(t, editProject)
	steps := filepath.Join(dir, "eng", "steps.py")
	opts := guard.Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &guard.Config{}, Digests: true}
	res, err := guard.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	src := editProject["eng/steps.py"]
	for _, c := range []struct {
		name, old, new string
		ok             bool
	}{
		{"lines above the findings", "def sync(x):", "# helpers\n\n\ndef sync(x):", true},
		{"a comment line between them", "    y = x.to(torch.int32)", "    # for the kernel\n    y = x.to(torch.int32)", true},
		{"a literal", "y = x * 2", "y = x * 4", false},
		{"a statement in a kernel body", "    i = tl.program_id(0)\n", "    i = tl.program_id(0)\n    j = i + 1\n", true},
		{"a store in a kernel body", "    i = tl.program_id(0)\n", "    i = tl.program_id(0)\n    tl.store(x_ptr + i, i)\n", false},
	} {
		edited := strings.Replace(src, c.old, c.new, 1)
		got, _, why := ReuseResult(res, res.Digests, map[string][]byte{steps: []byte(edited)}, 0)
		if (why == "") != c.ok {
			t.Errorf("%s: reused %v (%s), want %v", c.name, why == "", why, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		o := opts
		o.Overlay = map[string][]byte{steps: []byte(edited)}
		want, err := guard.Run(o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) || !reflect.DeepEqual(got.Settings, want.Settings) {
			t.Errorf("%s: the moved result differs from the analysis of the buffer", c.name)
		}
		if reflect.DeepEqual(got.Diagnostics, res.Diagnostics) {
			t.Errorf("%s: no finding moved: the edit no longer tests a move", c.name)
		}
		if !bytes.Equal(got.Source(steps), want.Source(steps)) {
			t.Errorf("%s: the moved result's source is not the buffer's", c.name)
		}
	}
}

// TestQuotedLines: a text naming a line of the moved file (by path, or by
// a qualified name through its module), or spanning lines, stops a move;
// one naming another file's line does not.
func TestQuotedLines(t *testing.T) {
	seq := func(msgs ...string) func(func(*guard.Diagnostic) bool) {
		return func(yield func(*guard.Diagnostic) bool) {
			for _, m := range msgs {
				if !yield(&guard.Diagnostic{Message: m}) {
					return
				}
			}
		}
	}
	path := filepath.Join("pkg", "runner.py")
	for _, c := range []struct {
		text string
		stop bool
	}{
		{"a captured call at pkg/runner.py:12", true},
		{"pkg.runner.Runner.forward (line 40) runs the subclass", true},
		{"called on line 7", true},
		{"quotes `a +\n b`", true},
		{"a captured call at pkg/steps.py:12", false},
		{"pkg.steps.step (line 40) runs the subclass", false},
		{"a pipeline 3 stages deep", false},
		// A module's or function's line: the file is one of its parts.
		{"remote call collective_rpc(\"sleep\") in pkg.runner, line 569", true},
		{"`step` in pkg.runner.Runner.forward, line 12", true},
		{"remote call collective_rpc(\"sleep\") in pkg.steps, line 569", false},
		{"make_graphed_callables in pkg.steps.warm, line 3", false},
		{"a call on that line 4 times", true},
	} {
		if got := quotedLines(seq(c.text), nil, nil, path) != ""; got != c.stop {
			t.Errorf("%q: stops the move %v, want %v", c.text, got, c.stop)
		}
	}
	if quotesBlankLine(seq("a\n\n  b")) == "" || quotesBlankLine(seq("a\n  b")) != "" {
		t.Error("quotesBlankLine: a blank line inside a text is what it finds")
	}
}

// kernelProject: the kernel lives in its own module; the launcher, in
// another, claims capture safety and feeds it a temporary (CG301, whose
// message and fix depend on whether the kernel writes through it).
var kernelProject = map[string]string{
	"eng/__init__.py": "",
	"eng/kernels.py": `import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n):
    i = tl.program_id(0)
    a = tl.load(x_ptr + i)
    b = tl.load(y_ptr + i)
    tl.store(out_ptr + i, a + b * n)
`,
	"eng/ops.py": `import torch

from eng.kernels import add_kernel


def add(x, y, out):
    """Capture-safe: the caller owns every buffer."""
    t = y.to(torch.float32)
    add_kernel[(1,)](x, t, out, 2)
    return out
`,
	"eng/runner.py": `import torch

from eng.ops import add


def capture(x, y, out):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        add(x, y, out)
    return g
`,
}

// TestKernelEditReuseEqualsUncached: an edit inside a kernel body in one
// module is served while the kernel stores through the same parameters,
// and analysed again when it stores through the one the launcher in
// another module feeds a temporary (that module's findings change).
func TestKernelEditReuseEqualsUncached(t *testing.T) {
	noRacy(t)
	dir := project(t, kernelProject)
	kernels := filepath.Join(dir, "eng", "kernels.py")
	ops := filepath.Join(dir, "eng", "ops.py")
	src := map[string]string{kernels: kernelProject["eng/kernels.py"], ops: kernelProject["eng/ops.py"]}
	opts := guard.Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &guard.Config{}}
	edits := []editStep{
		{"first run", "", "", "", Miss, true},
		{"a literal in the kernel", kernels, "b * n)", "b * n + 1)", Reused, false},
		{"lines added to the kernel", kernels, "    b = tl.load(y_ptr + i)\n", "    b = tl.load(y_ptr + i)\n\n    c = a * b\n    a = c + a\n", Reused, false},
		{"a store through the temporary's parameter", kernels, "    c = a * b\n", "    c = a * b\n    tl.store(y_ptr + i, c)\n", Miss, true},
		{"another statement after it", kernels, "    a = c + a\n", "    a = c + a + 1\n", Reused, false},
		{"the store through a derived pointer", kernels, "    tl.store(y_ptr + i, c)\n", "    p = y_ptr + 1\n    tl.store(p + i, c)\n", Reused, false},
		{"the store gone", kernels, "    p = y_ptr + 1\n    tl.store(p + i, c)\n", "", Miss, true},
		{"a literal in the launcher", ops, "out, 2)", "out, 3)", Miss, false},
		{"the kernel's signature", kernels, "out_ptr, n)", "out_ptr, n: tl.constexpr)", Miss, false},
	}
	if reused := checkEdits(t, opts, t.TempDir(), src, edits); reused != 4 {
		t.Errorf("%d runs reused, want 4", reused)
	}
}

// TestKernelEditWithoutKeptText: an edit inside a kernel body is analysed
// again when the kernel's text before it is not kept (its summary cannot
// be compared).
func TestKernelEditWithoutKeptText(t *testing.T) {
	noRacy(t)
	dir := project(t, kernelProject)
	kernels := filepath.Join(dir, "eng", "kernels.py")
	cacheDir := t.TempDir()
	opts := guard.Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &guard.Config{}}
	for i, drop := range []bool{false, true} {
		src := strings.Replace(kernelProject["eng/kernels.py"], "b * n)", fmt.Sprintf("b * n + %d)", i), 1)
		write(t, kernels, kernelProject["eng/kernels.py"])
		settle()
		if _, _, err := Run(opts, Options{Dir: cacheDir, Version: "test"}); err != nil {
			t.Fatal(err)
		}
		if drop {
			packs, _ := filepath.Glob(filepath.Join(cacheDir, formatVersion, "*.kernels"))
			if len(packs) == 0 {
				t.Fatal("no kernel pack was written")
			}
			for _, p := range packs {
				os.Remove(p)
			}
		}
		write(t, kernels, src)
		settle()
		_, st, err := Run(opts, Options{Dir: cacheDir, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]Status{false: Reused, true: Miss}[drop]; st != want {
			t.Errorf("kept texts removed %v: cache %s, want %s", drop, st, want)
		}
	}
}

// TestSpansAnyLine: with a kernel body's lines left out, a text across
// lines stops a move when it is a warning or a text of a finding in the
// edited file (its fix's new text too); one of a finding in another file
// does not (no node holds a left-out line).
func TestSpansAnyLine(t *testing.T) {
	path := filepath.Join("pkg", "kernels.py")
	seq := func(ds ...*guard.Diagnostic) func(func(*guard.Diagnostic) bool) {
		return func(yield func(*guard.Diagnostic) bool) {
			for _, d := range ds {
				if !yield(d) {
					return
				}
			}
		}
	}
	fix := &guard.Fix{Edits: []guard.TextEdit{{NewText: "buf = a\nbuf.copy_(b)"}}}
	for _, c := range []struct {
		name     string
		d        *guard.Diagnostic
		warnings []string
		stop     bool
	}{
		{"a fix across lines in the file", &guard.Diagnostic{Path: path, Fix: fix}, nil, true},
		{"a message across lines in the file", &guard.Diagnostic{Path: path, Message: "a\nb"}, nil, true},
		{"a fix across lines in another file", &guard.Diagnostic{Path: filepath.Join("pkg", "ops.py"), Fix: fix}, nil, false},
		{"a warning across lines", &guard.Diagnostic{Path: path}, []string{"a\nb"}, true},
		{"one line", &guard.Diagnostic{Path: path, Message: "a b"}, []string{"c"}, false},
	} {
		if got := spansAnyLine(seq(c.d), c.warnings, path) != ""; got != c.stop {
			t.Errorf("%s: stops the move %v, want %v", c.name, got, c.stop)
		}
	}
}

// TestKernelPack: a pack gives back the texts written and appended, and
// none of a record cut short.
func TestKernelPack(t *testing.T) {
	dir := project(t, kernelProject)
	d, ok := guard.DigestFile(filepath.Join(dir, "eng", "kernels.py"), &guard.Config{}, 0, guard.Relevance{})
	if !ok || len(d.Kernels) != 1 {
		t.Fatalf("digest %v, kernels %v", ok, d)
	}
	k := d.Kernels[0][1]
	pack := filepath.Join(t.TempDir(), "run.kernels")
	writeKernels(pack, []*guard.FileDigest{d}, nil)
	appendKernels(pack, []*guard.FileDigest{d})
	if got := readKernels(pack)[k]; !bytes.Equal(got, d.KernelText(k)) || len(got) == 0 {
		t.Errorf("the pack gives back %q, want %q", got, d.KernelText(k))
	}
	data, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pack, data[:len(data)/4], 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readKernels(pack); len(got) != 0 {
		t.Errorf("a record cut short was read: %q", got)
	}
}

// literalProject: a captured step that reads a module-level flag, with a
// fixable temporary into a kernel.
var literalProject = map[string]string{
	"eng/__init__.py": "",
	"eng/runner.py": `import torch

from eng.steps import step


def capture(x):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step(x)
    return g
`,
	"eng/steps.py": `import torch
import triton
import triton.language as tl

CHECK_SYNC = True


@triton.jit
def scale_kernel(x_ptr, out_ptr, n):
    i = tl.program_id(0)
    tl.store(out_ptr + i, tl.load(x_ptr + i) * n)


def launch(x, out):
    """Capture-safe: the caller owns every buffer."""
    y = x.to(torch.int32)
    scale_kernel[(1,)](y, out, 2)
    return out


def step(x):
    y = launch(x, x)
    if CHECK_SYNC:
        return y.item()
    return y
`,
}

// TestLiteralEditReuseEqualsUncached: a module-level literal bound to a
// name that no file holds (guard.InertUnit) is served when it is added,
// changed, moved or removed; one whose name some text holds (a read, or
// even a comment), or whose value is not a literal, is analysed again.
// Each cached run reports what an uncached run does.
func TestLiteralEditReuseEqualsUncached(t *testing.T) {
	noRacy(t)
	dir := project(t, literalProject)
	cacheDir := t.TempDir()
	steps := filepath.Join(dir, "eng", "steps.py")
	runner := filepath.Join(dir, "eng", "runner.py")
	src := map[string]string{steps: literalProject["eng/steps.py"], runner: literalProject["eng/runner.py"]}
	opts := guard.Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &guard.Config{}}
	edits := []editStep{
		{"first run", "", "", "", Miss, true},
		{"an unread literal appended", steps, "    return y\n", "    return y\n\n\n_UNREAD_LIMIT = 8\n", Reused, false},
		{"its value", steps, "_UNREAD_LIMIT = 8", "_UNREAD_LIMIT = (8, 'eight', -1.5, {1: None})", Reused, false},
		{"a chained literal between statements", steps, "CHECK_SYNC = True\n", "CHECK_SYNC = True\n_UNREAD_A = _UNREAD_B = 2\n", Reused, true},
		{"the chained literal over lines", steps, "_UNREAD_A = _UNREAD_B = 2\n", "_UNREAD_A = _UNREAD_B = (\n    2,\n    3,\n)\n", Reused, true},
		{"the chained literal gone", steps, "_UNREAD_A = _UNREAD_B = (\n    2,\n    3,\n)\n", "", Reused, true},
		{"a literal that is read", steps, "CHECK_SYNC = True", "CHECK_SYNC = False", Miss, false},
		{"a comment elsewhere names the unread literal", runner, "def capture(x):\n", "def capture(x):\n    # see _UNREAD_LIMIT\n", Reused, true},
		{"the literal named elsewhere changed", steps, "_UNREAD_LIMIT = (8, 'eight', -1.5, {1: None})", "_UNREAD_LIMIT = 9", Miss, false},
		{"a call bound at module level", steps, "_UNREAD_LIMIT = 9\n", "_UNREAD_LIMIT = 9\n_UNREAD_T = torch.zeros(1)\n", Miss, false},
		{"an annotated literal", steps, "_UNREAD_T = torch.zeros(1)\n", "_UNREAD_C: int = 1\n", Miss, false},
		{"an f-string", steps, "_UNREAD_C: int = 1\n", "_UNREAD_D = f\"{CHECK_SYNC}\"\n", Miss, false},
		{"two statements on one line", steps, "_UNREAD_D = f\"{CHECK_SYNC}\"\n", "_UNREAD_E = 1; _UNREAD_F = 2\n", Miss, false},
		{"one of them changed", steps, "_UNREAD_F = 2", "_UNREAD_F = 3", Miss, false},
		// A string that names project code may be what a computed import
		// resolves (flow/importstr.go), read or not.
		{"an unread dotted name", steps, "_UNREAD_F = 3\n", "_UNREAD_F = 3\n\n_UNREAD_PATH = \"eng.steps.launch\"\n", Miss, false},
	}
	if reused := checkEdits(t, opts, cacheDir, src, edits); reused != 6 {
		t.Errorf("%d runs reused, want 6", reused)
	}
}

// A project whose layer file is relevant only through the tokens of a
// preset its imports turn on (the lightllm preset's `*LayerInfer*` and
// `token_forward`: the file holds no root token of its own), and one
// relevant only through the name of the CUDA extension its setup builds.
var relevanceProject = map[string]string{
	"eng/__init__.py": "",
	"eng/engine.py": `import lightllm

from eng.layers import DecodeLayerInfer


def serve(x):
    return DecodeLayerInfer().token_forward(x)
`,
	"eng/layers.py": `from eng.fused import fused_norm


class DecodeLayerInfer:
    def token_forward(self, x):
        # scale, then norm
        y = x * 2
        return fused_norm(y)
`,
	"eng/fused.py": `import eng_fused_ops


def fused_norm(y):
    # the extension's norm
    return eng_fused_ops.norm(y)
`,
	"setup.py": `from torch.utils.cpp_extension import CUDAExtension, BuildExtension
from setuptools import setup

setup(
    name="eng",
    ext_modules=[CUDAExtension("eng_fused_ops", ["csrc/norm.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
`,
}

// TestPresetRelevantEditReused: a file relevant only through what every
// file of the run decides (an imported preset's tokens, an extension's
// name) gets, after a comment edit, the digest the run stored for it
// (guard.Relevance), so the edit is served; without the run's Relevance
// its digest differs, which would make every edit to it a whole analysis.
func TestPresetRelevantEditReused(t *testing.T) {
	noRacy(t)
	dir := project(t, relevanceProject)
	cacheDir := t.TempDir()
	layers := filepath.Join(dir, "eng", "layers.py")
	fused := filepath.Join(dir, "eng", "fused.py")
	opts := guard.Options{Paths: []string{dir}, Config: &guard.Config{}, Digests: true}
	res, err := guard.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Relevance.ImportPresets, []string{"lightllm"}) || len(res.Relevance.ExtensionOps) == 0 {
		t.Fatalf("relevance %+v, want the lightllm preset and the extension", res.Relevance)
	}
	for _, p := range []string{layers, fused} {
		stored := res.Digests[p]
		if stored == nil {
			t.Fatalf("%s: not parsed (the preset's or extension's tokens did not make it relevant)", p)
		}
		with, ok := guard.DigestFile(p, opts.Config, 0, res.Relevance)
		if !ok || with.Sum != stored.Sum {
			t.Errorf("%s: digest with the run's relevance differs from the stored one", p)
		}
		if without, ok := guard.DigestFile(p, opts.Config, 0, guard.Relevance{}); ok && without.Sum == stored.Sum {
			t.Errorf("%s: digest without the run's relevance equals the stored one: the test cannot fail", p)
		}
	}
	src := map[string]string{layers: relevanceProject["eng/layers.py"], fused: relevanceProject["eng/fused.py"]}
	checkServed(t, guard.Options{Paths: []string{dir}, Config: &guard.Config{}}, cacheDir, src, []editStep{
		{"first run", "", "", "", Miss, true},
		{"a comment in the preset-relevant file", layers, "# scale, then norm", "# scale by two, then norm", Reused, false},
		{"a comment in the extension-relevant file", fused, "# the extension's norm", "# the extension's fused norm", Reused, false},
		{"code in the preset-relevant file", layers, "y = x * 2", "y = x * 3", Miss, false},
	})
}

// runStep runs the cached and the uncached analysis after an edit step,
// past the racy window, and checks the cache did what the step wants.
func runStep(t *testing.T, opts guard.Options, cacheDir string, ed editStep) (got, want *guard.Result, st Status) {
	t.Helper()
	settle()
	got, st, err := Run(opts, Options{Dir: cacheDir, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if want, err = guard.Run(opts); err != nil {
		t.Fatal(err)
	}
	if st != ed.want {
		t.Errorf("%s: cache %s, want %s", ed.name, st, ed.want)
	}
	return got, want, st
}

// checkServed makes each edit in turn (old "" inserts new at the file's
// start) and checks that the cache did what the step wants and reported
// what an uncached run reports.
func checkServed(t *testing.T, opts guard.Options, cacheDir string, src map[string]string, steps []editStep) {
	t.Helper()
	for _, ed := range steps {
		if ed.file != "" {
			src[ed.file] = strings.Replace(src[ed.file], ed.old, ed.new, 1)
			write(t, ed.file, src[ed.file])
		}
		got, want, _ := runStep(t, opts, cacheDir, ed)
		if !bytes.Equal(jsonOf(t, got), jsonOf(t, want)) {
			t.Errorf("%s: the JSON report differs from the uncached one:\n%s\n%s", ed.name, jsonOf(t, got), jsonOf(t, want))
		}
	}
}

// TestHeaderEditReused: a comment on a file's first two lines is inert
// unless it is read (an encoding declaration holds "coding"): one written
// into an empty `__init__.py`, or under a licence line, is served; one
// that pushes an encoding declaration off the second line changes the
// file's encoding and is analysed again. A module's or class's docstring
// is inert as a def's is.
func TestHeaderEditReused(t *testing.T) {
	noRacy(t)
	files := maps.Clone(editProject)
	// Both import the engine's steps: a file the prefilter leaves unparsed
	// keeps no digest, and any edit to it is analysed again.
	files["eng/util.py"] = "# Copyright the authors\nfrom eng.steps import step\n"
	files["eng/latin.py"] = "# helpers\n# -*- coding: latin-1 -*-\nfrom eng.steps import step\nNAME = 'caf\xe9'\n"
	files["eng/models.py"] = "\"\"\"The engine's models.\"\"\"\nfrom eng.steps import step\n\n\nclass Model:\n    \"\"\"Runs one step.\"\"\"\n\n    def forward(self, x):\n        return step(x)\n"
	dir := project(t, files)
	cacheDir := t.TempDir()
	init := filepath.Join(dir, "eng", "__init__.py")
	util := filepath.Join(dir, "eng", "util.py")
	latin := filepath.Join(dir, "eng", "latin.py")
	models := filepath.Join(dir, "eng", "models.py")
	src := map[string]string{init: files["eng/__init__.py"], util: files["eng/util.py"], latin: files["eng/latin.py"], models: files["eng/models.py"]}
	checkServed(t, guard.Options{Paths: []string{filepath.Join(dir, "eng")}, Config: &guard.Config{}}, cacheDir, src, []editStep{
		{"first run", "", "", "", Miss, true},
		{"a comment in the empty __init__.py", init, "", "# the engine package\n", Reused, false},
		{"its text", init, "# the engine package", "# the engine", Reused, false},
		{"a comment under the licence line", util, "\n", "\n# small helpers\n", Reused, false},
		{"the licence line's text", util, "the authors", "the engine's authors", Reused, false},
		{"a blank first line", util, "", "\n", Reused, false},
		{"the comment above the declaration", latin, "# helpers", "# the helpers", Reused, false},
		{"a comment that pushes the declaration to line 3", latin, "", "# more\n", Miss, false},
		// A module's and a class's docstring: statements whose text
		// nothing reads (guard.FileDigest), like a def's.
		{"the module docstring's text", models, "The engine's models.", "The engine's model classes.", Reused, false},
		{"the class docstring's text", models, "Runs one step.", "Runs one decode step.", Reused, false},
		{"a claim in the class docstring", models, "Runs one decode step.", "Capture-safe: runs one decode step.", Miss, false},
	})
}

// TestKeptLinesWithoutFindings: a file without findings keeps no lines in
// the entry, only their hash (guard.FileDigest.Kept): a comment appended
// to it moves no line, so a text of the run that could quote any file's
// line number ("called on line 7") does not stop the move; a comment line
// inserted above its code does, and so does a digest stored without the
// hash, which is taken to have moved.
func TestKeptLinesWithoutFindings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "helpers.py")
	src := "import os\n\n\ndef home():\n    return os.environ['HOME']\n"
	digest := func(text string) *guard.FileDigest {
		t.Helper()
		d, ok := guard.DigestSource(p, []byte(text), &guard.Config{}, 0, guard.Relevance{})
		if !ok {
			t.Fatalf("no digest of %q", text)
		}
		return d
	}
	before := sumOnly(digest(src))
	if before.Lines != 0 || before.Kept == "" {
		t.Fatalf("stored digest %+v: want no lines and their hash", before)
	}
	all := func(yield func(*guard.Diagnostic) bool) { yield(&guard.Diagnostic{Message: "called on line 7"}) }
	move := func(b *guard.FileDigest, text string) string {
		_, _, why := moveFile(p, b, digest(text), nil, nil, nil, all, nil, nil, false)
		return why
	}
	if why := move(before, src+"# the end\n"); why != "" {
		t.Errorf("a comment appended: not moved (%s)", why)
	}
	if why := move(before, strings.Replace(src, "def home", "# where the user lives\ndef home", 1)); !strings.Contains(why, "its lines moved") {
		t.Errorf("a comment line inserted above the code: %q, want its lines moved", why)
	}
	old := *before
	old.Kept = ""
	if why := move(&old, src+"# the end\n"); !strings.Contains(why, "its lines moved") {
		t.Errorf("a digest stored without the hash: %q, want its lines moved", why)
	}
}
