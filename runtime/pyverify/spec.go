package pyverify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Spec says how to call a target: its arguments in call order, which of them
// are static inputs refreshed before every replay and which are fixed, the
// replay-prep callable, and how to construct the instance of a method target.
// It is read from TOML or JSON (LoadSpec); both use the same keys:
//
//	replays = 5                    # optional; --replays overrides
//	batch_sizes = [1, 4, 32]       # optional; --batch-sizes overrides
//
//	[[arg]]                        # one per argument, in call order
//	name  = "seq_lens"
//	role  = "static"               # static | fixed | output | mirror | const
//	shape = ["B"]                  # ints and "B" (the batch size), "B*4", "2*B"
//	dtype = "int64"
//	init  = "randint 1..256"       # randn | rand lo..hi | randint lo..hi | arange | zeros | ones | full
//
//	[[arg]]
//	name = "seq_lens_cpu"
//	role = "mirror"                # a CPU copy of another argument, refreshed after it
//	mirror_of = "seq_lens"
//
//	[prep]                         # run before capture, before every replay and before every eager run
//	call = "prepare"               # in the target's file; or "other.py:fn" (relative to the spec), "pkg.mod:fn"
//	args = ["seq_lens", "page_table"]
//
//	[construct]                    # for a Class.method target: Class(*args, **kwargs)
//	args = ["weights"]             # argument names (not passed to the method)
//	kwargs = { page_size = 16 }    # literal values
type Spec struct {
	Path string `toml:"-" json:"-"` // the file it was read from

	Args       []*Arg     `toml:"arg" json:"arg"`
	Prep       *Prep      `toml:"prep" json:"prep,omitempty"`
	Construct  *Construct `toml:"construct" json:"construct,omitempty"`
	BatchSizes []int      `toml:"batch_sizes" json:"batch_sizes,omitempty"`
	Replays    int        `toml:"replays" json:"replays,omitempty"`
	Warmup     int        `toml:"warmup" json:"warmup,omitempty"`
	Seed       int64      `toml:"seed" json:"seed,omitempty"`
	// SyncDebug turns torch.cuda.set_sync_debug_mode("error") on inside the
	// capture (default true).
	SyncDebug *bool `toml:"sync_debug" json:"sync_debug,omitempty"`
	// EmptyCache calls torch.cuda.empty_cache() in the churn before each replay.
	EmptyCache bool       `toml:"empty_cache" json:"empty_cache,omitempty"`
	Tolerance  *Tolerance `toml:"tolerance" json:"tolerance,omitempty"`
	// Timeout per case, a Go duration ("90s"); --timeout overrides.
	Timeout string `toml:"timeout" json:"timeout,omitempty"`
}

// Arg is one argument of the target.
type Arg struct {
	Name string `toml:"name" json:"name"`
	// Role: static (default: a tensor whose contents are replaced before each
	// replay, as a server copies a new batch into its static inputs), fixed
	// (made once: weights, caches), output (a buffer the target writes; made
	// once, poisoned before each run, compared), mirror (a CPU copy of
	// MirrorOf, refreshed after it: seq_lens_cpu), const (a Python value).
	Role   string `toml:"role" json:"role,omitempty"`
	Shape  []any  `toml:"shape" json:"shape,omitempty"`
	Dtype  string `toml:"dtype" json:"dtype,omitempty"`
	Device string `toml:"device" json:"device,omitempty"` // cuda (default) or cpu
	// Init: randn, rand, randint, arange, zeros, ones, full; "randint 1..256"
	// and "rand -1..1" give the range inline (both ends inclusive for
	// randint). Floats default to randn; integer static and fixed
	// arguments need a range, since an index must be valid for the kernel.
	Init string `toml:"init" json:"init,omitempty"`
	// Low and High bound randint (High exclusive, as torch.randint) and rand.
	Low      *float64 `toml:"low" json:"low,omitempty"`
	High     *float64 `toml:"high" json:"high,omitempty"`
	Mean     *float64 `toml:"mean" json:"mean,omitempty"`
	Std      *float64 `toml:"std" json:"std,omitempty"`
	Start    *float64 `toml:"start" json:"start,omitempty"`
	Step     *float64 `toml:"step" json:"step,omitempty"`
	Value    any      `toml:"value" json:"value,omitempty"` // full's fill value; const's value
	MirrorOf string   `toml:"mirror_of" json:"mirror_of,omitempty"`
	Pin      bool     `toml:"pin" json:"pin,omitempty"`     // pinned host memory (device = "cpu", mirrors)
	Kwarg    bool     `toml:"kwarg" json:"kwarg,omitempty"` // pass as name=value
	// Pass false keeps an argument out of the call (one only prep or
	// construct uses).
	Pass *bool `toml:"pass" json:"pass,omitempty"`
}

