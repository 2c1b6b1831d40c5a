// Package capmap reads, validates and queries capture maps: the JSON that
// `capguard trace` records from a real run (schema "capguard-capture-map",
// versions 1 and 2, documented in README.md, section "Tracing a real run").
//
// A map says which Python functions ran while a stream captured a CUDA
// graph (with the stack from the capture site), which functions wrote into
// storage a graph reads between its capture and its replays (replay-prep),
// every storage a captured op read (private pool or external, with its
// allocation stack and fate), and the runtime findings (a freed or rebound
// external input, a host sync or host read during capture).
//
// Names follow `capguard graph`: the dotted module path of a file relative
// to the working directory plus the qualified name with `<locals>` segments
// dropped ("pkg.runner.Runner.capture.inner"); module-level code is the
// module's own name. The map records absolute paths, co_qualname and first
// lines, and the working directory of the traced run; names are derived here,
// at merge time, so that a map recorded in another checkout (the GPU machine's)
// still applies wherever a function's name resolves.
//
// capmap does not import guard (guard imports capmap): contexts and edge
// kinds are plain strings ("captured", "replay-prep", "traced").
package capmap

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Schema and Version identify the capture map format this package reads.
// A map with a larger version is refused (a newer capguard wrote it); the
// version grows only when a field changes meaning, not when one is added.
//
// Version 2 added the lines executed under capture and in replay prep
// (Graph.Lines, Graph.PrepLines) and the range each input was read in
// (Input.ReadBytes); a version 1 map reads as one without line coverage
// (Map.HasLines is false).
const (
	Schema  = "capguard-capture-map"
	Version = 2
)

// Contexts and the edge kind a merge gives trace-derived records (the values
// of guard.Captured, guard.ReplayPrep and guard.Traced).
const (
	Captured   = "captured"
	ReplayPrep = "replay-prep"
	Traced     = "traced"
)

// Frame is one Python frame. Frames the tracer saw have Qual (co_qualname)
// and FirstLine; frames from the CUDA caching allocator's history
// (allocation and free stacks) have only Name (co_name) and Line.
type Frame struct {
	Path      string `json:"path"`
	Qual      string `json:"qual,omitempty"`
	Name      string `json:"name,omitempty"`
	Line      int    `json:"line,omitempty"`
	FirstLine int    `json:"first_line,omitempty"`
}

// Function is a function the tracer saw run: under capture (Graph.Functions),
// or between a capture's end and a replay (Graph.Between).
type Function struct {
	Path      string  `json:"path"`
	Qual      string  `json:"qual"`
	FirstLine int     `json:"first_line"`
	Graph     int     `json:"graph"`
	Stack     []Frame `json:"stack"`
	// Compiled: entered inside a torch.compile'd call, where Dynamo runs
	// transformed code (the function's lines are not observed, and the
	// functions it inlined are never entered).
	Compiled bool `json:"compiled,omitempty"`
}

// Write is an in-place write into storage a graph reads.
type Write struct {
	Op    string `json:"op"`
	Line  int    `json:"line"`
	Addr  string `json:"addr"`
	Input string `json:"input,omitempty"`
}

// PrepFunction is a replay-prep function: it wrote into storage the graph
// reads between its capture and a replay.
type PrepFunction struct {
	Function
	Reason string  `json:"reason"`
	Writes []Write `json:"writes"`
}

// Rebinding says what an external input's holder was bound to at the replay
// that found it rebound.
type Rebinding struct {
	Holder string  `json:"holder"`
	Addr   string  `json:"addr,omitempty"`
	Alloc  []Frame `json:"alloc"`
}

