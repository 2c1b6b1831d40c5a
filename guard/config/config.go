package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/cudagraph-capguard/capguard/guard/contexts"
	"github.com/cudagraph-capguard/capguard/guard/device"
)

// Config is capguard's configuration: `[tool.capguard]` in pyproject.toml
// or the top level of capguard.toml, found by walking up from the checked
// paths; command-line flags override it.
//
//	[tool.capguard]
//	select = ["ALL"]                 # codes or prefixes
//	ignore = ["CG302"]
//	exclude = ["tests/**", "build"]  # globs, relative to the config's folder
//	per-file-ignores = { "bench/*.py" = ["CG101"] }
//	entry-points = ["pkg.runner:Runner.decode_step"]   # captured roots
//	replay-prep = ["pkg.attn:Backend.prepare_replay"]  # run between replays
//	presets = ["sglang"]             # framework entry points, prep and kernels
//	kernel-ops = ["my_ext.*"]        # extension ops that launch kernels
//	helper-module = "pkg.utils.capguard_buffers"  # import persistent_buffer from here
//	max-file-size = 10                # MiB; larger files are not checked (0: no limit)
//	cache-dir = ".capguard_cache"     # where check caches results (relative to this file)
//	capture-map = "capture-map.json"  # recorded by capguard trace; merged into the contexts
//	strict-temporaries = true         # CG301 on every per-call temporary a captured kernel reads
type Config struct {
	// Path is the file the configuration came from ("" for defaults).
	Path           string              `toml:"-"`
	Select         []string            `toml:"select"`
	Ignore         []string            `toml:"ignore"`
	Exclude        []string            `toml:"exclude"`
	PerFileIgnores map[string][]string `toml:"per-file-ignores"`
	EntryPoints    []string            `toml:"entry-points"`
	ReplayPrep     []string            `toml:"replay-prep"`
	// PostCapture are functions that run after the graphs exist (weight
	// reload and update hooks): CG201 applies there.
	PostCapture []string `toml:"post-capture"`
	// Conventions replace the built-in graph-protocol conventions
	// (contexts.DefaultConventions) when set.
	Conventions []ConventionConfig `toml:"graph-conventions"`
	// Predicates are dotted-name globs of conditions that hold during
	// capture: code under their negation is not captured.
	Predicates []string `toml:"capture-predicates"`
	Presets    []string `toml:"presets"`
	// Imported are the presets turned on only because some file imports
	// the framework (not configured, not the project's own package): the
	// project uses the framework, it need not extend it, so a pattern that
	// matches classes by name (`*:*Attention.forward`) does not hold for a
	// class whose hierarchy provably never reaches the framework
	// (contexts.Config.Namesakes). Set by preset detection, not read from
	// a file.
	Imported     map[string]bool `toml:"-"`
	KernelOps    []string        `toml:"kernel-ops"`
	HelperModule string          `toml:"helper-module"`
	// CaptureMap is a capture map recorded by `capguard trace`, relative
	// to the config's folder (the command line's --capture-map overrides it).
	CaptureMap string `toml:"capture-map"`
	// MaxFileSize is in MiB; nil means DefaultMaxFileSize, 0 no limit.
	MaxFileSize *int `toml:"max-file-size"`
	// StrictTemporaries makes CG301 report every per-call temporary that
	// feeds a kernel in captured or launcher code, also those made and
	// consumed inside one captured call (graph-owned: measured clean).
	StrictTemporaries bool `toml:"strict-temporaries"`
	// Device is the device type the project's graphs are captured on
	// ("cuda" unless a preset says otherwise): code on a branch for another
	// device type (`if device_type == 'npu':`) is not captured.
	Device string `toml:"device"`
	// CacheDir is where `capguard check` caches results, relative to the
	// config's folder; "" means .capguard_cache there.
	CacheDir string `toml:"cache-dir"`

	// ExtendExclude and ExtendSelect add to exclude and select, as ruff's
	// extend-exclude and extend-select do (LoadConfig folds ExtendExclude
	// into Exclude; a run folds ExtendSelect into its selection, guard's
	// prepare, and the command line into its flags' too).
	ExtendExclude []string `toml:"extend-exclude"`
	ExtendSelect  []string `toml:"extend-select"`
}

// DefaultMaxFileSize (MiB) bounds the files capguard reads. A checked file
// costs about 80 bytes of memory per byte of source at its peak (the
// syntax tree), so a 10 MiB file takes about 800 MiB; the largest of the
// 3.6M lines of Python installed on the development machine is 6 MB.
const DefaultMaxFileSize = 10

