package guard

import (
	"strings"

	"github.com/cudagraph-capguard/capguard/guard/index"
)

// extensionGlobs are the kernel-op globs ("my_ext.*") of the CUDA extension
// modules a file declares (index.CUDAExtensionNames): a call of such a
// module's attribute launches its kernels, as a `torch.ops.*` call does.
// The file is parsed and its imports resolved here on its own (a setup
// script is rarely in an analysed group; its imports are absolute); one
// that does not parse declares nothing.
func extensionGlobs(path, abs string, src []byte) []string {
	f, err := parseFile(path, abs, "", src, nil)
	if err != nil || f == nil {
		return nil
	}
	p := index.NewProject([]*index.File{f}) // resolves its imports (Qualify)
	var out []string
	for _, n := range p.CUDAExtensionNames(f) {
		out = append(out, n+".*")
	}
	return out
}

// extensionTokens are the prefilter's tokens for extension globs: each
// module's last dotted part (the name an import or attribute read spells).
func extensionTokens(globs []string) [][]byte {
	var out [][]byte
	for _, g := range globs {
		name := strings.TrimSuffix(g, ".*")
		last := name[strings.LastIndexByte(name, '.')+1:]
		if len(last) < 3 {
			last = name
		}
		out = append(out, []byte(last))
	}
	return out
}