// Input is one storage a captured op or kernel launch read.
type Input struct {
	Addr        string     `json:"addr"`
	Nbytes      int64      `json:"nbytes"`
	Dtype       string     `json:"dtype"`
	Shape       []int64    `json:"shape"`
	Device      string     `json:"device"`
	FirstOp     string     `json:"first_op"`
	Reads       int        `json:"reads"`
	Reader      *Frame     `json:"reader,omitempty"`
	ReaderStack []Frame    `json:"reader_stack"`
	Pool        string     `json:"pool"`           // "private" or "external"
	Fate        string     `json:"fate,omitempty"` // "private", "alive", "freed", "rebound"
	FateReplay  *int       `json:"fate_replay,omitempty"`
	Parameter   bool       `json:"parameter,omitempty"`
	Holders     []string   `json:"holders"`
	SegmentPool []int64    `json:"segment_pool,omitempty"`
	Alloc       []Frame    `json:"alloc"`
	Dropped     []Frame    `json:"dropped"`
	ReboundTo   *Rebinding `json:"rebound_to,omitempty"`
	// ReadBytes is the byte range of its storage the graph's ops and
	// launches read, [lo, hi) (version 2; view ops left out).
	ReadBytes []int64 `json:"read_bytes,omitempty"`
}

// ScalarArg is a Python number passed to a kernel launched under capture:
// the graph keeps the value it had at capture.
type ScalarArg struct {
	Name  string      `json:"name"`
	Value json.Number `json:"value"`
}

// Launch is a Triton kernel launched under capture from one line, with the
// scalar (non-constexpr int and float) arguments of its first launch there.
type Launch struct {
	Kernel string      `json:"kernel"`
	Site   *Frame      `json:"site"`
	Args   []ScalarArg `json:"args"`
	Count  int         `json:"count"`
}

// HostRead is a value read on the host from tensor data (.item(), int(),
// float(), bool(), .tolist(), .numpy()) on the capturing thread: while the
// stream captured (When "capture") or, for a graph after the first, between
// the previous capture's end and this capture's start ("before").
type HostRead struct {
	Op     string        `json:"op"`
	Device string        `json:"device"`
	When   string        `json:"when"`
	Path   string        `json:"path"`
	Line   int           `json:"line"`
	Qual   string        `json:"qual"`
	Values []json.Number `json:"values"`
}

// Graph is one captured graph.
type Graph struct {
	ID             int            `json:"id"`
	Backend        string         `json:"backend"`
	API            string         `json:"api"`
	Site           *Frame         `json:"site"`
	NativeSite     bool           `json:"native_site,omitempty"`
	Thread         string         `json:"thread,omitempty"`
	Status         string         `json:"status"`
	Error          string         `json:"error,omitempty"`
	Replays        int            `json:"replays"`
	Ops            int            `json:"ops"`
	Launches       int            `json:"launches"`
	Pool           []int64        `json:"pool,omitempty"`
	PoolTest       string         `json:"pool_test,omitempty"`
	CaptureMS      float64        `json:"capture_ms"`
	AnalysisMS     float64        `json:"analysis_ms"`
	ExternalInputs int            `json:"external_inputs"`
	PrivateInputs  int            `json:"private_inputs"`
	Functions      []Function     `json:"functions"`
	Inputs         []Input        `json:"inputs"`
	ReplayPrep     []PrepFunction `json:"replay_prep"`
	Between        []Function     `json:"between"`
	// ReplaysChecked counts the replays whose inputs the tracer checked
	// (the first Tool.PrepReplays; later replays run untraced).
	ReplaysChecked int        `json:"replays_checked"`
	LaunchArgs     []Launch   `json:"launch_args"`
	HostReads      []HostRead `json:"host_reads"`
	// Lines are the lines of project code executed on the capturing thread
	// while the stream captured, by absolute path, as ranges [first, last]
	// (version 2); PrepLines the same for the replay-prep windows.
	Lines     map[string][][2]int `json:"lines"`
	PrepLines map[string][][2]int `json:"prep_lines"`
	// Process is the pid of the process that captured it (set by Merge).
	Process int `json:"process,omitempty"`
}

