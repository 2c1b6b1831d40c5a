// Command fixtree runs capguard check and capguard fix over a whole Python
// tree and proves that the fixer never breaks a file: every fixed file must
// parse (tree-sitter) and compile (python3 -m py_compile) wherever its
// original did. It writes nothing into the tree: fixed files go to a
// temporary mirror.
//
//	go run ./bench/fixtree                 # this machine's whole installed Python tree
//	go run ./bench/fixtree -stress DIR...  # every function treated as captured
//	go run ./bench/fixtree -v              # and print every finding
//
// The default run checks the tree as a user would (configuration found
// upwards, default rules). A tree without CUDA-graph code flags nothing, so
// -stress also runs a configuration that makes every function a captured
// entry point and every call a kernel launch, with every rule and unsafe
// fixes on: the fixer then rewrites thousands of real files it was never
// meant for, which is the point. Folders are checked one at a time (with
// the files of that folder only), which bounds memory on large trees.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/cudagraph-capguard/capguard/guard"
	"github.com/cudagraph-capguard/capguard/patcher"
)

type stats struct {
	folders, files, errors, flagged, findings, fixable int
	changed, applied, skipped, pyCompiled              int
	parseBroken, compileBroken                         []string
	notConverged                                       []string
	errorLines                                         []string
}

func main() {
	stress := flag.Bool("stress", false, "treat every function as captured and every call as a kernel launch")
	verbose := flag.Bool("v", false, "print every finding")
	flag.Parse()
	roots := flag.Args()
	if len(roots) == 0 {
		out, err := exec.Command("python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "fixtree: no path given and python3 not found:", err)
			os.Exit(2)
		}
		roots = []string{strings.TrimSpace(string(out))}
	}
	folders := map[string][]string{}
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "__pycache__") {
				return filepath.SkipDir
			}
			if !d.IsDir() && d.Type().IsRegular() && strings.HasSuffix(p, ".py") {
				folders[filepath.Dir(p)] = append(folders[filepath.Dir(p)], p)
			}
			return nil
		})
	}
	dirs := make([]string, 0, len(folders))
	for d := range folders {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	mirror, err := os.MkdirTemp("", "capguard-fixtree-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixtree:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(mirror)

	var cfg *guard.Config
	if *stress {
		cfg = &guard.Config{Select: []string{"ALL"}, EntryPoints: []string{"*:*"}, KernelOps: []string{"*"}, Presets: []string{"sglang", "vllm"}}
	}
	var st stats
	start := time.Now()
	tty := isatty.IsTerminal(os.Stderr.Fd())
	for i, dir := range dirs {
		files := folders[dir]
		st.folders++
		if tty && i%50 == 0 {
			fmt.Fprintf(os.Stderr, "\r%d/%d folders, %d files, %d changed", i, len(dirs), st.files, st.changed)
		}
		res, err := guard.Run(guard.Options{Paths: files, Config: cfg, MaxFileSize: -1})
		if err != nil {
			fmt.Fprintf(os.Stderr, "\nfixtree: %s: check: %v\n", dir, err)
			os.Exit(2)
		}
		st.files += res.Files
		st.errors += len(res.Errors)
		for _, e := range res.Errors {
			st.errorLines = append(st.errorLines, fmt.Sprintf("%s: %s", e.Path, e.Message))
		}
		flagged := map[string]bool{}
		for _, d := range res.Diagnostics {
			if *verbose {
				fmt.Fprintf(os.Stderr, "\n%s:%d %s %s\n", d.Path, d.Start.Line, d.Rule.ID, d.Message)
			}
			flagged[d.Path] = true
			st.findings++
			if d.Fix != nil {
				st.fixable++
			}
		}
		st.flagged += len(flagged)
		if len(flagged) == 0 {
			continue
		}
		opts := patcher.Options{Paths: files, Config: cfg, UnsafeFixes: true, MaxFileSize: -1}
		fr, err := patcher.Fix(opts)
		if err != nil {
			fmt.Fprintf(os.Stderr, "\nfixtree: %s: fix: %v\n", dir, err)
			os.Exit(2)
		}
		if !fr.Converged {
			st.notConverged = append(st.notConverged, dir)
		}
		for _, f := range fr.Files {
			st.skipped += len(f.Skipped)
			if !f.Changed() {
				continue
			}
			st.changed++
			st.applied += len(f.Applied)
			if guard.ParseOK(f.Original) && !guard.ParseOK(f.Fixed) {
				st.parseBroken = append(st.parseBroken, f.Path)
			}
			// py_compile both, in the mirror, under the file's own name.
			orig := filepath.Join(mirror, "orig", f.Path)
			fixed := filepath.Join(mirror, "fixed", f.Path)
			for p, b := range map[string][]byte{orig: f.Original, fixed: f.Fixed} {
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, b, 0o644)
			}
			if compiles(orig) {
				st.pyCompiled++
				if !compiles(fixed) {
					st.compileBroken = append(st.compileBroken, f.Path)
				}
			}
		}
	}
	if tty {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
	mode := "default configuration"
	if *stress {
		mode = "stress configuration (every function captured, every call a kernel, ALL rules, unsafe fixes)"
	}
	fmt.Printf("fixtree: %s, %s, %d cores, %s\n", strings.Join(roots, " "), mode, runtime.NumCPU(), time.Since(start).Round(time.Second))
	fmt.Printf("  folders %d, files %d, file errors %d\n", st.folders, st.files, st.errors)
	for _, l := range st.errorLines {
		fmt.Println("    " + l)
	}
	fmt.Printf("  flagged files %d, findings %d (with a fix %d)\n", st.flagged, st.findings, st.fixable)
	fmt.Printf("  fixed files %d, fixes applied %d, fixes refused %d\n", st.changed, st.applied, st.skipped)
	fmt.Printf("  fixed files that parsed before and not after: %d\n", len(st.parseBroken))
	fmt.Printf("  fixed files that py_compiled before (%d) and not after: %d\n", st.pyCompiled, len(st.compileBroken))
	fmt.Printf("  folders whose fixes did not converge in %d rounds: %d\n", patcher.DefaultMaxRounds, len(st.notConverged))
	for _, p := range append(st.parseBroken, st.compileBroken...) {
		fmt.Println("  BROKEN", p)
	}
	if len(st.parseBroken)+len(st.compileBroken) > 0 {
		os.Exit(1)
	}
}

func compiles(path string) bool {
	cmd := exec.Command("python3", "-c", "import sys, py_compile; py_compile.compile(sys.argv[1], cfile=sys.argv[1]+'c', doraise=True)", path)
	var out bytes.Buffer
	cmd.Stderr = &out
	return cmd.Run() == nil
}
