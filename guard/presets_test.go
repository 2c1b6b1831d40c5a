package guard

import (
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// presetRoles are a preset's entry roles, in the order docs/presets.md
// and the contradiction check use.
func presetRoles(p Preset) []struct {
	role string
	pats []string
} {
	return []struct {
		role string
		pats []string
	}{{"captured", p.Captured}, {"replay-prep", p.ReplayPrep}, {"post-capture", p.PostCapture}}
}

// checkGlob accepts a glob whose only metacharacter is `*` (the form
// docs/presets.md promises) and that path.Match takes.
func checkGlob(t *testing.T, where, g string) {
	t.Helper()
	if g == "" {
		t.Errorf("%s: empty glob", where)
		return
	}
	if strings.ContainsAny(g, "?[]\\/ \t") {
		t.Errorf("%s: %q: only `*` may be a wildcard, and no separators or spaces", where, g)
	}
	if _, err := path.Match(g, ""); err != nil {
		t.Errorf("%s: %q: %v", where, g, err)
	}
	if strings.Contains(g, "..") || strings.HasPrefix(g, ".") || strings.HasSuffix(g, ".") {
		t.Errorf("%s: %q: not a dotted name", where, g)
	}
}

// checkAnchored accepts a dotted-name glob that begins with a literal
// top-level package name: an unanchored kernel op or predicate would name
// functions of every project.
func checkAnchored(t *testing.T, where, g string) {
	t.Helper()
	checkGlob(t, where, g)
	if strings.Contains(g, ":") {
		t.Errorf("%s: %q: a dotted name, not \"module:Qual\"", where, g)
	}
	top, _, _ := strings.Cut(g, ".")
	if top == "" || strings.Contains(top, "*") || !isPyIdent(top) {
		t.Errorf("%s: %q: must begin with a package name", where, g)
	}
}

func isPyIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func TestPresetPatterns(t *testing.T) {
	if len(Presets) == 0 {
		t.Fatal("no presets")
	}
	for _, name := range PresetNames() {
		p := Presets[name]
		for _, r := range presetRoles(p) {
			seen := map[string]bool{}
			for _, pat := range r.pats {
				where := name + " " + r.role
				if seen[pat] {
					t.Errorf("%s: %q listed twice", where, pat)
				}
				seen[pat] = true
				mod, qual, ok := strings.Cut(pat, ":")
				if !ok || strings.Contains(qual, ":") {
					t.Errorf("%s: %q must be \"module:Qual.name\"", where, pat)
					continue
				}
				checkGlob(t, where+" module", mod)
				checkGlob(t, where+" qualname", qual)
				// A method: the name after the last dot is literal, so a
				// pattern names one hook, not every method of a class.
				i := strings.LastIndexByte(qual, '.')
				if i < 0 || !isPyIdent(qual[i+1:]) {
					t.Errorf("%s: %q must end in a literal .method", where, pat)
				}
			}
		}
		for _, k := range p.KernelOps {
			checkAnchored(t, name+" kernel-ops", k)
		}
		for _, pr := range p.Predicates {
			checkAnchored(t, name+" predicates", strings.TrimPrefix(pr, "!"))
		}
		if len(p.Detect) == 0 {
			t.Errorf("%s: no Detect entries", name)
		}
		for _, d := range p.Detect {
			for _, part := range strings.Split(d, ".") {
				if !isPyIdent(part) {
					t.Errorf("%s: Detect %q is not a dotted package name", name, d)
				}
			}
		}
	}
}

func TestPresetDetectUnique(t *testing.T) {
	owner := map[string]string{}
	for _, name := range PresetNames() {
		for _, d := range Presets[name].Detect {
			if o, ok := owner[d]; ok {
				t.Errorf("Detect %q in both %s and %s", d, o, name)
			}
			owner[d] = name
		}
	}
}

// globsOverlap reports whether some string matches both `*`-only globs.
func globsOverlap(a, b string) bool {
	memo := map[[2]int]bool{}
	seen := map[[2]int]bool{}
	var f func(i, j int) bool
	f = func(i, j int) bool {
		k := [2]int{i, j}
		if seen[k] {
			return memo[k]
		}
		seen[k] = true
		var r bool
		switch {
		case i == len(a) && j == len(b):
			r = true
		case i < len(a) && a[i] == '*':
			r = f(i+1, j) || j < len(b) && f(i, j+1)
		case j < len(b) && b[j] == '*':
			r = f(i, j+1) || i < len(a) && f(i+1, j)
		case i < len(a) && j < len(b):
			r = a[i] == b[j] && f(i+1, j+1)
		}
		memo[k] = r
		return r
	}
	return f(0, 0)
}

func TestGlobsOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"*Impl.forward", "*Impl.forward", true},
		{"*Impl.forward", "*AttentionImpl.forward", true},
		{"*Impl.forward", "*Impl.forward_mqa", false},
		{"*Impl.forward", "*.update_graph_params", false},
		{"*.plan", "*Wrapper.plan", true},
		{"*flashinfer.*", "*", true},
		{"a*b", "ac*", true},
		{"ab", "a*c", false},
		{"", "*", true},
		{"x", "", false},
	} {
		if got := globsOverlap(c.a, c.b); got != c.want {
			t.Errorf("globsOverlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := globsOverlap(c.b, c.a); got != c.want {
			t.Errorf("globsOverlap(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

// TestPresetsAgree: no function may be captured under one preset and
// replay-prep (or post-capture) under another, or under two roles of one.
func TestPresetsAgree(t *testing.T) {
	type entry struct{ preset, role, pat string }
	var all []entry
	for _, name := range PresetNames() {
		for _, r := range presetRoles(Presets[name]) {
			for _, p := range r.pats {
				all = append(all, entry{name, r.role, p})
			}
		}
	}
	for i, x := range all {
		for _, y := range all[i+1:] {
			if x.role == y.role {
				continue
			}
			xm, xq, _ := strings.Cut(x.pat, ":")
			ym, yq, _ := strings.Cut(y.pat, ":")
			if globsOverlap(xm, ym) && globsOverlap(xq, yq) {
				t.Errorf("%s %s %q and %s %s %q can name the same function", x.preset, x.role, x.pat, y.preset, y.role, y.pat)
			}
		}
	}
}

// TestPresetsDocumented: docs/presets.md has a section per preset, headed
// `## name`, that names each of its patterns and Detect entries (in
// backticks).
func TestPresetsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "presets.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	var cur string
	var body strings.Builder
	flush := func() {
		if cur != "" {
			sections[cur] = body.String()
		}
		body.Reset()
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			flush()
			cur = strings.TrimSpace(strings.TrimPrefix(line, "## "))
			continue
		}
		if strings.HasPrefix(line, "# ") {
			flush()
			cur = ""
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	flush()
	for _, name := range PresetNames() {
		sec, ok := sections[name]
		if !ok {
			t.Errorf("docs/presets.md: no section `## %s`", name)
			continue
		}
		p := Presets[name]
		var names []string
		for _, r := range presetRoles(p) {
			names = append(names, r.pats...)
		}
		names = append(append(append(names, p.KernelOps...), p.Predicates...), p.Detect...)
		for _, n := range names {
			if !strings.Contains(sec, "`"+n+"`") {
				t.Errorf("docs/presets.md ## %s does not name `%s`", name, n)
			}
		}
		if !strings.Contains(sec, "Not covered") {
			t.Errorf("docs/presets.md ## %s: no \"Not covered\" paragraph", name)
		}
	}
	for s := range sections {
		if _, ok := Presets[s]; !ok && strings.ToLower(s) == s && !strings.Contains(s, " ") {
			t.Errorf("docs/presets.md documents %q, which is not a preset", s)
		}
	}
}

func TestDetectPresets(t *testing.T) {
	for _, c := range []struct {
		name         string
		top, imports []string
		want         []string
	}{
		{"nothing", nil, nil, nil},
		{"own package", []string{"sglang"}, nil, []string{"sglang"}},
		{"submodule import", nil, []string{"vllm.v1.attention.backend"}, []string{"vllm"}},
		{"no partial word", nil, []string{"vllm_ascend.attention", "vllmx", "sglang_router"}, []string{"vllm-ascend"}},
		{"plugin imports host", []string{"vllm_ascend"}, []string{"vllm.config", "torch_npu"}, []string{"vllm", "vllm-ascend"}},
		{"tgi", []string{"text_generation_server"}, []string{"flashinfer.decode"}, []string{"flashinfer", "tgi"}},
		{"trtllm pytorch backend", nil, []string{"tensorrt_llm._torch.attention_backend.interface"}, []string{"trtllm"}},
		{"rtp-llm", []string{"rtp_llm"}, nil, []string{"rtp-llm"}},
		{"lmdeploy lightllm", nil, []string{"lmdeploy.pytorch", "lightllm.common.basemodel"}, []string{"lightllm", "lmdeploy"}},
		{"unrelated", []string{"myserver"}, []string{"torch", "triton.language", "numpy"}, nil},
		{"duplicates once", []string{"flashinfer"}, []string{"flashinfer", "flashinfer.norm"}, []string{"flashinfer"}},
	} {
		if got := DetectPresets(c.top, c.imports); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: DetectPresets(%q, %q) = %q, want %q", c.name, c.top, c.imports, got, c.want)
		}
	}
}

func TestPresetsValidateInConfig(t *testing.T) {
	cfg := &Config{Presets: PresetNames()}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}
