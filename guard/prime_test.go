package guard

import (
	"reflect"
	"testing"

	"github.com/cudagraph-capguard/capguard/guard/rules"
)

// TestPrimeBuildsSharedFacts: every fact the rules build lazily on the
// shared analysis (a map field of analysis.Analysis that starts nil) is
// built by rules.Prime, before the rules run on every core. A field built
// on first use instead is written from several goroutines at once (a
// "concurrent map writes" crash, seen with CG201's replay-prep writes).
func TestPrimeBuildsSharedFacts(t *testing.T) {
	proj, _, _, err := prepare(Options{Paths: []string{"../testdata/flow/prep_fills_output"}, Config: &Config{}}, false)
	if err != nil {
		t.Fatal(err)
	}
	a := newAnalysis(proj)
	rules.Prime(a)
	v := reflect.ValueOf(a).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Map && f.IsNil() {
			t.Errorf("analysis.Analysis.%s is still nil after rules.Prime: build it there", v.Type().Field(i).Name)
		}
	}
}
