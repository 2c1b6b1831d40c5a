package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// editDistance is the optimal string alignment distance of two short
// strings: insertions, deletions, substitutions and swaps of neighbours
// ("wirte" is one from "write").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// suggest returns the candidate closest to word, or "" when none is close
// (an edit distance of at most a third of the word, and at least 1 allowed;
// a candidate that starts with the word counts as close).
func suggest(word string, candidates []string) string {
	w := strings.ToLower(word)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := editDistance(w, strings.ToLower(c))
		if strings.HasPrefix(strings.ToLower(c), w) && len(w) >= 3 {
			d = min(d, 1)
		}
		if d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, len([]rune(word))/3) {
		return ""
	}
	return best
}

// didYouMean is " (did you mean X?)" for the closest candidate, or "".
func didYouMean(word string, candidates []string, prefix string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %s%s?)", prefix, s)
	}
	return ""
}

// flagNames lists a command's flag names (aliases included), or the app's
// global flags when cmd is nil.
func flagNames(app *cli.App, cmd *cli.Command) []string {
	flags := app.Flags
	if cmd != nil {
		flags = cmd.Flags
	}
	var out []string
	for _, f := range flags {
		out = append(out, f.Names()...)
	}
	out = append(out, "help")
	sort.Strings(out)
	return out
}

func commandNames(app *cli.App) []string {
	var out []string
	for _, c := range app.Commands {
		out = append(out, c.Names()...)
	}
	return out
}

// onUsageError turns urfave/cli's flag errors into one usage line with a
// suggestion: "unknown flag --exit-zer (did you mean --exit-zero?)".
func onUsageError(c *cli.Context, err error, _ bool) error {
	msg := err.Error()
	name := "capguard"
	var cmd *cli.Command
	if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
		cmd = c.Command
		name += " " + cmd.Name
	}
	if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		bad = strings.TrimLeft(bad, "-")
		switch {
		case cmd != nil && cmd.Name == "check" && (bad == "fix" || bad == "diff" || bad == "write" || bad == "w"):
			// ruff's check --fix and --diff are capguard fix's job.
			msg = fmt.Sprintf("unknown flag %s: capguard check only reports; run `capguard fix` to print the fixes as a diff, `capguard fix --write` to apply them", dashed(bad))
		case len([]rune(bad)) == 1:
			// One letter is too short to guess from: name the short flags.
			var short []string
			for _, n := range flagNames(c.App, cmd) {
				if len([]rune(n)) == 1 {
					short = append(short, "-"+n)
				}
			}
			msg = fmt.Sprintf("unknown flag -%s (short flags: %s)", bad, strings.Join(short, ", "))
		default:
			var long []string
			for _, n := range flagNames(c.App, cmd) {
				if len([]rune(n)) > 1 {
					long = append(long, n)
				}
			}
			msg = fmt.Sprintf("unknown flag --%s%s", bad, didYouMean(bad, long, "--"))
		}
	}
	return usageError("%s (see %s --help)", oneLine(msg), name)
}

// dashed spells a flag name as typed: -w, --fix.
func dashed(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

// oneLine keeps a message on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// reorderArgs moves a command's flags before its paths, so that `capguard
// check . --statistics` works as in ruff (urfave/cli stops at the first
// argument that is not a flag). A "--" ends the flags as usual; a flag that
// takes a value keeps it.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 3 {
		return args
	}
	// Find the command: the first argument that is not a global flag.
	ci := -1
	for i := 1; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			ci = i
			break
		}
	}
	if ci < 0 {
		return args
	}
	cmd := app.Command(args[ci])
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	known := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			known[n] = true
			takesValue[n] = !isBool
		}
	}
	var flags, rest []string
	tail := args[ci+1:]
	for i := 0; i < len(tail); i++ {
		a := tail[i]
		switch {
		case a == "--":
			rest = append(rest, tail[i:]...)
			i = len(tail)
		case a == "-" || !strings.HasPrefix(a, "-"):
			rest = append(rest, a)
		default:
			flags = append(flags, a)
			n := strings.TrimLeft(a, "-")
			if strings.Contains(n, "=") {
				continue
			}
			if takesValue[n] && known[n] && i+1 < len(tail) {
				flags = append(flags, tail[i+1])
				i++
			}
		}
	}
	out := append([]string{}, args[:ci+1]...)
	out = append(out, flags...)
	return append(out, rest...)
}
