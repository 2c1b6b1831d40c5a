// Command capguard finds, fixes and proves the absence of CUDA-graph capture
// hazards in inference code.
//
//	capguard check PATH...      report hazards in Python (PyTorch + Triton) code
//	capguard fix PATH...        print (or --write) the fixes as a unified diff
//	capguard rule ID|--all      print a rule's documentation
//	capguard selftest           run the runtime checker's planted cases on a GPU (or the simulator)
//	capguard verify TARGET      prove a Python reader capture-safe on the GPU
//	capguard trace -- CMD...    record what runs under capture in a real run (the capture map)
//
// Exit codes are shared by every command: 0 clean, 1 something was found,
// 2 the command could not do its job (usage, unreadable input, no device).
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// exitError carries an exit code through urfave/cli without printing twice.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func exitCode(code int, err error) error { return &exitError{code: code, err: err} }

func usageError(format string, a ...any) error {
	return exitCode(2, fmt.Errorf(format, a...))
}

func newApp() *cli.App {
	return &cli.App{
		Name:                 "capguard",
		Usage:                "find, fix and prove CUDA-graph capture hazards",
		Version:              version,
		EnableBashCompletion: true,
		Commands: []*cli.Command{
			checkCommand(),
			fixCommand(),
			graphCommand(),
			ruleCommand(),
			selftestCommand(),
			verifyCommand(),
			traceCommand(),
		},
		// Without a command: the help. With an unknown one: say so (urfave/cli
		// would look for a help topic and exit 3).
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("unknown command %q (commands: check, fix, graph, rule, selftest, trace, verify; see capguard --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return usageError("%v (see capguard %s --help)", err, c.Command.Name)
		},
	}
}

func main() {
	tuneGC()
	os.Exit(run(os.Args))
}

// tuneGC trades memory for time: the analysis allocates its whole graph
// once and frees little until it ends, so collecting at every doubling of
// the heap (Go's default) mostly re-marks live data. Collect at 4x, with
// a soft limit of a quarter of the machine's memory (at least 2 GiB) that
// brings the default pace back before memory runs short. GOGC and
// GOMEMLIMIT in the environment win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		limit := int64(2 << 30)
		if total := physicalMemory(); total/4 > limit {
			limit = total / 4
		}
		debug.SetMemoryLimit(limit)
	}
}

// physicalMemory is the machine's memory in bytes (0 when unknown).
func physicalMemory() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	var kb int64
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "MemTotal:") {
			fmt.Sscanf(strings.TrimPrefix(line, "MemTotal:"), "%d", &kb)
		}
	}
	return kb << 10
}

func run(args []string) int {
	code, msg := exitStatus(newApp().Run(args))
	if msg != "" {
		fmt.Fprintln(os.Stderr, "capguard:", msg)
	}
	return code
}

// exitStatus is the exit code of the app's error and the message to print
// ("" when there is none, or it was printed already).
func exitStatus(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, ee.Error()
	}
	return 2, err.Error()
}
