package index

import (
	"path/filepath"
	"sort"
	"strings"
)

// Module is a place in the module tree: a folder (a package, regular with
// an __init__.py or a PEP 420 namespace package without one) or a .py
// file. The tree mirrors the file system, so absolute imports resolve
// against whichever folder is the import root, as sys.path would have it.
type Module struct {
	Name     string // the last component ("engine", "model_runner")
	Path     string // absolute path of the folder or the .py file
	IsDir    bool
	File     *File // the .py file, or a folder's __init__.py; nil for a namespace package
	Parent   *Module
	Children map[string]*Module
}

// Regular reports whether the module is a .py file or a folder with an
// __init__.py.
func (m *Module) Regular() bool { return !m.IsDir || m.File != nil }

// Child returns the submodule called name, or nil.
func (m *Module) Child(name string) *Module {
	if m == nil {
		return nil
	}
	return m.Children[name]
}

// Qualified is the module's dotted name as capguard prints it: its file's
// name, or for a namespace package its folder's dotted path.
func (m *Module) Qualified() string {
	if m.File != nil {
		return m.File.Name
	}
	var parts []string
	for x := m; x != nil && x.Name != "" && isIdent(x.Name); x = x.Parent {
		parts = append(parts, x.Name)
		if x.Parent != nil && x.Parent.IsDir && !x.Parent.Regular() && x.Parent.Parent == nil {
			break
		}
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".")
}

// Project is every indexed file with the module tree they live in.
type Project struct {
	Files []*File
	// Classes are all classes of all files, in file and source order.
	Classes  []*Class
	root     *Module
	byName   map[string][]*Module // every module with an identifier name, by name
	byPath   map[string]*Module
	static   map[staticKey]Symbol // ResolveName's memo
	inFlight map[staticKey]bool
	sealed   bool // Seal ran: static holds every module-level name
	// ModuleBases are outside classes known to be torch modules beyond
	// torch.nn's (a framework's model base class, from its preset):
	// Hierarchy.IsModule.
	ModuleBases map[string]bool
}

// NewProject builds the module tree of the files (each with its Abs path
// set) and resolves their imports.
func NewProject(files []*File) *Project {
	p := &Project{root: &Module{IsDir: true, Children: map[string]*Module{}}, byName: map[string][]*Module{},
		byPath: map[string]*Module{}, static: map[staticKey]Symbol{}, inFlight: map[staticKey]bool{}}
	sorted := append([]*File{}, files...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Abs < sorted[j].Abs })
	for _, f := range sorted {
		dir := p.dir(filepath.Dir(f.Abs))
		base := strings.TrimSuffix(filepath.Base(f.Abs), ".py")
		if base == "__init__" {
			if dir.File == nil {
				dir.File = f
			}
			f.Module = dir
			continue
		}
		m := dir.Children[base]
		if m == nil {
			m = &Module{Name: base, Path: f.Abs, Parent: dir, Children: map[string]*Module{}}
			dir.Children[base] = m
			p.register(m)
		}
		if m.File == nil {
			m.File = f
		}
		f.Module = m
	}
	p.Files = files
	for _, f := range files {
		p.Classes = append(p.Classes, f.ClassList...)
		p.resolveImports(f)
	}
	return p
}

// dir returns the folder module of an absolute folder path, making it and
// its ancestors on first use.
func (p *Project) dir(abs string) *Module {
	if m, ok := p.byPath[abs]; ok {
		return m
	}
	parent := filepath.Dir(abs)
	var pm *Module
	if parent == abs {
		pm = p.root
	} else {
		pm = p.dir(parent)
	}
	name := filepath.Base(abs)
	m := pm.Children[name]
	if m == nil {
		m = &Module{Name: name, Path: abs, IsDir: true, Parent: pm, Children: map[string]*Module{}}
		pm.Children[name] = m
		p.register(m)
	} else if !m.IsDir {
		// a.py beside a/: the package wins, as in Python.
		dm := &Module{Name: name, Path: abs, IsDir: true, Parent: pm, Children: map[string]*Module{}}
		pm.Children[name] = dm
		p.register(dm)
		m = dm
	}
	p.byPath[abs] = m
	return m
}

func (p *Project) register(m *Module) {
	if isIdent(m.Name) {
		p.byName[m.Name] = append(p.byName[m.Name], m)
	}
}

// isIdent reports whether s can be a Python module name component.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127:
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Import resolves `import dotted` (level 0) or a relative import with
// level dots from file f to a project module, or nil when the module is
// not in the project (an external one). For `from . import x` pass
// dotted "" and look x up as a child or attribute of the result.
func (p *Project) Import(f *File, dotted string, level int) *Module {
	return p.importModule(f, dotted, level, false)
}

// ImportFrom resolves the module of `from dotted import ...`: as Import,
// but a bare namespace folder may be the module (`from nest import mod`
// with nest/mod.py and no nest/__init__.py).
func (p *Project) ImportFrom(f *File, dotted string, level int) *Module {
	return p.importModule(f, dotted, level, true)
}

