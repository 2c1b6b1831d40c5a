//go:build unix

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// terminalColumns is the width of the terminal f is, 0 when unknown. The
// ioctl is Unix's (output.go stays portable: Windows builds use
// platform_other.go).
func terminalColumns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// forwardedSignals are the signals `capguard trace` passes on to the
// command it runs.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}