// Prep names the replay-prep callable.
type Prep struct {
	Call string   `toml:"call" json:"call"`
	Args []string `toml:"args" json:"args,omitempty"`
}

// Construct says how the harness makes the instance of a Class.method target.
type Construct struct {
	Args   []string       `toml:"args" json:"args,omitempty"`
	Kwargs map[string]any `toml:"kwargs" json:"kwargs,omitempty"`
}

// Tolerance replaces exact comparison (for targets with nondeterministic
// kernels, e.g. atomics): |replay - eager| <= atol + rtol*|eager|.
type Tolerance struct {
	Atol float64 `toml:"atol" json:"atol"`
	Rtol float64 `toml:"rtol" json:"rtol"`
}

var topLevelKeys = map[string]bool{"replays": true, "batch_sizes": true, "warmup": true, "seed": true,
	"sync_debug": true, "empty_cache": true, "timeout": true}

// Roles of an argument.
const (
	RoleStatic = "static"
	RoleFixed  = "fixed"
	RoleOutput = "output"
	RoleMirror = "mirror"
	RoleConst  = "const"
)

var dtypes = map[string]bool{
	"float16": true, "half": true, "bfloat16": true, "float32": true, "float": true, "float64": true, "double": true,
	"float8_e4m3fn": true, "float8_e5m2": true, "float8_e4m3fnuz": true, "float8_e5m2fnuz": true, "float8_e8m0fnu": true,
	"int8": true, "int16": true, "short": true, "int32": true, "int": true, "int64": true, "long": true,
	"uint8": true, "uint16": true, "uint32": true, "uint64": true, "bool": true,
}

func isFloatDtype(d string) bool {
	return strings.HasPrefix(d, "float") || strings.HasPrefix(d, "bfloat") || d == "half" || d == "double"
}

// SpecError is a spec that cannot be used; its message names the file and
// the argument.
type SpecError struct {
	Path string
	Msg  string
}

func (e *SpecError) Error() string { return e.Path + ": " + e.Msg }