// MaxFileBytes is the file size limit in bytes, 0 for none.
func (c *Config) MaxFileBytes() int64 {
	if c == nil || c.MaxFileSize == nil {
		return DefaultMaxFileSize << 20
	}
	return int64(*c.MaxFileSize) << 20
}

// ConventionConfig is one graph-protocol convention in the config:
//
//	[[tool.capguard.graph-conventions]]
//	name = "my-engine"
//	protocol = ["*cuda_graph*"]     # a class with a method matching these...
//	captured = ["forward"]          # ...has these methods captured
//	replay-prep = ["*replay*"]      # ...and these run between replays
type ConventionConfig struct {
	Name       string   `toml:"name"`
	Protocol   []string `toml:"protocol"`
	Captured   []string `toml:"captured"`
	ReplayPrep []string `toml:"replay-prep"`
}

type pyproject struct {
	Tool struct {
		Capguard *Config `toml:"capguard"`
	} `toml:"tool"`
}

// LoadConfig reads a configuration file (pyproject.toml or capguard.toml).
// A pyproject.toml without [tool.capguard] gives (nil, nil).
func LoadConfig(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if d := tomlDepth(data); d > maxTOMLDepth {
		// The TOML decoder's cost grows as the square of the nesting (8,000
		// nested inline tables: 87 s and 3 GB), and no configuration nests
		// past a few levels.
		return nil, fmt.Errorf("%s: arrays or inline tables nested %d deep, past capguard's limit of %d", file, d, maxTOMLDepth)
	}
	var cfg *Config
	var md toml.MetaData
	if filepath.Base(file) == "pyproject.toml" {
		var pp pyproject
		md, err = toml.Decode(string(data), &pp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if pp.Tool.Capguard == nil {
			return nil, nil
		}
		cfg = pp.Tool.Capguard
	} else {
		cfg = &Config{}
		md, err = toml.Decode(string(data), cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	var unknown []string
	for _, k := range md.Undecoded() {
		s := k.String()
		if filepath.Base(file) != "pyproject.toml" || strings.HasPrefix(s, "tool.capguard.") {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) > 8 {
		unknown = append(unknown[:8], fmt.Sprintf("and %d more", len(unknown)-8))
	}
	if len(unknown) > 0 {
		known := []string{"select", "extend-select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "entry-points", "replay-prep",
			"post-capture", "graph-conventions", "capture-predicates", "presets", "kernel-ops", "helper-module", "max-file-size",
			"capture-map", "strict-temporaries", "cache-dir", "device"}
		hint := ""
		last := unknown[0]
		if i := strings.LastIndexByte(last, '.'); i >= 0 {
			last = last[i+1:]
		}
		if m := closestName(last, known); m != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", m)
		}
		return nil, fmt.Errorf("%s: unknown setting %s%s (known: %s)", file, strings.Join(unknown, ", "), hint, strings.Join(known, ", "))
	}
	cfg.Exclude = append(cfg.Exclude, cfg.ExtendExclude...)
	cfg.Path = file
	return cfg, cfg.Validate()
}

// maxTOMLDepth bounds the nesting of a config file's arrays and inline
// tables.
const maxTOMLDepth = 64

// tomlDepth is the deepest nesting of brackets and braces in TOML text,
// outside strings and comments (a table header's brackets count one or
// two). It reads the text once.
func tomlDepth(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case '"', '\'':
			triple := i+2 < len(data) && data[i+1] == c && data[i+2] == c
			if triple {
				i += 3
				for ; i < len(data); i++ {
					if c == '"' && data[i] == '\\' {
						i++
						continue
					}
					if data[i] == c && i+2 < len(data) && data[i+1] == c && data[i+2] == c {
						i += 2
						for i+1 < len(data) && data[i+1] == c { // up to two quotes end the content
							i++
						}
						break
					}
				}
				continue
			}
			for i++; i < len(data) && data[i] != c && data[i] != '\n'; i++ {
				if c == '"' && data[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return deepest
}

// Validate checks a configuration (LoadConfig does; a caller that adds to
// one, as the command line's --preset and --entry-point do, calls it again).
// Its errors begin with the file's path when there is one.
func (c *Config) Validate() error {
	if err := c.check(); err != nil {
		if c.Path != "" {
			return fmt.Errorf("%s: %w", c.Path, err)
		}
		return err
	}
	return nil
}

func (c *Config) check() error {
	if c.MaxFileSize != nil && *c.MaxFileSize < 0 {
		return fmt.Errorf("max-file-size is %d; it takes MiB, 0 for no limit", *c.MaxFileSize)
	}
	if c.Device != "" && !device.Known[strings.ToLower(c.Device)] {
		known := make([]string, 0, len(device.Known))
		for n := range device.Known {
			known = append(known, n)
		}
		sort.Strings(known)
		return fmt.Errorf("unknown device %q (known: %s)", c.Device, strings.Join(known, ", "))
	}
	for _, p := range c.Presets {
		if _, ok := Presets[p]; !ok && p != "none" {
			names := make([]string, 0, len(Presets))
			for n := range Presets {
				names = append(names, n)
			}
			sort.Strings(names)
			return fmt.Errorf("unknown preset %q (known: %s; \"none\" turns detection off)", p, strings.Join(names, ", "))
		}
	}
	for _, e := range append(append(append([]string{}, c.EntryPoints...), c.ReplayPrep...), c.PostCapture...) {
		if !strings.Contains(e, ":") {
			return fmt.Errorf("entry point %q must be \"module:Qual.name\" (e.g. \"pkg.runner:Runner.decode\")", e)
		}
		if _, err := path.Match(strings.ReplaceAll(e, ":", "/"), ""); err != nil {
			return fmt.Errorf("entry point %q is not a valid pattern (%v)", e, err)
		}
	}
	globs := append(append([]string{}, c.Exclude...), c.KernelOps...)
	for p := range c.PerFileIgnores {
		globs = append(globs, p)
	}
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("%q is not a valid glob (%v)", g, err)
		}
	}
	codes := append(append(append([]string{}, c.Select...), c.ExtendSelect...), c.Ignore...)
	for _, v := range c.PerFileIgnores {
		codes = append(codes, v...)
	}
	if bad := UnknownCodes(codes); len(bad) > 0 {
		return fmt.Errorf("unknown rule code %s (see capguard rule --all)", strings.Join(bad, ", "))
	}
	return nil
}

// UnknownCodes returns the codes that name no rule and are no prefix of
// one. The configuration sits below the rules, so the pipeline (package
// guard) sets it to its rule list's check.
var UnknownCodes = func(codes []string) []string { return nil }

// FindConfig walks up from start (a file or folder) to the first folder
// holding capguard.toml, or a pyproject.toml with [tool.capguard].
func FindConfig(start string) (*Config, error) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		abs = filepath.Dir(abs)
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		for _, name := range []string{"capguard.toml", "pyproject.toml"} {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				cfg, err := LoadConfig(p)
				if err != nil {
					return nil, err
				}
				if cfg != nil {
					return cfg, nil
				}
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		if dir == filepath.Dir(dir) {
			return &Config{}, nil
		}
	}
}

// Dir is the folder the config's relative globs are anchored at.
func (c *Config) Dir() string {
	if c == nil || c.Path == "" {
		return "."
	}
	return filepath.Dir(c.Path)
}

// relTo returns file relative to the config's folder, slash-separated.
func (c *Config) relTo(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return filepath.ToSlash(file)
	}
	base, _ := filepath.Abs(c.Dir())
	rel, err := filepath.Rel(base, abs)
	if err != nil {
		return filepath.ToSlash(file)
	}
	return filepath.ToSlash(rel)
}

// globMatch matches a slash path against a glob where `**` spans folders
// and a pattern without a slash matches any path element.
func globMatch(pattern, rel string) bool {
	pattern = strings.TrimSuffix(filepath.ToSlash(pattern), "/")
	if !strings.Contains(pattern, "/") {
		for _, el := range strings.Split(rel, "/") {
			if ok, _ := path.Match(pattern, el); ok {
				return true
			}
		}
		return false
	}
	return matchSegments(strings.Split(pattern, "/"), strings.Split(rel, "/"))
}

func matchSegments(pat, el []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" { // a/**/**/b is a/**/b, and not exponential
				pat = pat[1:]
			}
			for i := 0; i <= len(el); i++ {
				if matchSegments(pat[1:], el[i:]) {
					return true
				}
			}
			return false
		}
		if len(el) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], el[0]); !ok {
			return false
		}
		pat, el = pat[1:], el[1:]
	}
	// A folder pattern matches everything under it.
	return true
}