// Finding is a runtime finding.
type Finding struct {
	ID            int     `json:"id"`
	Rule          string  `json:"rule"`
	Kind          string  `json:"kind"`
	Graph         *int    `json:"graph"`
	Path          string  `json:"path,omitempty"`
	Line          int     `json:"line,omitempty"`
	Qual          string  `json:"qual,omitempty"`
	FirstLine     int     `json:"first_line,omitempty"`
	Op            string  `json:"op,omitempty"`
	Message       string  `json:"message"`
	Stack         []Frame `json:"stack"`
	Input         string  `json:"input,omitempty"`
	Replay        *int    `json:"replay,omitempty"`
	Holder        string  `json:"holder,omitempty"`
	Alloc         []Frame `json:"alloc"`
	Dropped       []Frame `json:"dropped"`
	Reader        *Frame  `json:"reader,omitempty"`
	ReaderStack   []Frame `json:"reader_stack"`
	ReboundAlloc  []Frame `json:"rebound_alloc"`
	OccupantAlloc []Frame `json:"occupant_alloc"`
	// Values are what a host read (CG102, CG101) returned, when it returned.
	Values []json.Number `json:"values"`
	// Kernel, Argument and Launch: the kernel argument under capture whose
	// value equals the host read's, and the launch's line.
	Kernel   string `json:"kernel,omitempty"`
	Argument string `json:"argument,omitempty"`
	Launch   *Frame `json:"launch,omitempty"`
	Count    int    `json:"count"`
	// Sizes (CG203 stale-tail, in elements): written [lo, hi) since the
	// previous replay, read [lo, hi) by the graph, stale [lo, hi), and how
	// far the earlier write went.
	Sizes *StaleSizes `json:"sizes,omitempty"`
	// BoundBy (CG201 stored-under-capture): the graphs whose capture bound
	// the holder.
	BoundBy []int `json:"bound_by"`
}

// StaleSizes are the element ranges of a stale-tail finding.
type StaleSizes struct {
	Written []int64 `json:"written"`
	Read    []int64 `json:"read"`
	Stale   []int64 `json:"stale"`
	Earlier int64   `json:"earlier"`
}

// Tool describes the tracer that wrote the map.
type Tool struct {
	Tracer  string  `json:"tracer"`
	Python  string  `json:"python"`
	Torch   *string `json:"torch"`
	Triton  *string `json:"triton"`
	Monitor *string `json:"monitor"`
	// Lines says how executed lines were recorded: "sys.monitoring",
	// "settrace", "unavailable: ..." or null (version 1, or none captured).
	Lines       *string `json:"lines"`
	AllocStacks bool    `json:"alloc_stacks"`
	// CaptureOps is false when the ops under capture were not watched
	// (capguard trace --capture-ops=false; nil in maps before it existed).
	CaptureOps  *bool `json:"capture_ops,omitempty"`
	PrepReplays int   `json:"prep_replays"`
	// CompiledCalls says how the tracer kept out of torch.compile'd calls
	// ("modes off in compiled calls", "unavailable: ...", or nil when the
	// program never imported Dynamo); CompiledCallsHidden counts the calls
	// it took its modes off for.
	CompiledCalls       *string `json:"compiled_calls,omitempty"`
	CompiledCallsHidden int     `json:"compiled_calls_hidden,omitempty"`
}

// Map is a capture map.
type Map struct {
	Schema           string    `json:"schema"`
	Version          int       `json:"version"`
	Tool             Tool      `json:"tool"`
	Command          []string  `json:"command"`
	Cwd              string    `json:"cwd"`
	Pid              int       `json:"pid"`
	Started          string    `json:"started"`
	Hooked           []string  `json:"hooked"`
	Graphs           []Graph   `json:"graphs"`
	Findings         []Finding `json:"findings"`
	TracerErrors     []string  `json:"tracer_errors"`
	TracerErrorCount int       `json:"tracer_error_count"`
	// Processes are the pids whose maps Merge folded in (the first is Pid).
	Processes []int `json:"processes"`

	// File is the path it was loaded from (not serialised).
	File string `json:"-"`
}

