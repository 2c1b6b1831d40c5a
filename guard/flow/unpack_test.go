package flow

import (
	"slices"
	"testing"
)

// A target of an unpacking assignment reads its own position of a tuple
// or list literal (`model, tok = load()`), nested and in a for loop's
// target too; a starred target and those after it read every element,
// as does every target once something put an element in without a
// constant index. zip and enumerate make tuples of the same kind.
func TestUnpackReadsItsPosition(t *testing.T) {
	src := `
class Model:
    def run(self):
        return 1


class Tok:
    def run(self):
        return 2


class Cfg:
    pass


def load():
    return Model(), Tok()


def nested():
    return Cfg(), (Model(), Tok())


def main():
    model, tok = load()
    model.run()
    cfg, (m2, t2) = nested()
    for first, second in [(Model(), Tok())]:
        first.run()


def starred():
    head, *rest = [Model(), Tok(), Cfg()]
    a, *b, last = [Model(), Tok(), Cfg()]


def zipped(models, toks):
    for i, (m, k) in enumerate(zip([Model()], [Tok()])):
        m.run()
    for j, mm in enumerate([Model()]):
        mm.run()


def grown():
    xs = [Model(), Tok()]
    xs.append(Cfg())
    one, two, three = xs
`
	g := Analyze(projectOf(t, map[string]string{"m.py": src}), Options{})
	checkValueCases(t, g, []valueCase{
		{"m.main", "model", []string{"Model"}, []string{"Tok"}},
		{"m.main", "tok", []string{"Tok"}, []string{"Model"}},
		{"m.main", "cfg", []string{"Cfg"}, []string{"Model", "Tok"}},
		{"m.main", "m2", []string{"Model"}, []string{"Tok", "Cfg"}},
		{"m.main", "t2", []string{"Tok"}, []string{"Model", "Cfg"}},
		{"m.main", "first", []string{"Model"}, []string{"Tok"}},
		{"m.main", "second", []string{"Tok"}, []string{"Model"}},
		{"m.starred", "head", []string{"Model"}, []string{"Tok", "Cfg"}},
		{"m.starred", "last", []string{"Model", "Tok", "Cfg"}, nil},
		{"m.zipped", "m", []string{"Model"}, []string{"Tok"}},
		{"m.zipped", "k", []string{"Tok"}, []string{"Model"}},
		{"m.zipped", "mm", []string{"Model"}, nil},
		{"m.zipped", "i", nil, []string{"Model", "Tok"}},
		{"m.grown", "one", []string{"Model", "Tok", "Cfg"}, nil},
	})
	for _, fn := range []string{"m.main", "m.zipped"} {
		if c := callees(g, fn); slices.Contains(c, "m.Tok.run") || !slices.Contains(c, "m.Model.run") {
			t.Errorf("%s calls %v: its run() calls are Model.run only", fn, c)
		}
	}
}
