package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/capguard/capguard/guard"
	"github.com/capguard/capguard/guard/report"
)

func graphCommand() *cli.Command {
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "format", Value: "text", Usage: "text (a tree from each root), json (the contract other tools read) or dot (Graphviz)"},
		&cli.StringFlag{Name: "why", Usage: "explain one function's context: the chain that makes it captured, or what stops anything from reaching it"},
		&cli.StringFlag{Name: "capture-map", Usage: "merge a capture map recorded by `capguard trace` (`FILE`; overrides the config's capture-map)"},
	}, selectionFlags()...)
	return &cli.Command{
		Name:      "graph",
		Usage:     "print the call graph and the capture map: where each function runs, and why",
		ArgsUsage: "PATH...",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			opts, err := guardOptions(c)
			if err != nil {
				return err
			}
			opts.CaptureMap = c.String("capture-map")
			format := c.String("format")
			switch format {
			case "text", "json", "dot":
			default:
				return usageError("unknown --format %q (text, json, dot)", format)
			}
			done := func() {}
			opts.Progress, done = progress(!c.Bool("no-progress"))
			g, err := guard.BuildGraph(opts)
			done()
			if err != nil {
				return exitCode(2, err)
			}
			for _, e := range g.Errors {
				fmt.Fprintf(c.App.ErrWriter, "%s: error: %s\n", report.TextPath(e.Path), e.Message)
			}
			for _, w := range g.Warnings {
				fmt.Fprintf(c.App.ErrWriter, "capguard: warning: %s\n", w)
			}
			if why := c.String("why"); why != "" {
				if err := report.Why(c.App.Writer, g, why); err != nil {
					return exitCode(2, err)
				}
				return nil
			}
			if err := report.WriteGraph(c.App.Writer, format, g); err != nil {
				return exitCode(2, err)
			}
			for _, e := range g.Errors {
				if !e.Syntax {
					return exitCode(2, nil)
				}
			}
			return nil
		},
	}
}
