// Command serveredit measures the editor's route (capguard server) after a
// code edit: the analysis a server runs, in one process, on a folder with
// one buffer edited (guard.Options.Overlay) and the syntax trees and digests
// kept from the run before (guard.TreeCache). It runs the folder once
// (cold), then -n times with a statement inserted after line LINE of FILE,
// each time another text, and prints one line:
//
//	cold SECONDS edits MEDIAN MAX early MEDIAN peak MIB
//
// where early is when the edited file's own findings were known (the
// server publishes an open buffer's diagnostics then: guard.Options.Early).
// Only the analysis is timed: not the server's debounce, its JSON-RPC or an
// inert edit's shortcut (an edit to comments only moves the last result).
// bench/run.sh prints it as the "server code edit" row.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/cudagraph-capguard/capguard/guard"
)

func main() {
	n := flag.Int("n", 5, "edits")
	flag.Parse()
	if flag.NArg() != 3 {
		fmt.Fprintln(os.Stderr, "usage: serveredit [-n N] TREE FILE LINE")
		os.Exit(2)
	}
	tree, file := flag.Arg(0), flag.Arg(1)
	line, err := strconv.Atoi(flag.Arg(2))
	if err != nil || line < 1 {
		fmt.Fprintln(os.Stderr, "serveredit: LINE must be a line number")
		os.Exit(2)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveredit:", err)
		os.Exit(2)
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	if line > len(lines) {
		fmt.Fprintf(os.Stderr, "serveredit: %s has %d lines\n", file, len(lines))
		os.Exit(2)
	}
	abs, _ := filepath.Abs(tree)
	if err := os.Chdir(abs); err != nil {
		fmt.Fprintln(os.Stderr, "serveredit:", err)
		os.Exit(2)
	}
	rel, err := filepath.Rel(abs, mustAbs(file))
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveredit:", err)
		os.Exit(2)
	}
	trees := guard.NewTreeCache()
	var firstAt time.Duration
	run := func(overlay map[string][]byte) time.Duration {
		t0 := time.Now()
		firstAt = 0
		early := func(*guard.Result) { firstAt = time.Since(t0) }
		if _, err := guard.Run(guard.Options{Paths: []string{"."}, Overlay: overlay, Trees: trees, Digests: true, First: []string{rel}, Early: early}); err != nil {
			fmt.Fprintln(os.Stderr, "serveredit:", err)
			os.Exit(1)
		}
		return time.Since(t0)
	}
	cold := run(nil)
	var edits, firsts []time.Duration
	for i := 0; i < *n; i++ {
		var b bytes.Buffer
		for k, l := range lines {
			b.Write(l)
			if k == line-1 {
				fmt.Fprintf(&b, "    _bench_server_edit = %d\n", i)
			}
		}
		edits = append(edits, run(map[string][]byte{rel: b.Bytes()}))
		firsts = append(firsts, firstAt)
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i] < edits[j] })
	sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("cold %.2f edits %.2f %.2f early %.2f peak %d\n", cold.Seconds(), median(edits).Seconds(), edits[len(edits)-1].Seconds(),
		median(firsts).Seconds(), ru.Maxrss/1024)
}

func median(d []time.Duration) time.Duration {
	if len(d)%2 == 1 {
		return d[len(d)/2]
	}
	return (d[len(d)/2-1] + d[len(d)/2]) / 2
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
