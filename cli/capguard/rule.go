package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/capguard/capguard/guard"
)

func ruleCommand() *cli.Command {
	return &cli.Command{
		Name:      "rule",
		Usage:     "print a rule's documentation (what it does, why it matters, example, fix)",
		ArgsUsage: "ID|NAME",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "print every rule"}},
		Action: func(c *cli.Context) error {
			w := c.App.Writer
			if c.Bool("all") {
				for i, r := range guard.Rules() {
					if i > 0 {
						fmt.Fprintln(w, "\n---")
					}
					printRule(c, r)
				}
				return nil
			}
			if c.NArg() != 1 {
				var ids []string
				for _, r := range guard.Rules() {
					ids = append(ids, r.ID)
				}
				return usageError("name one rule (%s) or use --all", strings.Join(ids, ", "))
			}
			r := guard.LookupRule(c.Args().First())
			if r == nil {
				var names []string
				for _, r := range guard.Rules() {
					names = append(names, r.ID, r.Name)
				}
				bad := c.Args().First()
				return usageError("no rule %q%s (see capguard rule --all)", bad, didYouMean(strings.ToUpper(bad), names, ""))
			}
			printRule(c, r)
			return nil
		},
	}
}

func printRule(c *cli.Context, r *guard.Rule) {
	w := c.App.Writer
	fix := "no automatic fix"
	switch r.Fix {
	case "safe":
		fix = "safe fix"
	case "unsafe":
		fix = "unsafe fix (--unsafe-fixes)"
	case "sometimes":
		fix = "fix: safe or unsafe depending on the site"
	}
	fmt.Fprintf(w, "# %s %s\n\nSeverity: %s. %s.\n\n%s\n\n%s\n", r.ID, r.Name, r.Severity, strings.ToUpper(fix[:1])+fix[1:], r.Summary, r.Doc)
}
