package pyverify

import (
	"fmt"
	"os"
	"path/filepath"
)

// protocol is the version of the case/result JSON spoken with the harness
// (PROTOCOL in templates/verify_harness.py).
const protocol = 1

// harnessCase is the JSON the harness reads: the spec resolved for one batch
// size, with absolute paths.
type harnessCase struct {
	Protocol   int            `json:"protocol"`
	DryRun     bool           `json:"dry_run,omitempty"`
	BatchSize  int            `json:"batch_size"`
	Replays    int            `json:"replays"`
	Warmup     int            `json:"warmup"`
	Seed       int64          `json:"seed"`
	SyncDebug  bool           `json:"sync_debug"`
	EmptyCache bool           `json:"empty_cache,omitempty"`
	Tolerance  *Tolerance     `json:"tolerance,omitempty"`
	Target     harnessRef     `json:"target"`
	Prep       *harnessPrep   `json:"prep,omitempty"`
	Construct  *Construct     `json:"construct,omitempty"`
	Args       []harnessArg   `json:"args"`
	Extra      map[string]any `json:"extra,omitempty"`
}

// harnessRef names a callable: a file to load (Path, under module name Dotted)
// or a module to import (Module), and the qualified name in it.
type harnessRef struct {
	Path     string   `json:"path,omitempty"`
	Dotted   string   `json:"dotted,omitempty"`
	Module   string   `json:"module,omitempty"`
	Qualname string   `json:"qualname"`
	Class    string   `json:"class,omitempty"`
	Function string   `json:"function"`
	SysPath  []string `json:"sys_path,omitempty"`
}

type harnessPrep struct {
	harnessRef
	Args []string `json:"args,omitempty"`
}

// harnessArg is an Arg with its shape resolved for the batch size.
type harnessArg struct {
	*Arg
	Shape []int `json:"shape,omitempty"`
	Pass  bool  `json:"pass"`
}

// source says which files a run loads: the target file (perhaps a patched
// copy standing in for the user's) and the prep file.
type source struct {
	// RunPath is the file the harness loads for the target; OrigPath the
	// user's file it stands for (module name and sys.path come from it).
	RunPath, OrigPath string
	// PrepPath replaces the prep file (a "file.py:fn" call) when non-empty.
	PrepPath string
}

func buildCase(t Target, s *Spec, src source, batch int, o *Options) (*harnessCase, error) {
	orig, err := filepath.Abs(src.OrigPath)
	if err != nil {
		return nil, err
	}
	run, err := filepath.Abs(src.RunPath)
	if err != nil {
		return nil, err
	}
	dotted, root, err := moduleOf(orig)
	if err != nil {
		return nil, err
	}
	sysPath := uniq([]string{root, filepath.Dir(orig)})
	c := &harnessCase{
		Protocol:   protocol,
		DryRun:     o.DryRun,
		BatchSize:  batch,
		Replays:    o.Replays,
		Warmup:     s.Warmup,
		Seed:       s.Seed,
		SyncDebug:  s.SyncDebug == nil || *s.SyncDebug,
		EmptyCache: s.EmptyCache,
		Tolerance:  s.Tolerance,
		Construct:  s.Construct,
		Target: harnessRef{
			Path: run, Dotted: dotted, Qualname: t.Qualname(), Class: t.Class, Function: t.Function, SysPath: sysPath,
		},
	}
	if c.Warmup == 0 {
		c.Warmup = 3
	}
	if t.Class != "" {
		c.Target.Qualname = t.Class
	}
	if s.Prep != nil {
		mod, fn, _ := splitCall(s.Prep.Call)
		prep, isFile := s.prepFile()
		p := &harnessPrep{Args: s.Prep.Args}
		p.Qualname, p.Function, p.SysPath = fn, fn, sysPath
		switch {
		case mod == "":
			p.Path, p.Dotted = run, dotted
		case isFile:
			pp, _ := filepath.Abs(prep)
			if _, err := os.Stat(pp); err != nil {
				return nil, &SpecError{s.Path, fmt.Sprintf("[prep] call %q: %v", s.Prep.Call, err)}
			}
			pd, proot, err := moduleOf(pp)
			if err != nil {
				return nil, err
			}
			p.Dotted, p.SysPath = pd, uniq(append([]string{proot, filepath.Dir(pp)}, sysPath...))
			p.Path = pp
			if samePath(pp, orig) {
				p.Path = run
			} else if src.PrepPath != "" {
				p.Path = src.PrepPath
			}
		default:
			p.Module = mod
		}
		c.Prep = p
	}
	for _, a := range s.Args {
		h := harnessArg{Arg: a, Pass: a.Pass == nil || *a.Pass}
		for _, d := range a.Shape {
			n, err := dim(d, batch)
			if err != nil {
				return nil, &SpecError{s.Path, fmt.Sprintf("arg %q: %v", a.Name, err)}
			}
			h.Shape = append(h.Shape, n)
		}
		c.Args = append(c.Args, h)
	}
	return c, nil
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

func uniq(xs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
