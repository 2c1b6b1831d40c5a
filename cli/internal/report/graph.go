package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard"
)

// GraphFormats lists capguard graph's output formats.
var GraphFormats = []string{"text", "json", "dot"}

// WriteGraph renders a call graph and capture map.
func WriteGraph(w io.Writer, format string, g *guard.GraphResult) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(g)
	case "dot":
		return graphDot(w, g)
	case "text":
		return graphText(w, g)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(GraphFormats, ", "))
}

// graphText prints, for each context, a tree from each root to the
// functions that run there, each hop with its edge kind where it is not
// resolved; then a count of the eager functions.
func graphText(w io.Writer, g *guard.GraphResult) error {
	type trie struct {
		name string
		kind guard.EdgeKind
		kids []*trie
		at   map[string]*trie
		line string
	}
	byName := map[string]guard.GraphFunction{}
	for _, f := range g.Functions {
		byName[f.Name] = f
	}
	counts := map[guard.Context]int{}
	for _, ctx := range []guard.Context{guard.Captured, guard.ReplayPrep, guard.PostCapture, guard.Claimed, guard.Launcher} {
		root := &trie{at: map[string]*trie{}}
		n := 0
		for _, f := range g.Functions {
			if f.Context != ctx || len(f.Chain) == 0 {
				continue
			}
			n++
			t := root
			for i, name := range f.Chain {
				k, ok := t.at[name]
				if !ok {
					k = &trie{name: name, at: map[string]*trie{}}
					if i > 0 && i-1 < len(f.ChainKinds) {
						k.kind = f.ChainKinds[i-1]
					}
					if i == 0 {
						k.line = f.Root
					}
					t.at[name] = k
					t.kids = append(t.kids, k)
				}
				t = k
			}
		}
		counts[ctx] = n
		if n == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d functions):\n", ctx, n)
		var show func(t *trie, depth int)
		show = func(t *trie, depth int) {
			sort.SliceStable(t.kids, func(i, j int) bool { return t.kids[i].name < t.kids[j].name })
			for _, k := range t.kids {
				note := ""
				if k.kind != "" && k.kind != guard.Resolved {
					note = " [" + string(k.kind) + "]"
				}
				if depth == 0 && k.line != "" {
					note += "  (" + k.line + ")"
				}
				loc := ""
				if f, ok := byName[k.name]; ok {
					loc = fmt.Sprintf("  %s:%d", TextPath(f.Path), f.Line)
					if c := f.Coverage; c != nil && c.Lines > 0 {
						n := c.Captured
						if ctx == guard.ReplayPrep {
							n = c.ReplayPrep
						}
						loc += fmt.Sprintf("  [lines run: %d/%d, %d%%]", n, c.Lines, 100*n/c.Lines)
					}
				}
				fmt.Fprintf(w, "%s%s%s%s\n", strings.Repeat("  ", depth+1), k.name, note, loc)
				show(k, depth+1)
			}
		}
		show(root, 0)
	}
	eager := 0
	for _, f := range g.Functions {
		if f.Context == guard.Eager {
			eager++
		}
	}
	fmt.Fprintf(w, "%d functions: %d captured, %d replay-prep, %d post-capture, %d claimed, %d launcher, %d eager; %d calls dropped (capguard graph --why FUNC says why).\n",
		len(g.Functions), counts[guard.Captured], counts[guard.ReplayPrep], counts[guard.PostCapture], counts[guard.Claimed],
		counts[guard.Launcher], eager, len(g.Dropped))
	return nil
}

var dotColour = map[guard.Context]string{guard.Captured: "tomato", guard.ReplayPrep: "gold", guard.PostCapture: "orange",
	guard.Claimed: "plum", guard.Launcher: "lightblue", guard.Eager: "white"}

