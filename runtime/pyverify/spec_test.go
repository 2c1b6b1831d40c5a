package pyverify

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	good := map[string]Target{
		"a/b.py:reader":         {Path: "a/b.py", Function: "reader"},
		"b.py:Reader.forward":   {Path: "b.py", Class: "Reader", Function: "forward"},
		"/x:y/b.py:_f":          {Path: "/x:y/b.py", Function: "_f"},
		"dir.v2/mod.py:Cls._m2": {Path: "dir.v2/mod.py", Class: "Cls", Function: "_m2"},
	}
	for in, want := range good {
		got, err := ParseTarget(in)
		if err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if err == nil && got.String() != in {
			t.Errorf("String() = %q, want %q", got.String(), in)
		}
	}
	for _, in := range []string{"b.py", "b.py:", ":f", "b.txt:f", "b.py:1f", "b.py:A.b.c", "b.py:f-g", "b.py:A."} {
		if _, err := ParseTarget(in); err == nil {
			t.Errorf("ParseTarget(%q) accepted", in)
		}
	}
}

func TestTargetCheck(t *testing.T) {
	dir := t.TempDir()
	py := filepath.Join(dir, "r.py")
	os.WriteFile(py, []byte(readerPy), 0o644)
	for _, q := range []string{"reader", "prepare", "Reader.forward", "Reader.__init__"} {
		tg, _ := ParseTarget(py + ":" + q)
		if err := tg.Check(); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	for _, q := range []string{"read", "Reader.back", "Meta.forward", "forward"} {
		tg, _ := ParseTarget(py + ":" + q)
		if err := tg.Check(); err == nil {
			t.Errorf("%s: no error", q)
		}
	}
	tg, _ := ParseTarget(filepath.Join(dir, "missing.py") + ":f")
	if err := tg.Check(); err == nil || !strings.Contains(err.Error(), "missing.py") {
		t.Errorf("missing file: %v", err)
	}
}

func TestModuleOf(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "srv", "layers")
	os.MkdirAll(pkg, 0o755)
	os.WriteFile(filepath.Join(dir, "srv", "__init__.py"), nil, 0o644)
	os.WriteFile(filepath.Join(pkg, "__init__.py"), nil, 0o644)
	dotted, root, err := moduleOf(filepath.Join(pkg, "attn.py"))
	if err != nil || dotted != "srv.layers.attn" || root != dir {
		t.Errorf("package: %q %q %v", dotted, root, err)
	}
	dotted, root, err = moduleOf(filepath.Join(dir, "loose.py"))
	if err != nil || dotted != "" || root != dir {
		t.Errorf("loose file: %q %q %v", dotted, root, err)
	}
}

