package guard

import (
	"regexp"
	"strings"
	"testing"
)

// TestMergedConditionText: the condition a call through merged values puts
// on a chain names the call's callees and the kinds of value no call can
// take, not how many values the set holds: past the solve's caps that
// count is of the values that came first, which follows the order the
// files were built in (one holdout's 40 warnings said 211 values in one
// order and 193 in the other).
func TestMergedConditionText(t *testing.T) {
	g, err := BuildGraph(Options{Paths: []string{"../testdata/flow/merged_calls"}})
	if err != nil {
		t.Fatal(err)
	}
	form := regexp.MustCompile("runs [^ ]+, one of its [0-9]+ callees, through values the analysis merged there \\(among them [^)]*, which no call can take\\)")
	found := 0
	for _, f := range g.Functions {
		if !strings.Contains(f.Condition, "merged there") {
			continue
		}
		found++
		if !form.MatchString(f.Condition) || regexp.MustCompile(`[0-9]+ values`).MatchString(f.Condition) {
			t.Errorf("%s: condition %q", f.Name, f.Condition)
		}
	}
	if found == 0 {
		t.Fatal("no function of the fixture is conditional on a merged call")
	}
}
