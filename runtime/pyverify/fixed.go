package pyverify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Fixer returns what `capguard fix` would write for each of paths, without
// writing: the fixed bytes of each file it changes (others may be left out)
// and the unified diff. The command line passes one built on patcher.Fix.
type Fixer func(paths []string) (fixed map[string][]byte, patch string, err error)

// Comparison is a target verified as it is and as `capguard fix` would leave
// it, on the same spec: the report a user shows in a code review.
type Comparison struct {
	Original *Report `json:"original"`
	Fixed    *Report `json:"fixed"`
	// Patch is the diff from the original to the fixed files; empty when
	// the fixer changes nothing (then the fixed run is the original's again).
	Patch   string   `json:"patch"`
	Changed []string `json:"changed_files"`
}

// ExitCode of a comparison: 1 when either side shows a hazard.
func (c *Comparison) ExitCode() int { return ExitCode(c.Original, c.Fixed) }

// fixPaths are the user's files a run loads by path: the target's file and a
// prep callable's "file.py:fn".
func fixPaths(t Target, s *Spec) []string {
	paths := []string{t.Path}
	if p, ok := s.prepFile(); ok && !samePath(p, t.Path) {
		paths = append(paths, p)
	}
	return paths
}

// VerifyFixed verifies the target as it is, then the fixed version of its
// files (written to a temporary folder; the user's files are not touched),
// with the same spec and options.
func VerifyFixed(ctx context.Context, t Target, s *Spec, o Options, fix Fixer) (*Comparison, error) {
	paths := fixPaths(t, s)
	fixed, patch, err := fix(paths)
	if err != nil {
		return nil, fmt.Errorf("capguard fix on %s: %w", strings.Join(paths, ", "), err)
	}
	dir, err := os.MkdirTemp("", "capguard-verify-fixed-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := source{RunPath: t.Path, OrigPath: t.Path}
	cmp := &Comparison{Patch: patch, Changed: []string{}}
	for i, p := range paths {
		data, ok := fixed[p]
		if !ok {
			continue
		}
		cp := filepath.Join(dir, fmt.Sprint(i), filepath.Base(p))
		if err := os.MkdirAll(filepath.Dir(cp), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(cp, data, 0o644); err != nil {
			return nil, err
		}
		cmp.Changed = append(cmp.Changed, p)
		if i == 0 {
			src.RunPath = cp
		} else {
			src.PrepPath = cp
		}
	}
	oo := o
	oo.Variant = "original"
	if cmp.Original, err = Verify(ctx, t, s, oo); err != nil {
		return nil, err
	}
	fo := o
	fo.Variant = "fixed"
	if cmp.Fixed, err = verify(ctx, t, s, src, fo); err != nil {
		return nil, err
	}
	if len(cmp.Changed) > 0 {
		cmp.Fixed.File = t.Path + " as capguard fix would write it (a temporary copy, removed)"
	}
	return cmp, nil
}