func writeSpec(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadSpecTOMLAndJSONAgree(t *testing.T) {
	tp := writeSpec(t, "s.toml", "replays = 3\nbatch_sizes = [2, 8]\n"+readerSpec+"\n[tolerance]\natol = 0.5\n")
	jp := writeSpec(t, "s.json", `{"arg": [
	  {"name": "q", "shape": ["B", 1, 128], "dtype": "bfloat16"},
	  {"name": "seq_lens", "shape": ["B"], "dtype": "int64", "init": "randint 1..256"},
	  {"name": "seq_lens_cpu", "role": "mirror", "mirror_of": "seq_lens"}],
	 "prep": {"call": "prepare", "args": ["seq_lens"]},
	 "replays": 3, "batch_sizes": [2, 8], "tolerance": {"atol": 0.5, "rtol": 0}}`)
	ts, err := LoadSpec(tp)
	if err != nil {
		t.Fatal(err)
	}
	js, err := LoadSpec(jp)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Spec{ts, js} {
		if s.Replays != 3 || len(s.BatchSizes) != 2 || s.Tolerance.Atol != 0.5 || len(s.Args) != 3 || s.Prep.Call != "prepare" {
			t.Errorf("%s: %+v", s.Path, s)
		}
		sl := s.Args[1]
		if sl.Init != "randint" || *sl.Low != 1 || *sl.High != 257 || sl.Role != RoleStatic || sl.Device != "cuda" {
			t.Errorf("%s: seq_lens %+v", s.Path, sl)
		}
		for b, want := range map[int]int{1: 1, 4: 4} {
			if n, err := dim(s.Args[0].Shape[0], b); err != nil || n != want {
				t.Errorf("%s: dim B at %d = %d, %v", s.Path, b, n, err)
			}
		}
		if n, _ := dim(s.Args[0].Shape[2], 4); n != 128 {
			t.Errorf("%s: dim 128 = %d", s.Path, n)
		}
	}
}

func TestDims(t *testing.T) {
	for in, want := range map[any]int{"B": 8, "B*4": 32, "2*B": 16, " B * 2 ": 16, int64(3): 3, float64(5): 5} {
		if n, err := dim(in, 8); err != nil || n != want {
			t.Errorf("dim(%v) = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, in := range []any{"C", "B+1", int64(-1), 1.5, true, "-2"} {
		if _, err := dim(in, 8); err == nil {
			t.Errorf("dim(%v) accepted", in)
		}
	}
}

func TestBadSpecs(t *testing.T) {
	arg := func(extra string) string { return "[[arg]]\nname = \"x\"\n" + extra + "\n" }
	cases := map[string]string{
		"":                       "no [[arg]]",
		arg(`shape = ["B"]`):     "dtype is missing",
		arg(`dtype = "float32"`): "needs shape",
		arg(`shape = ["B"]` + "\n" + `dtype = "f32"`):                                    `unknown dtype "f32"`,
		arg(`shape = ["B"]` + "\n" + `dtype = "int32"`):                                  "needs a range",
		arg(`shape = ["B"]` + "\n" + `dtype = "int32"` + "\n" + `init = "randint 5..1"`): "low < high",
		arg(`shape = ["B"]` + "\n" + `dtype = "int32"` + "\n" + `init = "poisson"`):      `init "poisson"`,
		arg(`shape = ["B"]` + "\n" + `dtype = "float32"` + "\n" + `role = "weights"`):    `role "weights"`,
		arg(`shape = ["B"]` + "\n" + `dtype = "float32"` + "\n" + `device = "tpu"`):      `device "tpu"`,
		arg(`shape = ["B"]` + "\n" + `dtype = "float32"` + "\n" + `pin = true`):          "pin = true needs",
		arg(`shape = ["Q"]` + "\n" + `dtype = "float32"`):                                `shape entry "Q"`,
		arg(`shape = ["B"]` + "\n" + `dtype = "float32"` + "\n" + `colour = "red"`):      "unknown key arg.colour",
		arg(`role = "mirror"`):                            "mirror_of",
		arg(`role = "mirror"` + "\n" + `mirror_of = "y"`): `mirror_of "y" names no argument`,
		arg(`role = "const"`):                             "needs value",
		arg(`shape = ["B"]` + "\n" + `dtype = "float32"` + "\n" + `init = "full"`):                  "full needs",
		arg(`shape = ["B"]`+"\n"+`dtype = "float32"`) + "[prep]\nargs = [\"x\"]\n":                  "[prep] needs call",
		arg(`shape = ["B"]`+"\n"+`dtype = "float32"`) + "[prep]\ncall = \"f\"\nargs = [\"y\"]\n":    `"y" names no argument`,
		arg(`shape = ["B"]`+"\n"+`dtype = "float32"`) + "[prep]\ncall = \"m.py:9f\"\n":              "not a Python name",
		arg(`shape = ["B"]`+"\n"+`dtype = "float32"`) + "[construct]\nargs = [\"w\"]\n":             `"w" names no argument`,
		arg(`shape = ["B"]`+"\n"+`dtype = "float32"`) + arg(`shape = [1]`+"\n"+`dtype = "float32"`): "used twice",
		"batch_sizes = [0]\n" + arg(`shape = ["B"]`+"\n"+`dtype = "float32"`):                       "not a batch size",
		arg(`shape = ["B"]`+"\n"+`dtype = "float32"`) + "replays = 2\n":                             "must come before the first [[arg]]",
		"timeout = \"soon\"\n" + arg(`shape = ["B"]`+"\n"+`dtype = "float32"`):                      "timeout",
		"[[arg]]\nname = \"1x\"\n": "not a Python name",
		"arg = 3\n":                "not a valid TOML spec",
	}
	for body, want := range cases {
		p := writeSpec(t, "spec.toml", body)
		_, err := LoadSpec(p)
		var se *SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("spec %q: error %v, want one naming the file and containing %q", body, err, want)
		}
	}
	for name, body := range map[string]string{"s.yaml": "arg: []", "s.json": `{"arg": [], "extra": 1}`} {
		if _, err := LoadSpec(writeSpec(t, name, body)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := LoadSpec(filepath.Join(t.TempDir(), "none.toml")); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("missing spec: %v", err)
	}
}

func TestMirrorOfMirror(t *testing.T) {
	p := writeSpec(t, "s.toml", `
[[arg]]
name = "a"
shape = ["B"]
dtype = "float32"
[[arg]]
name = "b"
role = "mirror"
mirror_of = "a"
[[arg]]
name = "c"
role = "mirror"
mirror_of = "b"
`)
	if _, err := LoadSpec(p); err == nil || !strings.Contains(err.Error(), "mirror a static or fixed tensor") {
		t.Errorf("err %v", err)
	}
}