// Excluded reports whether a path is excluded by the config.
func (c *Config) Excluded(file string) bool {
	if c == nil || len(c.Exclude) == 0 {
		return false
	}
	rel := c.relTo(file)
	for _, p := range c.Exclude {
		if globMatch(p, rel) {
			return true
		}
	}
	return false
}

// FileIgnores returns the codes per-file-ignores disables for file.
func (c *Config) FileIgnores(file string) []string {
	if c == nil || len(c.PerFileIgnores) == 0 {
		return nil
	}
	rel := c.relTo(file)
	var out []string
	for p, codes := range c.PerFileIgnores {
		if globMatch(p, rel) {
			out = append(out, codes...)
		}
	}
	return out
}

// ModuleBases are the outside base classes that the turned-on presets
// name as torch modules (Preset.Modules).
func (c *Config) ModuleBases() map[string]bool {
	var out map[string]bool
	for _, p := range c.Presets {
		for _, m := range Presets[p].Modules {
			if out == nil {
				out = map[string]bool{}
			}
			out[m] = true
		}
	}
	return out
}

// ContextsConfig is what the contexts layer needs of the config: entry
// patterns of the config and the presets, conventions, kernel ops.
func (c *Config) ContextsConfig(cwd string) contexts.Config {
	out := contexts.Config{Captured: append([]string{}, c.EntryPoints...), ReplayPrep: append([]string{}, c.ReplayPrep...),
		PostCapture: append([]string{}, c.PostCapture...), KernelOps: c.KernelOpGlobs(), Predicates: append([]string{}, c.Predicates...),
		CWD: cwd, Quiet: map[string]bool{}, Device: c.DeviceType()}
	own := map[string]bool{} // post-capture patterns the config names itself: proved
	for _, x := range c.PostCapture {
		own[x] = true
	}
	for _, p := range c.Presets {
		pr := Presets[p]
		out.PostCaptureRPC = append(out.PostCaptureRPC, pr.PostCaptureRPC...)
		for _, x := range pr.OnReload {
			if !own[x] {
				if out.OnReload == nil {
					out.OnReload = map[string]bool{}
				}
				out.OnReload[x] = true
			}
		}
		for _, set := range []struct {
			dst *[]string
			src []string
		}{{&out.Captured, pr.Captured}, {&out.ReplayPrep, pr.ReplayPrep}, {&out.PostCapture, pr.PostCapture}, {&out.Predicates, pr.Predicates}} {
			for _, x := range set.src {
				*set.dst = append(*set.dst, x)
				out.Quiet[x] = true
			}
		}
	}
	// A pattern holds only for the framework's classes where every preset
	// that names it was turned on by an import alone (and the config does
	// not name it itself).
	kept := map[string]bool{} // named by the config or a preset not only imported
	for _, x := range slices.Concat(c.EntryPoints, c.ReplayPrep, c.PostCapture) {
		kept[x] = true
	}
	for _, p := range c.Presets {
		if !c.Imported[p] {
			pr := Presets[p]
			for _, x := range slices.Concat(pr.Captured, pr.ReplayPrep, pr.PostCapture) {
				kept[x] = true
			}
		}
	}
	for _, p := range c.Presets {
		if pr := Presets[p]; c.Imported[p] {
			for _, x := range slices.Concat(pr.Captured, pr.ReplayPrep, pr.PostCapture) {
				if !kept[x] {
					if out.Namesakes == nil {
						out.Namesakes = map[string][]string{}
					}
					out.Namesakes[x] = append(out.Namesakes[x], pr.Detect...)
				}
			}
		}
	}
	for _, cc := range c.Conventions {
		out.Conventions = append(out.Conventions, contexts.Convention{Name: cc.Name, Protocol: cc.Protocol, Captured: cc.Captured, ReplayPrep: cc.ReplayPrep})
	}
	return out
}

// device is the device type graphs are captured on: the config's, else a
// preset's, else cuda.
func (c *Config) DeviceType() string {
	if c.Device != "" {
		return strings.ToLower(c.Device)
	}
	for _, p := range c.Presets {
		if d := Presets[p].Device; d != "" {
			return d
		}
	}
	return device.Default
}

func (c *Config) KernelOpGlobs() []string {
	out := append([]string{"torch.ops.*"}, c.KernelOps...)
	for _, p := range c.Presets {
		out = append(out, Presets[p].KernelOps...)
	}
	return out
}

// closestName is the name of known nearest to s (edit distance at most a
// third of its length, at least 1; underscores read as dashes), or "".
func closestName(s string, known []string) string {
	s = strings.ReplaceAll(strings.ToLower(s), "_", "-")
	best, bestD := "", max(1, len(s)/3)+1
	for _, k := range known {
		if d := editDistance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
