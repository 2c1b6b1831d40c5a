package patcher

import (
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	src := []byte("a = x.to(torch.int32)\nb = y.contiguous()\n")
	tests := []struct {
		name    string
		src     []byte
		changes []Change
		want    string
		reasons []string
	}{
		{
			name: "two fixes, given out of order",
			src:  src,
			changes: []Change{
				{Edits: []Edit{{26, 40, `pb("b", y)`}}},
				{Edits: []Edit{{4, 21, `pb("a", x, torch.int32)`}}},
			},
			want:    "a = pb(\"a\", x, torch.int32)\nb = pb(\"b\", y)\n",
			reasons: []string{"", ""},
		},
		{
			name: "overlap: the later fix is skipped",
			src:  src,
			changes: []Change{
				{Edits: []Edit{{4, 21, "A"}}},
				{Edits: []Edit{{6, 8, "B"}, {26, 40, "C"}}},
			},
			want:    "a = A\nb = y.contiguous()\n",
			reasons: []string{"", "overlaps another fix at bytes 4-21"},
		},
		{
			name: "same edit twice is made once",
			src:  src,
			changes: []Change{
				{Edits: []Edit{{0, 0, "import torch\n"}, {4, 21, "A"}}},
				{Edits: []Edit{{0, 0, "import torch\n"}, {26, 40, "B"}}},
			},
			want:    "import torch\na = A\nb = B\n",
			reasons: []string{"", ""},
		},
		{
			name: "two different insertions at one place conflict",
			src:  src,
			changes: []Change{
				{Edits: []Edit{{0, 0, "# one\n"}}},
				{Edits: []Edit{{0, 0, "# two\n"}}},
			},
			want:    "# one\n" + string(src),
			reasons: []string{"", "overlaps another fix at bytes 0-0"},
		},
		{
			name: "insertion at the start of a replaced range goes first",
			src:  src,
			changes: []Change{
				{Edits: []Edit{{4, 21, "A"}}},
				{Edits: []Edit{{4, 4, "B + "}}},
			},
			want:    "a = B + A\nb = y.contiguous()\n",
			reasons: []string{"", ""},
		},
		{
			name: "malformed changes are refused",
			src:  src,
			changes: []Change{
				{Edits: []Edit{{30, 20, "x"}}},
				{Edits: []Edit{{0, 999, "x"}}},
				{Edits: []Edit{{0, 5, "x"}, {3, 6, "y"}}},
				{},
			},
			want: string(src),
			reasons: []string{
				"edit 30-20 is outside the file (41 bytes)",
				"edit 0-999 is outside the file (41 bytes)",
				"its own edits overlap at byte 3",
				"no edits",
			},
		},
		{
			name:    "CRLF file: inserted newlines become CRLF",
			src:     []byte("a = 1\r\nb = 2\r\n"),
			changes: []Change{{Edits: []Edit{{7, 7, "c = 3\nd = 4\r\n"}}}},
			want:    "a = 1\r\nc = 3\r\nd = 4\r\nb = 2\r\n",
			reasons: []string{""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := string(tt.src)
			got, reasons := Apply(tt.src, tt.changes)
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			if strings.Join(reasons, "|") != strings.Join(tt.reasons, "|") {
				t.Errorf("reasons %q, want %q", reasons, tt.reasons)
			}
			if string(tt.src) != orig {
				t.Error("Apply modified its input")
			}
		})
	}
}

func TestLineEnding(t *testing.T) {
	for src, want := range map[string]string{
		"":                  "\n",
		"a\nb\n":            "\n",
		"a\r\nb\r\n":        "\r\n",
		"a\r\nb\r\nc\n":     "\r\n",
		"a\r\nb\nc\nd\n":    "\n",
		"no newline at all": "\n",
		"x = '\\r\\n'\ny\n": "\n",
		"a\r\n":             "\r\n",
	} {
		if got := lineEnding([]byte(src)); got != want {
			t.Errorf("lineEnding(%q) = %q, want %q", src, got, want)
		}
	}
}
