package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/cli/internal/report"
	"github.com/cudagraph-capguard/capguard/guard"
)

// outputFlags are check's output options (fix takes --color, --quiet and
// --show-fixes too).
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output-format", Aliases: []string{"format"}, EnvVars: []string{"CAPGUARD_OUTPUT_FORMAT"},
			Usage: "output format: " + strings.Join(report.Formats, ", "), DefaultText: "full"},
		&cli.BoolFlag{Name: "statistics", Usage: "print the number of findings by rule and context instead of the findings"},
		&cli.BoolFlag{Name: "unsafe-fixes", Usage: "count unsafe fixes as fixable: [*] marks them and the summary counts them, as capguard fix --unsafe-fixes would apply them"},
	}
}

// displayFlags are the options of how text is shown, shared by check and fix.
func displayFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "color", Value: "auto", Usage: "colour the output: auto (on a terminal, unless NO_COLOR is set), always, never"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print the findings (or the diff) only: no summary"},
		&cli.BoolFlag{Name: "show-fixes", Usage: "check: show each fix's edit under its finding; fix: list the fixes applied, per file"},
	}
}

// outputFormat is the --output-format value, checked.
func outputFormat(c *cli.Context) (string, error) {
	f := c.String("output-format")
	canon, ok := report.Canonical(f)
	if !ok {
		return "", usageError("unknown --output-format %q%s (want one of %s)", f, didYouMean(f, report.Formats, ""), strings.Join(report.Formats, ", "))
	}
	return canon, nil
}

// colorOn decides whether to colour output written to w.
func colorOn(c *cli.Context, w io.Writer) (bool, error) {
	switch mode := c.String("color"); mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		if os.Getenv("NO_COLOR") != "" {
			return false, nil
		}
		if os.Getenv("FORCE_COLOR") != "" {
			return true, nil
		}
		return isTerminal(w), nil
	default:
		return false, usageError("unknown --color %q%s (want auto, always or never)", mode, didYouMean(mode, []string{"auto", "always", "never"}, ""))
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// termWidth is the width to wrap full output at: the terminal's, else
// $COLUMNS, else 100.
func termWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && isTerminal(w) {
		if cols := terminalColumns(f); cols >= 40 {
			return cols
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return 100
}

// projectRoot is the folder SARIF and GitLab paths are relative to: the
// git repository holding the first path (or the working directory), else
// the config's folder, else the working directory.
func projectRoot(paths []string, cfg *guard.Config) string {
	start := "."
	if len(paths) > 0 && paths[0] != "-" {
		start = paths[0]
	}
	abs, err := filepath.Abs(start)
	if err == nil {
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			abs = filepath.Dir(abs)
		}
		for dir := abs; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
				return dir
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	if cfg != nil && cfg.Path != "" {
		if d, err := filepath.Abs(cfg.Dir()); err == nil {
			return d
		}
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "."
}