// graphDot writes Graphviz: nodes coloured by context, edges dashed unless
// resolved (or traced).
func graphDot(w io.Writer, g *guard.GraphResult) error {
	fmt.Fprintln(w, "digraph capguard {")
	fmt.Fprintln(w, "  node [shape=box, style=filled, fontname=\"monospace\"];")
	for _, f := range g.Functions {
		fmt.Fprintf(w, "  %q [fillcolor=%s, tooltip=%q];\n", f.Name, dotColour[f.Context], fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Context))
	}
	for _, f := range g.Functions {
		seen := map[string]bool{}
		for _, e := range f.Edges {
			if seen[e.To] {
				continue
			}
			seen[e.To] = true
			style := ""
			if e.Kind != guard.Resolved && e.Kind != guard.Traced {
				style = fmt.Sprintf(" [style=dashed, label=%q]", string(e.Kind))
			}
			fmt.Fprintf(w, "  %q -> %q%s;\n", f.Name, e.To, style)
		}
	}
	fmt.Fprintln(w, "}")
	return nil
}

// Why explains a function's context: the chain that makes it run where it
// runs, hop by hop with each edge's kind; or, for an eager function, its
// callers and the dropped calls that could have reached it.
func Why(w io.Writer, g *guard.GraphResult, name string) error {
	var hits []guard.GraphFunction
	for _, f := range g.Functions {
		if f.Name == name || strings.HasSuffix(f.Name, "."+name) {
			hits = append(hits, f)
		}
	}
	if len(hits) == 0 {
		return fmt.Errorf("no function %q in the graph (names are dotted module paths plus the qualified name, as capguard graph prints them)", name)
	}
	byName := map[string]guard.GraphFunction{}
	for _, f := range g.Functions {
		byName[f.Name] = f
	}
	for i, f := range hits {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s (%s:%d) is %s", f.Name, TextPath(f.Path), f.Line, f.Context)
		if len(f.Contexts) > 1 {
			fmt.Fprintf(w, " (also %v)", f.Contexts[1:])
		}
		fmt.Fprintln(w)
		if f.Context != guard.Eager {
			fmt.Fprintf(w, "  root: %s", f.Chain[0])
			if f.Root != "" {
				fmt.Fprintf(w, " (%s)", f.Root)
			}
			fmt.Fprintln(w)
			for j := 1; j < len(f.Chain); j++ {
				k := guard.Resolved
				if j-1 < len(f.ChainKinds) {
					k = f.ChainKinds[j-1]
				}
				fmt.Fprintf(w, "  -> %s  [%s]\n", f.Chain[j], k)
			}
			fmt.Fprintf(w, "  weakest edge: %s\n", f.Resolution)
			if f.Assumes != "" {
				fmt.Fprintf(w, "  %s\n", f.Assumes)
			}
			if f.Condition != "" {
				fmt.Fprintf(w, "  only if %s\n", f.Condition)
			}
			continue
		}
		var callers []string
		inContext := false
		for _, c := range g.Functions {
			for _, e := range c.Edges {
				if e.To == f.Name {
					callers = append(callers, fmt.Sprintf("%s (%s, line %d, %s)", c.Name, c.Context, e.Line, e.Kind))
					inContext = inContext || c.Context != guard.Eager
					break
				}
			}
		}
		if len(callers) == 0 {
			fmt.Fprintln(w, "  nothing in the project calls it")
		} else {
			fmt.Fprintln(w, "  called by (no call of these carries a context into it):")
			for _, c := range callers {
				fmt.Fprintln(w, "    "+c)
			}
			if inContext {
				fmt.Fprintln(w, "  a caller that runs in a context does not pass it on here: its call is left out in that context (under a capture guard, switched off by a constant argument, set-up a warm-up ran), or runs this function only for receivers that the caller's chain is not on (an override or a field of another subclass)")
			}
		}
		short := f.Name[strings.LastIndexByte(f.Name, '.')+1:]
		var drops []guard.GraphDrop
		for _, d := range g.Dropped {
			if strings.HasSuffix(d.Call, "."+short) || d.Call == short {
				drops = append(drops, d)
			}
		}
		if len(drops) > 0 {
			fmt.Fprintf(w, "  calls of `%s` that were dropped:\n", short)
			for _, d := range drops {
				ctx := ""
				if c, ok := byName[d.Caller]; ok && c.Context != guard.Eager {
					ctx = " [" + string(c.Context) + "]"
				}
				fmt.Fprintf(w, "    %s:%d in %s%s: `%s`: %s\n", TextPath(d.Path), d.Line, d.Caller, ctx, d.Call, d.Reason)
			}
		}
	}
	return nil
}