// Error is a capture map that cannot be used, with the file it came from.
type Error struct {
	File string
	Msg  string
	Err  error // ErrNewerVersion, or nil
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.File == "" {
		return "capture map: " + e.Msg
	}
	return e.File + ": capture map: " + e.Msg
}

// ErrNewerVersion is wrapped by the error for a map of a later version.
var ErrNewerVersion = errors.New("written by a newer capguard")

// Load reads and validates one capture map file.
func Load(file string) (*Map, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	m, err := Parse(data)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.File = file
		}
		return nil, err
	}
	m.File = file
	return m, nil
}

// LoadAll loads the map at file and the maps that the processes the traced
// program started wrote beside it (FILE.PID.json, without FILE's ".json"),
// merged into one (Merge). A missing main map with child maps present is
// fine; no map at all is an error.
func LoadAll(file string) (*Map, error) {
	var maps []*Map
	main, err := Load(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if main != nil {
		maps = append(maps, main)
	}
	children, err := ChildFiles(file)
	if err != nil {
		return nil, err
	}
	for _, c := range children {
		m, err := Load(c)
		if err != nil {
			return nil, err
		}
		maps = append(maps, m)
	}
	if len(maps) == 0 {
		return nil, &Error{File: file, Msg: "no map was written (did the program import torch? a Python started with -I, -E or -S skips the tracer's sitecustomize)"}
	}
	out := Merge(maps...)
	out.File = file
	return out, nil
}

// ChildFiles lists the maps of child processes beside file, in pid order.
func ChildFiles(file string) ([]string, error) {
	base := strings.TrimSuffix(file, ".json")
	matches, err := filepath.Glob(globEscape(base) + ".*.json")
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`\.([0-9]+)\.json$`)
	var out []string
	for _, m := range matches {
		if re.MatchString(m) && re.ReplaceAllString(m, "") == base {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return pidOf(out[i]) < pidOf(out[j]) })
	return out, nil
}

