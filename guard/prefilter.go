package guard

import (
	"bytes"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
)

// The prefilter decides which files `capguard check` parses. A file's
// findings depend only on code connected to a capture root, a replay, a
// kernel launch or a claim of capture safety: a call from one module into
// another needs an import between them (directly or through modules that
// import both). So the files are grouped by the undirected import graph
// (found lexically, without parsing), and a group is parsed and analysed
// only when one of its files holds a token that can start one of those
// roots. Walking a folder and naming its files give the same groups, so
// the same output. What is not parsed is still checked for syntax errors
// (unparsedSyntax).

// rootTokens can start a root: capture APIs, replays, kernels, extension
// ops, claims of capture safety, graph-protocol names, suppressions.
var rootTokens = [][]byte{
	[]byte("torch.cuda"), []byte("CUDAGraph"), []byte("capture_begin"), []byte("make_graphed_callables"),
	[]byte(".replay("), []byte("triton"), []byte("torch.ops"), []byte("capguard"), []byte("torch.npu"), []byte("torch_npu"),
	[]byte("NPUGraph"), []byte("hpu_graph"), []byte("HPUGraph"),
	[]byte("apture-safe"), []byte("apture safe"), []byte("apture_safe"), []byte("raph-safe"),
	[]byte("raph safe"), []byte("raph_safe"), []byte("safe to capture"), []byte("raph capture"),
	[]byte("cuda_graph"), []byte("cudagraph"), []byte("capture_graph"), []byte("init_forward_metadata"),
	[]byte("is_current_stream_capturing"),
	// Kernel DSLs other than Triton (torchapi.KernelDecorator): CuTe DSL,
	// TileLang/TVM, Numba.
	[]byte("cutlass"), []byte("tilelang"), []byte("prim_func"), []byte("numba"),
	// Compiled extensions (torchapi.ExtensionLoaders; declared modules'
	// names are added per project: run.go).
	[]byte("cpp_extension"), []byte("tvm_ffi"),
	// Graph-mode settings and framework capture: they decide library mode
	// (contexts/library.go).
	[]byte("enforce_eager"), []byte("reduce-overhead"), []byte("max-autotune"), []byte("enforce-eager"), []byte("cuda-graph"),
}

// relevant reports whether src holds a root token or one of the config's
// own names (entry points, kernel ops, presets).
func relevant(src []byte, extra [][]byte) bool {
	return containsAny(src, rootTokens) || containsAny(src, extra)
}

// containsAny reports whether src holds one of the tokens.
func containsAny(src []byte, tokens [][]byte) bool {
	for _, t := range tokens {
		if bytes.Contains(src, t) {
			return true
		}
	}
	return false
}

// configTokens are the literal parts of the config's patterns.
func configTokens(cfg *Config) [][]byte {
	var out [][]byte
	add := func(pats []string) {
		for _, e := range pats {
			for _, part := range strings.FieldsFunc(e, func(r rune) bool { return r == ':' || r == '.' || r == '*' || r == '!' }) {
				if len(part) >= 3 {
					out = append(out, []byte(part))
				}
			}
		}
	}
	add(cfg.EntryPoints)
	add(cfg.ReplayPrep)
	add(cfg.PostCapture)
	add(cfg.KernelOps)
	for _, p := range cfg.Presets {
		pr := Presets[p]
		add(pr.Captured)
		add(pr.ReplayPrep)
		add(pr.PostCapture)
		add(pr.PostCaptureRPC) // a remote call names a post-capture method (rpcTargets)
		add(pr.KernelOps)
		add(pr.Detect)
	}
	for _, c := range cfg.Conventions {
		add(c.Protocol)
	}
	return out
}

// presetTokens are, for presets turned on by what the files import (not
// the config's), the literal parts of each of their patterns, one group
// per pattern: a file can hold a match of a pattern only if it holds
// every part (`*:*Attention.forward`: "Attention" and "forward"), so
// it is relevant when it holds all of one group's. A preset's Detect
// names are not tokens here: importing the framework is no root.
func presetTokens(presets []string) [][][]byte {
	var out [][][]byte
	for _, p := range presets {
		pr := Presets[p]
		for _, set := range [][]string{pr.Captured, pr.ReplayPrep, pr.PostCapture, pr.PostCaptureRPC, pr.KernelOps} {
			for _, e := range set {
				var g [][]byte
				for _, part := range strings.FieldsFunc(e, func(r rune) bool { return r == ':' || r == '.' || r == '*' || r == '!' }) {
					if len(part) >= 3 {
						g = append(g, []byte(part))
					}
				}
				if len(g) > 0 {
					out = append(out, g)
				}
			}
		}
	}
	return out
}

