package flow

import (
	"slices"
	"strings"
	"testing"
)

// TestParametrizedConstants: a test parameter that a parametrize decorator
// binds to constants passes only those to a constant-dispatch factory
// (its guarded returns); rebound, left to a fixture (indirect) or given
// a value that is not a constant, it stands for any value.
func TestParametrizedConstants(t *testing.T) {
	src := `import pytest
from pytest import mark


class A:
    pass


class B:
    pass


class C:
    pass


def make(kind):
    if kind == "a":
        return A()
    if kind == "b":
        return B()
    if kind == "c":
        return C()
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["a"])
def test_one(kind):
    m = make(kind)


@mark.parametrize(("kind", "n"), [("b", 1), ("a", 2)])
def test_pairs(n, kind):
    m = make(kind)


@pytest.mark.parametrize("n, kind", [(1, "b")])
def test_second(n, kind):
    m = make(kind=kind)


@pytest.mark.parametrize("kind", ["a"])
def test_rebound(kind):
    kind = kind.strip()
    m = make(kind)


@pytest.mark.parametrize("kind", ["a"], indirect=True)
def test_indirect(kind):
    m = make(kind)


@pytest.mark.parametrize("kind", [pytest.param("a"), "b"])
def test_param_objects(kind):
    m = make(kind)


@pytest.mark.parametrize("kind", ["c"])
def test_other_name(other, kind="a"):
    m = make(other)
`
	g := Analyze(projectOf(t, map[string]string{"m.py": src}), Options{})
	for _, c := range []struct {
		fn   string
		want []string
	}{
		{"m.test_one", []string{"A"}},
		{"m.test_pairs", []string{"A", "B"}},
		{"m.test_second", []string{"B"}},
		{"m.test_rebound", []string{"A", "B", "C"}},
		{"m.test_indirect", []string{"A", "B", "C"}},
		{"m.test_param_objects", []string{"A", "B", "C"}},
		{"m.test_other_name", []string{"A", "B", "C"}},
	} {
		got := valuesOfName(g, c.fn, "m")
		slices.Sort(got)
		got = slices.Compact(got)
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: make(kind) holds %v, want %v", c.fn, got, c.want)
		}
	}
}
