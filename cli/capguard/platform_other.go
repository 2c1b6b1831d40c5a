//go:build !unix

package main

import (
	"os"
	"syscall"
)

// terminalColumns is 0 (unknown) where there is no TIOCGWINSZ: the width
// comes from $COLUMNS, else 100.
func terminalColumns(f *os.File) int { return 0 }

// forwardedSignals are the signals `capguard trace` passes on to the
// command it runs (Windows has no SIGUSR1, SIGUSR2).
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}