// holdsAll reports whether src holds every part of one of the groups.
func holdsAll(src []byte, groups [][][]byte) bool {
	for _, g := range groups {
		all := true
		for _, t := range g {
			if !bytes.Contains(src, t) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// importedPresets are the presets the files' imports turn on, found
// without parsing (lexImports), less those already chosen: every file
// read counts, parsed or not, so a folder run and a run on one of its
// files turn on the same presets.
func importedPresets(imports [][]importRef, chosen []string) []string {
	names := map[string]bool{}
	for _, refs := range imports {
		for _, r := range refs {
			if r.level > 0 || r.module == "" {
				continue
			}
			names[r.module] = true
			for _, n := range r.names {
				names[r.module+"."+n] = true
			}
		}
	}
	have := map[string]bool{}
	for _, p := range chosen {
		have[p] = true
	}
	if have["none"] {
		return nil
	}
	var out []string
	for _, p := range DetectPresets(nil, sortedSet(names)) {
		if !have[p] {
			out = append(out, p)
		}
	}
	return out
}

// anyModule is the module of an importRef that may be any module: a run-time
// import of a computed name.
const anyModule = "*"

// importRef is one module reference of an import statement.
type importRef struct {
	module string
	level  int
	names  []string // from-import names (a name may be a submodule)
}

// lexImports finds a file's imports without parsing: every line whose
// first word is `import` or `from` (inside strings too: a spurious one
// only joins two groups), continued over parentheses and backslashes.
func lexImports(src []byte) []importRef {
	if !bytes.Contains(src, []byte("import")) {
		return nil
	}
	var out []importRef
	if bytes.Contains(src, []byte("import_module(")) {
		// importlib.import_module(name) may import any project module
		// (flow/importstr.go): anyModule joins the file with every other.
		out = append(out, importRef{module: anyModule})
	}
	for len(src) > 0 {
		nl := bytes.IndexByte(src, '\n')
		line := src
		if nl >= 0 {
			line, src = src[:nl], src[nl+1:]
		} else {
			src = nil
		}
		t := bytes.TrimLeft(line, " \t")
		isImport, isFrom := bytes.HasPrefix(t, []byte("import ")), bytes.HasPrefix(t, []byte("from "))
		if !isImport && !isFrom {
			continue
		}
		// Join continuation lines: open parentheses or a trailing backslash.
		stmt := append([]byte(nil), t...)
		for (bytes.Count(stmt, []byte("(")) > bytes.Count(stmt, []byte(")")) || bytes.HasSuffix(bytes.TrimRight(stmt, " \t\r"), []byte("\\"))) && len(src) > 0 {
			nl := bytes.IndexByte(src, '\n')
			next := src
			if nl >= 0 {
				next, src = src[:nl], src[nl+1:]
			} else {
				src = nil
			}
			stmt = append(append(bytes.TrimRight(bytes.TrimRight(stmt, " \t\r"), "\\"), ' '), next...)
		}
		if i := bytes.IndexByte(stmt, '#'); i >= 0 {
			stmt = stmt[:i]
		}
		words := strings.FieldsFunc(string(stmt), func(r rune) bool {
			return r == ' ' || r == '\t' || r == ',' || r == '(' || r == ')' || r == '\r' || r == ';'
		})
		if len(words) < 2 {
			continue
		}
		if isImport {
			for k := 1; k < len(words); k++ {
				if words[k] == "as" {
					k++
					continue
				}
				out = append(out, importRef{module: words[k]})
			}
			continue
		}
		mod := words[1]
		level := len(mod) - len(strings.TrimLeft(mod, "."))
		r := importRef{module: mod[level:], level: level}
		k := 2
		if k < len(words) && words[k] == "import" {
			k++
		} else {
			continue
		}
		for ; k < len(words); k++ {
			if words[k] == "as" {
				k++
				continue
			}
			r.names = append(r.names, words[k])
		}
		out = append(out, r)
	}
	return out
}

// selectFiles returns which of the files (index.Files made without trees,
// in one module tree) to parse: those in an import-connected group with a
// relevant file.
func selectFiles(files []*index.File, rel []bool, imports [][]importRef) []bool {
	p := index.NewProject(files)
	parent := make([]int, len(files))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[ra] = rb
		}
	}
	pos := map[*index.File]int{}
	for i, f := range files {
		pos[f] = i
	}
	// link joins file i with module m's file and its packages' __init__s.
	link := func(i int, m *index.Module) {
		for x := m; x != nil; x = x.Parent {
			if x.File != nil {
				if j, ok := pos[x.File]; ok {
					union(i, j)
				}
			}
		}
	}
	for i, f := range files {
		for _, r := range imports[i] {
			if r.module == anyModule {
				for j := range files {
					union(i, j)
				}
				continue
			}
			var m *index.Module
			if len(r.names) > 0 || r.level > 0 {
				m = p.ImportFrom(f, r.module, r.level)
			} else {
				m = p.Import(f, r.module, 0)
			}
			if m == nil {
				continue
			}
			link(i, m)
			for _, n := range r.names {
				if c := m.Child(n); c != nil {
					link(i, c)
				}
			}
		}
	}
	keep := map[int]bool{}
	for i := range files {
		if rel[i] {
			keep[find(i)] = true
		}
	}
	out := make([]bool, len(files))
	for i := range files {
		out[i] = keep[find(i)]
	}
	return out
}

// unparsedSyntax checks a file the prefilter leaves out for syntax errors,
// so that every Python file's are reported whatever it holds: the parser's
// error flag (no tree built) and the tokenizer-level pass; a file that
// fails either is parsed in full for the message and position.
func unparsedSyntax(path string, src []byte) *FileError {
	psrc, _ := syntax.BlankKernels(src)
	if syntax.ParseOK(psrc) {
		return nil
	}
	tree, err := Parse(psrc)
	if err != nil {
		return &FileError{Path: path, Message: err.Error()}
	}
	if tree.Syntax == "" {
		return nil
	}
	return &FileError{Path: path, Message: tree.Syntax, Syntax: true}
}
