package patcher

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cudagraph-capguard/capguard/templates"

	"github.com/cudagraph-capguard/capguard/guard/testenv"
)

// pyCompile fails the test unless python3 compiles every source.
func pyCompile(t *testing.T, srcs map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for name, src := range srcs {
		p := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+".py")
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, p)
	}
	if err := testenv.PyCompile(t, names...); err != nil {
		t.Fatal(err)
	}
}

var inline = templates.PersistentBufferInline()

func TestEnsureHelperPlacement(t *testing.T) {
	tests := []struct {
		name, src, module, want string
	}{
		{
			name: "after docstring, future import and import block",
			src: `"""Reader."""

from __future__ import annotations

import torch
import triton  # kernels

KEY = 1


def f(x):
    return x
`,
			want: `"""Reader."""

from __future__ import annotations

import torch
import triton  # kernels


` + inline + `

KEY = 1


def f(x):
    return x
`,
		},
		{
			name: "no torch import: added to the import block",
			src:  "import os\ndef f(x):\n    return x\n",
			want: "import os\nimport torch\n\n\n" + inline + "\n\ndef f(x):\n    return x\n",
		},
		{
			name: "docstring only",
			src:  "\"\"\"Doc.\"\"\"\nX = 1\n",
			want: "\"\"\"Doc.\"\"\"\n\nimport torch\n\n\n" + inline + "\n\nX = 1\n",
		},
		{
			name: "no header: after the licence comment",
			src:  "#!/usr/bin/env python3\n# Licence.\nX = 1\n",
			want: "#!/usr/bin/env python3\n# Licence.\nimport torch\n\n\n" + inline + "\n\nX = 1\n",
		},
		{
			name: "last import ends the file without a newline",
			src:  "import torch",
			want: "import torch\n\n\n" + inline,
		},
		{
			name: "guarded imports belong to the block",
			src:  "import torch\ntry:\n    import triton\nexcept ImportError:\n    triton = None\n\n\ndef f():\n    pass\n",
			want: "import torch\ntry:\n    import triton\nexcept ImportError:\n    triton = None\n\n\n" + inline + "\n\ndef f():\n    pass\n",
		},
		{
			name:   "configured module: one import line",
			src:    "import torch\n\nX = 1\n",
			module: "serving.buffers",
			want:   "import torch\nfrom serving.buffers import persistent_buffer\n\nX = 1\n",
		},
		{
			name:   "configured module, no imports",
			src:    "X = 1\n",
			module: "serving.buffers",
			want:   "from serving.buffers import persistent_buffer\n\n\nX = 1\n",
		},
	}
	compiled := map[string][]byte{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, inserted, err := EnsureHelper([]byte(tt.src), tt.module)
			if err != nil {
				t.Fatal(err)
			}
			if !inserted || string(got) != tt.want {
				t.Errorf("inserted=%v, got\n%s\nwant\n%s", inserted, got, tt.want)
			}
			again, inserted, err := EnsureHelper(got, tt.module)
			if err != nil || inserted || !bytes.Equal(again, got) {
				t.Errorf("not idempotent: inserted=%v err=%v", inserted, err)
			}
			compiled[tt.name] = got
		})
	}
	pyCompile(t, compiled)
}

func TestEnsureHelperAlreadyThere(t *testing.T) {
	for _, src := range []string{
		"import torch\nfrom serving.buffers import persistent_buffer\n",
		"import torch\nfrom serving.buffers import pb as persistent_buffer\n",
		"import torch\n\n\ndef persistent_buffer(site, src, dtype=None):\n    return src\n",
		"import torch\ntry:\n    from serving import persistent_buffer\nexcept ImportError:\n    persistent_buffer = None\n",
		"import torch\npersistent_buffer = make()\n",
	} {
		got, inserted, err := EnsureHelper([]byte(src), "")
		if err != nil || inserted || string(got) != src {
			t.Errorf("%q: inserted=%v err=%v, want it unchanged", src, inserted, err)
		}
	}
	// A local of that name, or an attribute, is not a module-level binding.
	src := "import torch\n\n\ndef f():\n    persistent_buffer = 1\n    return persistent_buffer\n"
	if _, inserted, _ := EnsureHelper([]byte(src), ""); !inserted {
		t.Error("a function's local named persistent_buffer hid the missing helper")
	}
}