// LoadSpec reads a TOML (.toml) or JSON (.json) spec and validates it.
func LoadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &SpecError{path, fmt.Sprintf("cannot read the spec: %v", err)}
	}
	var s Spec
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		if err := dec.Decode(&s); err != nil {
			return nil, &SpecError{path, fmt.Sprintf("not a valid JSON spec: %v", err)}
		}
	case ".toml":
		md, err := toml.Decode(string(data), &s)
		if err != nil {
			return nil, &SpecError{path, fmt.Sprintf("not a valid TOML spec: %v", err)}
		}
		if und := md.Undecoded(); len(und) > 0 {
			keys := make([]string, len(und))
			for i, k := range und {
				keys[i] = k.String()
			}
			msg := fmt.Sprintf("unknown key %s (see capguard verify --help for the spec's keys)", strings.Join(keys, ", "))
			for _, k := range und {
				if len(k) == 2 && topLevelKeys[k[1]] {
					msg += fmt.Sprintf("; %s is a top-level key: in TOML it must come before the first [[arg]] or [table]", k[1])
					break
				}
			}
			return nil, &SpecError{path, msg}
		}
	default:
		return nil, &SpecError{path, "a spec is a .toml or a .json file"}
	}
	s.Path = path
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate checks a spec and fills in defaults; errors are *SpecError.
func (s *Spec) Validate() error {
	bad := func(format string, a ...any) error { return &SpecError{s.Path, fmt.Sprintf(format, a...)} }
	if len(s.Args) == 0 {
		return bad("no [[arg]]: name every argument of the target, in call order")
	}
	byName := map[string]*Arg{}
	for i, a := range s.Args {
		if a == nil {
			return bad("arg[%d] is empty", i)
		}
		where := fmt.Sprintf("arg[%d] %q", i, a.Name)
		if !identRE.MatchString(a.Name) {
			return bad("arg[%d]: name %q is not a Python name", i, a.Name)
		}
		if byName[a.Name] != nil {
			return bad("%s: the name is used twice", where)
		}
		byName[a.Name] = a
		if a.Role == "" {
			a.Role = RoleStatic
		}
		if err := a.validate(); err != nil {
			return bad("%s: %v", where, err)
		}
	}
	for i, a := range s.Args {
		if a.Role != RoleMirror {
			continue
		}
		src := byName[a.MirrorOf]
		where := fmt.Sprintf("arg[%d] %q", i, a.Name)
		switch {
		case a.MirrorOf == "":
			return bad("%s: a mirror needs mirror_of = \"<argument name>\"", where)
		case src == nil:
			return bad("%s: mirror_of %q names no argument", where, a.MirrorOf)
		case src.Role != RoleStatic && src.Role != RoleFixed:
			return bad("%s: mirror_of %q is a %s argument; mirror a static or fixed tensor", where, a.MirrorOf, src.Role)
		}
	}
	if s.Prep != nil {
		if s.Prep.Call == "" {
			return bad("[prep] needs call = \"function\", \"file.py:function\" or \"package.module:function\"")
		}
		if _, _, err := splitCall(s.Prep.Call); err != nil {
			return bad("[prep] call: %v", err)
		}
		for _, n := range s.Prep.Args {
			if byName[n] == nil {
				return bad("[prep] args: %q names no argument", n)
			}
		}
	}
	if s.Construct != nil {
		for _, n := range s.Construct.Args {
			if byName[n] == nil {
				return bad("[construct] args: %q names no argument", n)
			}
		}
		for k := range s.Construct.Kwargs {
			if !identRE.MatchString(k) {
				return bad("[construct] kwargs: %q is not a Python name", k)
			}
		}
	}
	for _, b := range s.BatchSizes {
		if b <= 0 {
			return bad("batch_sizes: %d is not a batch size", b)
		}
	}
	if s.Replays < 0 || s.Warmup < 0 {
		return bad("replays and warmup must not be negative")
	}
	if s.Tolerance != nil && (s.Tolerance.Atol < 0 || s.Tolerance.Rtol < 0 || math.IsNaN(s.Tolerance.Atol+s.Tolerance.Rtol)) {
		return bad("tolerance: atol and rtol must be >= 0")
	}
	if s.Timeout != "" {
		if d, err := time.ParseDuration(s.Timeout); err != nil || d <= 0 {
			return bad("timeout %q: want a duration such as \"120s\"", s.Timeout)
		}
	}
	return nil
}

var rangeRE = regexp.MustCompile(`^(randint|rand)\s+(-?[0-9.eE+-]+)\s*\.\.\s*(-?[0-9.eE+-]+)$`)

