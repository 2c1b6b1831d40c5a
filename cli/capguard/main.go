// Command capguard finds, fixes and proves the absence of CUDA-graph capture
// hazards in inference code.
//
//	capguard check PATH...      report hazards in Python (PyTorch + Triton) code
//	capguard fix PATH...        print (or --write) the fixes as a unified diff
//	capguard rule ID|--all      print a rule's documentation
//	capguard helper [--write F] print (or write) the persistent-buffer helper module
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
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=..."; a
// binary installed with `go install ...@vX.Y.Z` reports that version.
var version = "0.1.0-dev"

// versionString is the version with the VCS revision the binary was built
// from (debug.ReadBuildInfo: go build in a git checkout records it).
func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

// pseudoVersion matches the versions the go command makes up for untagged
// commits (v0.0.0-20261201085807-4da560313e59, ...+dirty).
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}|\+dirty`)

func versionOf(bi *debug.BuildInfo) string {
	v := version
	if bi == nil {
		return v
	}
	if m := bi.Main.Version; m != "" && m != "(devel)" && !pseudoVersion.MatchString(m) && version == "0.1.0-dev" {
		v = strings.TrimPrefix(m, "v") // go install github.com/cudagraph-capguard/capguard/cli/capguard@v1.2.3
	}
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	var extra []string
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "-modified"
		}
		extra = append(extra, "rev "+rev)
	} else {
		extra = append(extra, "no VCS revision recorded")
	}
	if when != "" {
		extra = append(extra, when)
	}
	extra = append(extra, bi.GoVersion)
	return v + " (" + strings.Join(extra, ", ") + ")"
}

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
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, "capguard", c.App.Version) }
	app := &cli.App{
		Name:                 "capguard",
		Usage:                "find, fix and prove CUDA-graph capture hazards",
		Version:              versionString(),
		EnableBashCompletion: true,
		Commands: []*cli.Command{
			checkCommand(),
			fixCommand(),
			graphCommand(),
			serverCommand(),
			ruleCommand(),
			helperCommand(),
			selftestCommand(),
			verifyCommand(),
			traceCommand(),
		},
		// Without a command: a usage error (exit 2), as ruff does. With an
		// unknown one: say so (urfave/cli would look for a help topic and
		// exit 3).
		Action: func(c *cli.Context) error {
			names := strings.Join(visibleCommands(c.App), ", ")
			if c.NArg() > 0 {
				bad := c.Args().First()
				return usageError("unknown command %q%s (commands: %s; see capguard --help)", bad, didYouMean(bad, commandNames(c.App), ""), names)
			}
			return usageError("no command given (commands: %s; see capguard --help)", names)
		},
		OnUsageError: onUsageError,
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = onUsageError
	}
	return app
}

func visibleCommands(app *cli.App) []string {
	var out []string
	for _, c := range app.Commands {
		if !c.Hidden && c.Name != "help" {
			out = append(out, c.Name)
		}
	}
	return out
}

func main() {
	tuneGC()
	stop := startProfiles()
	code := run(os.Args)
	stop()
	os.Exit(code)
}

// startProfiles writes a CPU profile to $CAPGUARD_CPUPROFILE and a heap
// profile (of the run's allocations) to $CAPGUARD_MEMPROFILE, for `go tool
// pprof`; the returned function ends them.
func startProfiles() func() {
	var stops []func()
	if path := os.Getenv("CAPGUARD_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv("CAPGUARD_MEMPROFILE"); path != "" {
		runtime.MemProfileRate = 64 << 10
		stops = append(stops, func() {
			runtime.GC() // the profile holds the allocations up to the last collection
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
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
	code, msg := exitStatus(runArgs(newApp(), args))
	if msg != "" {
		fmt.Fprintln(os.Stderr, "capguard:", msg)
	}
	return code
}

// runArgs runs the app on args, with each command's flags allowed after
// its paths.
func runArgs(app *cli.App, args []string) error {
	return app.Run(reorderArgs(app, args))
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
