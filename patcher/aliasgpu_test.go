package patcher

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAliasGPUFixesCurrent keeps the fixed fixtures the GPU run compared
// (testdata/gpu/fixmodel/alias/*_fixed.py) equal to what `capguard fix
// --unsafe-fixes` makes of testdata/fixmodel/linear_attn.py,
// engine_cache.py and inplace_kernels.py now: a change to those fixes
// needs a new GPU run.
func TestAliasGPUFixesCurrent(t *testing.T) {
	t.Chdir("..")
	for _, name := range []string{"linear_attn", "engine_cache", "inplace_kernels"} {
		src := filepath.Join("testdata", "fixmodel", name+".py")
		res, err := Fix(Options{Paths: []string{src}, UnsafeFixes: true})
		if err != nil {
			t.Fatal(err)
		}
		out := res.File(src)
		if out == nil || !out.Changed() {
			t.Fatalf("%s: no fixes", src)
		}
		fixed := filepath.Join("testdata", "gpu", "fixmodel", "alias", name+"_fixed.py")
		got, err := os.ReadFile(fixed)
		if err != nil || !bytes.Equal(got, out.Fixed) {
			t.Errorf("%s is not what capguard fix --unsafe-fixes makes of %s now (re-run testdata/gpu/fixmodel/alias/run.sh):\n%s",
				fixed, src, UnifiedDiff(fixed, got, out.Fixed))
		}
	}
}