func (p *Project) importModule(f *File, dotted string, level int, from bool) *Module {
	var parts []string
	if dotted != "" {
		parts = strings.Split(dotted, ".")
	}
	if level > 0 {
		base := f.Module
		if base == nil {
			return nil
		}
		if !base.IsDir || base.File != f {
			base = base.Parent // a module's package; an __init__'s own folder
		}
		for i := 1; i < level && base != nil; i++ {
			base = base.Parent
		}
		for _, part := range parts {
			base = base.Child(part)
		}
		return base
	}
	if len(parts) == 0 {
		return nil
	}
	var best *Module
	bestScore := -1
	for _, m := range p.byName[parts[0]] {
		if !topLevel(m, f) {
			continue
		}
		if m.IsDir && !m.Regular() && len(parts) == 1 && !from {
			// A bare namespace folder (tests/torch/) never stands for a
			// top-level import of that name.
			continue
		}
		if m.IsDir && !m.Regular() && !hasPython(m) {
			continue
		}
		t := m
		for _, part := range parts[1:] {
			t = t.Child(part)
			if t == nil {
				break
			}
		}
		if t == nil || t.IsDir && !t.Regular() && !hasPython(t) {
			continue
		}
		s := rootScore(m, f)
		if wellKnown[parts[0]] && s < 1000 {
			// A stub or vendored copy of a framework (tests/stubs/torch/)
			// is what `import torch` means only for files under its
			// folder's parent (a likely sys.path entry): elsewhere it is
			// the installed framework.
			continue
		}
		if s > bestScore || s == bestScore && best != nil && t.Path < best.Path {
			best, bestScore = t, s
		}
	}
	return best
}

// topLevel reports whether module m can be what an absolute import's
// first name means from file f: Python 3 finds top-level modules on
// sys.path only, so m's folder must not be a regular package (a module
// inside one is reached only through its package: lmdeploy's
// check_env/torch.py is never `import torch`), unless f is a script in
// that same folder (its folder is sys.path[0]) and the folder is no
// package itself.
func topLevel(m *Module, f *File) bool {
	parent := m.Parent
	if parent == nil || parent.File == nil {
		return true
	}
	// A script's sibling (its folder is sys.path[0]), unless the name is a
	// standard-library or framework module's: a packaged module's
	// `import torch` is torch, whatever lies beside it.
	return filepath.Dir(f.Abs) == parent.Path && filepath.Base(f.Abs) != "__init__.py" && !wellKnown[m.Name]
}

// wellKnown are top-level names of the standard library and of the
// frameworks capguard's users import: a project module of the same name
// inside a package is never what a bare import of it means.
var wellKnown = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`torch triton numpy transformers safetensors flashinfer vllm sglang lmdeploy
	tensorrt_llm deep_gemm sgl_kernel einops accelerate datasets huggingface_hub tokenizers pydantic
	fastapi uvicorn aiohttp requests yaml ray pytest setuptools packaging
	abc argparse ast asyncio base64 bisect builtins collections concurrent contextlib copy csv ctypes
	dataclasses datetime decimal enum functools gc glob hashlib heapq importlib inspect io itertools
	json logging math multiprocessing operator os pathlib pickle platform pprint queue random re
	shutil signal socket sqlite3 string struct subprocess sys tempfile textwrap threading time timeit
	traceback types typing unittest uuid warnings weakref zipfile`) {
		wellKnown[n] = true
	}
}

// hasPython reports whether a folder module holds a Python file somewhere.
func hasPython(m *Module) bool {
	if m.File != nil || !m.IsDir {
		return true
	}
	for _, c := range m.Children {
		if hasPython(c) {
			return true
		}
	}
	return false
}

// rootScore rates top-level module m as what file f's `import m...`
// means: a folder beside f or an ancestor's child (a likely sys.path
// entry) is best, the nearer the better; a regular package beats a
// namespace one.
func rootScore(m *Module, f *File) int {
	root := filepath.Dir(m.Path)
	from := filepath.Dir(f.Abs)
	s := 0
	if from == root || strings.HasPrefix(from, root+string(filepath.Separator)) {
		s = 1000 + strings.Count(root, string(filepath.Separator))*4
	} else {
		// Shared prefix length, in path elements.
		a, b := strings.Split(root, string(filepath.Separator)), strings.Split(from, string(filepath.Separator))
		for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
			s += 4
		}
	}
	if m.Regular() {
		s += 2
	}
	return s
}

// ModuleName is the dotted name of a file relative to the project root
// (guard.ProjectRoot, never the working directory): "pkg/sub/mod.py" ->
// "pkg.sub.mod", "pkg/__init__.py" -> "pkg". Leading ".." elements (a file
// outside root) are dropped.
func ModuleName(abs, root string) string {
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		rel = abs
	}
	rel = filepath.ToSlash(rel)
	rel = strings.TrimSuffix(rel, ".py")
	parts := strings.Split(rel, "/")
	for len(parts) > 0 && (parts[0] == ".." || parts[0] == "." || parts[0] == "") {
		parts = parts[1:]
	}
	if n := len(parts); n > 0 && parts[n-1] == "__init__" {
		parts = parts[:n-1]
	}
	if len(parts) == 0 {
		return strings.TrimSuffix(filepath.Base(abs), ".py")
	}
	return strings.Join(parts, ".")
}