func pidOf(f string) int {
	var n int
	s := strings.TrimSuffix(f, ".json")
	fmt.Sscanf(s[strings.LastIndexByte(s, '.')+1:], "%d", &n)
	return n
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// Parse decodes and validates a capture map.
func Parse(data []byte) (*Map, error) {
	var head struct {
		Schema  string `json:"schema"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, &Error{Msg: "not JSON: " + err.Error()}
	}
	if head.Schema != Schema {
		return nil, &Error{Msg: fmt.Sprintf("schema %q, want %q", head.Schema, Schema)}
	}
	if head.Version > Version {
		return nil, &Error{Msg: fmt.Sprintf("version %d %v; this capguard reads version %d: upgrade capguard", head.Version, ErrNewerVersion, Version), Err: ErrNewerVersion}
	}
	if head.Version < 1 {
		return nil, &Error{Msg: fmt.Sprintf("version %d is not a capture map version", head.Version)}
	}
	var m Map
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	m.Normalize()
	return &m, nil
}

var ruleRE = regexp.MustCompile(`^CG[0-9]{3}$`)

// Validate checks what the merge relies on: graph ids are 0..n-1 in order,
// every function and finding names its graph, paths are absolute, lines are
// not negative, rules are CGnnn.
func (m *Map) Validate() error {
	bad := func(f string, a ...any) error { return &Error{Msg: fmt.Sprintf(f, a...)} }
	for i, g := range m.Graphs {
		if g.ID != i {
			return bad("graph %d has id %d (ids are 0..n-1 in order)", i, g.ID)
		}
		for _, f := range g.Functions {
			if err := checkFunction(f.Path, f.Qual, f.FirstLine); err != nil {
				return bad("graph %d function: %v", i, err)
			}
			if f.Graph != g.ID {
				return bad("graph %d lists function %s of graph %d", i, f.Qual, f.Graph)
			}
			if err := checkFrames(f.Stack); err != nil {
				return bad("graph %d function %s: %v", i, f.Qual, err)
			}
		}
		for _, f := range g.ReplayPrep {
			if err := checkFunction(f.Path, f.Qual, f.FirstLine); err != nil {
				return bad("graph %d replay-prep: %v", i, err)
			}
		}
		for path, rs := range g.Lines {
			if !isPseudo(path) && !filepath.IsAbs(path) && !strings.HasPrefix(path, "/") {
				return bad("graph %d lines: %s is not absolute", i, path)
			}
			for _, r := range rs {
				if r[0] < 1 || r[1] < r[0] {
					return bad("graph %d lines of %s: bad range %v", i, path, r)
				}
			}
		}
		for _, in := range g.Inputs {
			if in.Pool != "private" && in.Pool != "external" && in.Pool != "" {
				return bad("graph %d input %s: pool %q (want private or external)", i, in.Addr, in.Pool)
			}
		}
	}
	for _, f := range m.Findings {
		if !ruleRE.MatchString(f.Rule) {
			return bad("finding %d: rule %q is not CGnnn", f.ID, f.Rule)
		}
		if f.Graph != nil && (*f.Graph < 0 || *f.Graph >= len(m.Graphs)) {
			return bad("finding %d: graph %d does not exist", f.ID, *f.Graph)
		}
		if f.Line < 0 {
			return bad("finding %d: line %d", f.ID, f.Line)
		}
		if f.Message == "" {
			return bad("finding %d has no message", f.ID)
		}
	}
	return nil
}

func checkFunction(path, qual string, line int) error {
	if path == "" || qual == "" {
		return fmt.Errorf("path %q qual %q: both are required", path, qual)
	}
	if !isPseudo(path) && !filepath.IsAbs(path) && !strings.HasPrefix(path, "/") {
		return fmt.Errorf("%s: path is not absolute", path)
	}
	if line < 0 {
		return fmt.Errorf("%s:%s: first line %d", path, qual, line)
	}
	return nil
}

func checkFrames(fs []Frame) error {
	for _, f := range fs {
		if f.Path == "" || f.Line < 0 {
			return fmt.Errorf("bad frame %+v", f)
		}
	}
	return nil
}

func isPseudo(path string) bool { return strings.HasPrefix(path, "<") }

// Merge folds the maps of several processes into one: graphs renumbered in
// order, findings' graph ids and ids remapped. The first map's header is
// kept; Processes lists every map's pid.
func Merge(maps ...*Map) *Map {
	if len(maps) == 0 {
		return nil
	}
	out := *maps[0]
	out.Graphs, out.Findings, out.Processes = nil, nil, nil
	out.TracerErrors, out.TracerErrorCount = nil, 0
	for _, m := range maps {
		base := len(out.Graphs)
		out.Processes = append(out.Processes, m.Pid)
		for _, g := range m.Graphs {
			g.ID += base
			g.Process = m.Pid
			g.Functions = remapFunctions(g.Functions, base)
			g.Between = remapFunctions(g.Between, base)
			prep := make([]PrepFunction, len(g.ReplayPrep))
			for i, p := range g.ReplayPrep {
				p.Graph += base
				prep[i] = p
			}
			g.ReplayPrep = prep
			out.Graphs = append(out.Graphs, g)
		}
		for _, f := range m.Findings {
			if f.Graph != nil {
				v := *f.Graph + base
				f.Graph = &v
			}
			f.ID = len(out.Findings)
			out.Findings = append(out.Findings, f)
		}
		out.TracerErrors = append(out.TracerErrors, m.TracerErrors...)
		out.TracerErrorCount += m.TracerErrorCount
	}
	out.Normalize()
	return &out
}

func remapFunctions(fs []Function, base int) []Function {
	out := make([]Function, len(fs))
	for i, f := range fs {
		f.Graph += base
		out[i] = f
	}
	return out
}

// Write writes the map as indented JSON (the form `capguard trace` leaves).
func (m *Map) Write(file string) error {
	m.Normalize()
	data, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
