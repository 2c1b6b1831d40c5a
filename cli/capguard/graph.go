package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/cli/internal/report"
	"github.com/cudagraph-capguard/capguard/guard"
)

func graphCommand() *cli.Command {
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "format", Value: "text", Usage: "text (a tree from each root), json (the contract other tools read), dot (Graphviz) or html (one self-contained page: the capture map with its findings)"},
		&cli.StringSliceFlag{Name: "root", Usage: "dot: draw what these functions (names or name suffixes) call, --depth hops deep"},
		&cli.IntFlag{Name: "depth", Value: 0, Usage: "dot with --root: hops from the roots (0: no limit)"},
		&cli.BoolFlag{Name: "all", Usage: "dot: every function, eager ones too (the default draws the functions in a capture context and the roots)"},
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
			case "text", "json", "dot", "html":
			default:
				return usageError("unknown --format %q%s (text, json, dot, html)", format, didYouMean(format, []string{"text", "json", "dot", "html"}, ""))
			}
			if format != "dot" && (c.IsSet("root") || c.IsSet("depth") || c.Bool("all")) {
				return usageError("--root, --depth and --all shape --format dot")
			}
			ctxs, err := contextSet(c)
			if err != nil {
				return err
			}
			if ctxs != nil && format != "html" {
				return usageError("--context selects the findings --format html shows")
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
			switch format {
			case "html":
				// The findings, from the same inputs (a second analysis).
				res, err := guard.Run(opts)
				if err != nil {
					return exitCode(2, err)
				}
				filterContexts(res, ctxs)
				if err := report.GraphHTML(c.App.Writer, g, res, versionString()); err != nil {
					return exitCode(2, err)
				}
			case "dot":
				sub, err := dotSubgraph(g, c.StringSlice("root"), c.Int("depth"), c.Bool("all"))
				if err != nil {
					return err
				}
				if err := report.WriteGraph(c.App.Writer, format, sub); err != nil {
					return exitCode(2, err)
				}
			default:
				if err := report.WriteGraph(c.App.Writer, format, g); err != nil {
					return exitCode(2, err)
				}
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

// dotSubgraph is the part of g that --format dot draws: with roots, what
// the functions named (a name or a suffix of one) call, depth hops deep
// (0: no limit); else, unless all, the functions in a capture context and
// the first functions of their chains. Edges to functions left out go.
func dotSubgraph(g *guard.GraphResult, roots []string, depth int, all bool) (*guard.GraphResult, error) {
	if depth < 0 {
		return nil, usageError("--depth %d: give a number of hops, 0 for no limit", depth)
	}
	byName := map[string]int{}
	for i, f := range g.Functions {
		byName[f.Name] = i
	}
	keep := map[string]bool{}
	switch {
	case len(roots) > 0:
		var frontier []string
		for _, r := range splitCodes(roots) {
			n := 0
			for _, f := range g.Functions {
				if f.Name == r || strings.HasSuffix(f.Name, "."+r) {
					frontier = append(frontier, f.Name)
					keep[f.Name] = true
					n++
				}
			}
			if n == 0 {
				return nil, usageError("--root %s: no function of that name", r)
			}
		}
		for hop := 0; len(frontier) > 0 && (depth == 0 || hop < depth); hop++ {
			var next []string
			for _, name := range frontier {
				for _, callee := range g.Functions[byName[name]].Calls {
					if !keep[callee] {
						keep[callee] = true
						next = append(next, callee)
					}
				}
			}
			frontier = next
		}
	case all:
		return g, nil
	default:
		for _, f := range g.Functions {
			if f.Context != guard.Eager {
				keep[f.Name] = true
				if len(f.Chain) > 0 {
					keep[f.Chain[0]] = true
				}
			}
		}
	}
	out := *g
	out.Functions = nil
	for _, f := range g.Functions {
		if !keep[f.Name] {
			continue
		}
		var edges []guard.GraphEdge
		for _, e := range f.Edges {
			if keep[e.To] {
				edges = append(edges, e)
			}
		}
		f.Edges = edges
		out.Functions = append(out.Functions, f)
	}
	return &out, nil
}