func TestEnsureHelperKeepsFormatting(t *testing.T) {
	t.Run("CRLF", func(t *testing.T) {
		src := "import torch\r\n\r\n\r\ndef f(x):\r\n    return x\r\n"
		got, _, err := EnsureHelper([]byte(src), "")
		if err != nil {
			t.Fatal(err)
		}
		if n, crlf := bytes.Count(got, []byte("\n")), bytes.Count(got, []byte("\r\n")); n != crlf {
			t.Errorf("%d of %d newlines are bare LF", n-crlf, n)
		}
		if !bytes.HasSuffix(got, []byte("\r\n\r\n\r\ndef f(x):\r\n    return x\r\n")) {
			t.Errorf("the code after the helper changed:\n%q", got)
		}
		pyCompile(t, map[string][]byte{"crlf": got})
	})
	t.Run("tabs", func(t *testing.T) {
		src := "import torch\n\n\ndef f(x):\n\tif x:\n\t\treturn x\n"
		got, _, err := EnsureHelper([]byte(src), "")
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(got, []byte("\n    ")) {
			t.Error("the helper kept space indentation in a file indented with tabs")
		}
		if !bytes.Contains(got, []byte("\n\tdtype = src.dtype if dtype is None else dtype\n")) {
			t.Errorf("the helper's body is not tab-indented:\n%s", got)
		}
		pyCompile(t, map[string][]byte{"tabs": got})
	})
	t.Run("two spaces", func(t *testing.T) {
		src := "import torch\n\n\nclass C:\n  x = 1\n"
		got, _, _ := EnsureHelper([]byte(src), "")
		if !bytes.Contains(got, []byte("\n  dtype = src.dtype if dtype is None else dtype\n")) {
			t.Errorf("the helper's body does not follow the file's two-space step:\n%s", got)
		}
	})
	t.Run("BOM", func(t *testing.T) {
		src := "\xef\xbb\xbfimport torch\n\nX = 1\n"
		got, _, err := EnsureHelper([]byte(src), "")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(got, []byte("\xef\xbb\xbfimport torch\n\n\n# ")) || bytes.Count(got, bom) != 1 {
			t.Errorf("BOM or placement lost:\n%q", got[:40])
		}
		pyCompile(t, map[string][]byte{"bom": got})
	})
}

func TestEnsureHelperRefusesSyntaxError(t *testing.T) {
	if _, _, err := EnsureHelper([]byte("def f(:\n"), ""); err == nil {
		t.Error("inserted into a file with a syntax error")
	}
}

func TestCheckEncoding(t *testing.T) {
	for src, ok := range map[string]bool{
		"x = 1\n":                            true,
		"x = 'caf\xc3\xa9'\n":                true,
		"x = 'caf\xe9'\n":                    false,
		"# -*- coding: latin-1 -*-\nx = 1\n": true,
		"# -*- coding: latin-1 -*-\nx = 'caf\xc3\xa9'\n":         true, // valid Latin-1 (PEP 263)
		"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n":             true,
		"# -*- coding: ascii -*-\nx = 'caf\xe9'\n":               false,
		"# -*- coding: cp1252 -*-\nx = '\x81'\n":                 false,
		"#!/usr/bin/python\n# coding=utf-8\nx = 'caf\xc3\xa9'\n": true,
	} {
		if err := checkEncoding([]byte(src)); (err == nil) != ok {
			t.Errorf("checkEncoding(%q) = %v, want ok=%v", src, err, ok)
		}
	}
}

func TestEnsureHelperRefusesToBreak(t *testing.T) {
	// tree-sitter accepts a lone line continuation; nothing can follow it.
	if _, _, err := EnsureHelper([]byte("\\"), ""); err != ErrHelperBreaks {
		t.Errorf("got %v, want ErrHelperBreaks", err)
	}
}