func (a *Arg) validate() error {
	switch a.Role {
	case RoleStatic, RoleFixed, RoleOutput:
	case RoleMirror:
		if a.Init != "" || len(a.Shape) > 0 {
			return fmt.Errorf("a mirror takes its shape and values from mirror_of; drop init and shape")
		}
		if a.Device != "" && a.Device != "cpu" {
			return fmt.Errorf("a mirror lives on the cpu")
		}
		if a.Dtype != "" && !dtypes[a.Dtype] {
			return fmt.Errorf("unknown dtype %q", a.Dtype)
		}
		return nil
	case RoleConst:
		if a.Value == nil {
			return fmt.Errorf("a const needs value = ...")
		}
		return nil
	default:
		return fmt.Errorf("role %q: want static, fixed, output, mirror or const", a.Role)
	}
	if len(a.Shape) == 0 {
		return fmt.Errorf("a %s tensor needs shape = [...] (use \"B\" for the batch dimension; [] is not allowed)", a.Role)
	}
	for _, d := range a.Shape {
		if _, err := dim(d, 1); err != nil {
			return err
		}
	}
	if a.Dtype == "" {
		return fmt.Errorf("dtype is missing (float32, bfloat16, int32, int64, ...)")
	}
	if !dtypes[a.Dtype] {
		return fmt.Errorf("unknown dtype %q", a.Dtype)
	}
	switch a.Device {
	case "":
		a.Device = "cuda"
	case "cuda", "cpu":
	default:
		return fmt.Errorf("device %q: want cuda or cpu", a.Device)
	}
	if a.Pin && a.Device != "cpu" {
		return fmt.Errorf("pin = true needs device = \"cpu\"")
	}
	if m := rangeRE.FindStringSubmatch(a.Init); m != nil {
		lo, err1 := strconv.ParseFloat(m[2], 64)
		hi, err2 := strconv.ParseFloat(m[3], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("init %q: bad range", a.Init)
		}
		a.Init = m[1]
		if m[1] == "randint" {
			if lo != math.Trunc(lo) || hi != math.Trunc(hi) {
				return fmt.Errorf("init %q: randint needs integer bounds", a.Init)
			}
			hi++ // inclusive in the spec, exclusive for torch.randint
		}
		a.Low, a.High = &lo, &hi
	}
	if a.Init == "" {
		switch {
		case a.Role == RoleOutput:
			a.Init = "zeros"
		case isFloatDtype(a.Dtype):
			a.Init = "randn"
		default:
			return fmt.Errorf("an integer %s tensor needs a range, e.g. init = \"randint 0..255\" (indices must be valid for the kernel)", a.Role)
		}
	}
	switch a.Init {
	case "randn", "arange", "zeros", "ones":
	case "rand":
		if a.Low != nil && a.High != nil && *a.Low >= *a.High {
			return fmt.Errorf("rand needs low < high")
		}
	case "randint":
		if a.Low == nil || a.High == nil {
			return fmt.Errorf("randint needs a range: init = \"randint LO..HI\" or low and high (high exclusive)")
		}
		if *a.Low >= *a.High {
			return fmt.Errorf("randint needs low < high")
		}
	case "full":
		if _, ok := number(a.Value); !ok {
			return fmt.Errorf("full needs a numeric value = ...")
		}
	default:
		return fmt.Errorf("init %q: want randn, rand, randint, arange, zeros, ones or full", a.Init)
	}
	return nil
}

// dim resolves one shape entry for batch size b: an integer, or a product of
// integers and "B".
func dim(d any, b int) (int, error) {
	if f, ok := number(d); ok {
		if f < 0 || f != math.Trunc(f) {
			return 0, fmt.Errorf("shape entry %v is not a size", d)
		}
		return int(f), nil
	}
	s, ok := d.(string)
	if !ok {
		return 0, fmt.Errorf("shape entry %v: want an integer or \"B\"", d)
	}
	n := 1
	for _, f := range strings.Split(s, "*") {
		f = strings.TrimSpace(f)
		if f == "B" {
			n *= b
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("shape entry %q: want an integer, \"B\", or a product such as \"B*4\"", s)
		}
		n *= v
	}
	return n, nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// splitCall splits a prep call into its module part (a file ending in .py, a
// dotted module, or empty for the target's own file) and function.
func splitCall(call string) (module, fn string, err error) {
	if i := strings.LastIndex(call, ":"); i >= 0 {
		module, fn = call[:i], call[i+1:]
		if module == "" {
			return "", "", fmt.Errorf("%q: empty module before ':'", call)
		}
	} else {
		fn = call
	}
	for _, p := range strings.Split(fn, ".") {
		if !identRE.MatchString(p) {
			return "", "", fmt.Errorf("%q: %q is not a Python name", call, fn)
		}
	}
	return module, fn, nil
}

// prepFile is the file a "file.py:fn" prep call names, relative to the
// spec's folder; ok is false for no prep, the target's own file or a module.
func (s *Spec) prepFile() (path string, ok bool) {
	if s.Prep == nil {
		return "", false
	}
	mod, _, _ := splitCall(s.Prep.Call)
	if !strings.HasSuffix(mod, ".py") && !strings.ContainsAny(mod, `/\`) {
		return "", false
	}
	if !filepath.IsAbs(mod) {
		mod = filepath.Join(filepath.Dir(s.Path), mod)
	}
	return mod, true
}
