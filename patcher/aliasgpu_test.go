package patcher

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAliasGPUFixesCurrent keeps the fixed files the GPU runs replayed
// (testdata/gpu/fixmodel/alias/*_fixed.py, testdata/gpu/conversions/
// noop_conversion_fixed.py) equal to what `capguard fix --unsafe-fixes`
// makes of their sources now: a change to those fixes needs a new GPU run.
func TestAliasGPUFixesCurrent(t *testing.T) {
	t.Chdir("..")
	pairs := [][2]string{}
	for _, name := range []string{"linear_attn", "engine_cache", "inplace_kernels"} {
		pairs = append(pairs, [2]string{
			filepath.Join("testdata", "fixmodel", name+".py"),
			filepath.Join("testdata", "gpu", "fixmodel", "alias", name+"_fixed.py"),
		})
	}
	conv := filepath.Join("testdata", "gpu", "conversions", "noop_conversion")
	pairs = append(pairs, [2]string{conv + ".py", conv + "_fixed.py"})
	for _, p := range pairs {
		src, fixed := p[0], p[1]
		res, err := Fix(Options{Paths: []string{src}, UnsafeFixes: true})
		if err != nil {
			t.Fatal(err)
		}
		out := res.File(src)
		if out == nil || !out.Changed() {
			t.Fatalf("%s: no fixes", src)
		}
		got, err := os.ReadFile(fixed)
		if err != nil || !bytes.Equal(got, out.Fixed) {
			t.Errorf("%s is not what capguard fix --unsafe-fixes makes of %s now (re-run its GPU script):\n%s",
				fixed, src, UnifiedDiff(fixed, got, out.Fixed))
		}
	}
}
