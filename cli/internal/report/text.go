package report

import (
	"fmt"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"github.com/cudagraph-capguard/capguard/guard"
)

// painter writes ANSI styles when on.
type painter bool

func (p painter) style(code, s string) string {
	if !p || s == "" {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}
func (p painter) bold(s string) string  { return p.style("1", s) }
func (p painter) dim(s string) string   { return p.style("2", s) }
func (p painter) err(s string) string   { return p.style("1;31", s) }
func (p painter) warn(s string) string  { return p.style("1;33", s) }
func (p painter) blue(s string) string  { return p.style("1;34", s) }
func (p painter) cyan(s string) string  { return p.style("36", s) }
func (p painter) green(s string) string { return p.style("32", s) }
func (p painter) sev(s guard.Severity, text string) string {
	if s == guard.SeverityError {
		return p.err(text)
	}
	return p.warn(text)
}

// link makes text an OSC 8 hyperlink to url (terminals that know it show
// a link; others show the text).
func (p painter) link(url, text string) string {
	if !p {
		return text
	}
	return "\033]8;;" + url + "\033\\" + text + "\033]8;;\033\\"
}

// header is a finding's first line: `path:line:col: CG301 [*] message`.
func header(p painter, d *guard.Diagnostic, unsafe bool) (string, string) {
	mark := ""
	if Fixable(d, unsafe) {
		mark = p.cyan("[*]") + " "
	}
	loc := fmt.Sprintf("%s:%d:%d:", TextPath(d.Path), d.Start.Line, d.Start.Column)
	return p.bold(loc) + " " + p.sev(d.Severity, p.link(RuleURL(d.Rule.ID), d.Rule.ID)) + " " + mark,
		d.Message
}

// Concise writes one line per finding, then the summary.
func Concise(w io.Writer, res *guard.Result, o Options) error {
	p := painter(o.Color)
	for _, d := range res.Diagnostics {
		head, msg := header(p, d, o.UnsafeFixes)
		fmt.Fprintln(w, head+msg)
	}
	if !o.Quiet {
		Summary(w, res, o)
	}
	return nil
}

// Full writes each finding with its source line, a caret under the span,
// its severity, its context and short call chain, its fix and its rule's
// page, then the summary.
func Full(w io.Writer, res *guard.Result, o Options) error {
	p := painter(o.Color)
	width := o.Width
	if width <= 0 {
		width = 100
	}
	if o.Source == nil {
		o.Source = sourceFunc(res, nil)
	}
	for i, d := range res.Diagnostics {
		if i > 0 {
			fmt.Fprintln(w)
		}
		head, msg := header(p, d, o.UnsafeFixes)
		plainHead, _ := header(false, d, o.UnsafeFixes)
		writeWrapped(w, head, utf8.RuneCountInString(plainHead), msg, width, "    ")
		src := o.Source(d.Path)
		gutter := len(fmt.Sprint(d.Start.Line))
		pad := strings.Repeat(" ", gutter)
		if line, start, ok := lineAt(src, d.Start.Line); ok {
			from := d.Start.Offset - start
			to := len(line)
			if d.End.Line == d.Start.Line {
				to = d.End.Offset - start
			}
			shown, c0, c1 := displayLine(line, from, to, width-gutter-3)
			fmt.Fprintf(w, "%s %s\n", pad, p.blue("|"))
			fmt.Fprintf(w, "%s %s %s\n", p.blue(fmt.Sprint(d.Start.Line)), p.blue("|"), shown)
			carets := strings.Repeat("^", max(c1-c0, 1))
			if d.End.Line > d.Start.Line {
				carets += "..."
			}
			label := string(d.Severity) + ": " + d.Rule.Name
			if gutter+3+c0+len(carets)+1+len(label) <= width {
				fmt.Fprintf(w, "%s %s %s%s %s\n", pad, p.blue("|"), strings.Repeat(" ", c0),
					p.sev(d.Severity, carets), p.sev(d.Severity, label))
			} else { // the label under the carets' start, or at the left when that is too far
				fmt.Fprintf(w, "%s %s %s%s\n", pad, p.blue("|"), strings.Repeat(" ", c0), p.sev(d.Severity, carets))
				at := c0
				if gutter+3+at+len(label) > width {
					at = 0
				}
				fmt.Fprintf(w, "%s %s %s%s\n", pad, p.blue("|"), strings.Repeat(" ", at), p.sev(d.Severity, label))
			}
			fmt.Fprintf(w, "%s %s\n", pad, p.blue("|"))
		} else {
			fmt.Fprintf(w, "%s %s %s\n", pad, p.blue("="), p.sev(d.Severity, string(d.Severity)+": "+d.Rule.Name))
		}
		if len(d.Chain) > 0 {
			ctx := string(d.Context)
			if r := d.Resolution; r != "" && r != guard.Resolved && r != guard.Traced {
				ctx += " (" + resolutionNote(r) + ")"
			}
			if d.Condition != "" {
				ctx += " (only if " + d.Condition + ")"
			}
			label := fmt.Sprintf("%s %s %s: ", pad, p.blue("="), p.bold(ctx))
			plain := fmt.Sprintf("%s = %s: ", pad, ctx)
			writeChain(w, label, utf8.RuneCountInString(plain), ShortChain(d.Chain), width, pad+"     ")
		}
		if d.Fix != nil {
			what := "fix"
			switch {
			case d.Fix.Applicability == guard.Unsafe && !o.UnsafeFixes:
				what = "unsafe fix (--unsafe-fixes)"
			case d.Fix.Applicability == guard.Unsafe:
				what = "unsafe fix"
			case d.Fix.Applicability == guard.DisplayOnly:
				what = "suggestion (not applied automatically)"
			}
			label := fmt.Sprintf("%s %s %s: ", pad, p.blue("="), p.green(what))
			plain := fmt.Sprintf("%s = %s: ", pad, what)
			writeWrapped(w, label, utf8.RuneCountInString(plain), d.Fix.Message, width, pad+"     ")
			if o.ShowFixes {
				writeFixDiff(w, p, d, src, pad)
			}
		}
		fmt.Fprintf(w, "%s %s %s %s\n", pad, p.blue("="), p.bold("docs:"), p.dim(RuleURL(d.Rule.ID)))
	}
	if !o.Quiet {
		if len(res.Diagnostics) > 0 {
			fmt.Fprintln(w)
		}
		Summary(w, res, o)
	}
	return nil
}

func resolutionNote(r guard.EdgeKind) string {
	switch r {
	case guard.Annotated:
		return "through a declared type"
	case guard.Hierarchy:
		return "through a class hierarchy: an override may run instead"
	case guard.ByName:
		return "through a call matched by method name only"
	}
	return "resolution: " + string(r)
}

// displayLine prepares a source line for showing: tabs as four spaces,
// and a window of at most max columns around [from, to) (byte offsets in
// line). It returns the text and the caret's start and end columns.
// Columns are terminal cells (go-runewidth): a CJK character or an emoji
// takes two, a combining mark none, so the carets stand under the span
// after wide characters too.
func displayLine(line string, from, to, maxCols int) (string, int, int) {
	from = min(max(from, 0), len(line))
	to = min(max(to, from), len(line))
	type cell struct {
		s   string
		w   int // cells
		off int // byte offset in line
	}
	var cells []cell
	for i, r := range line {
		if r == '\t' {
			cells = append(cells, cell{"    ", 4, i})
		} else {
			cells = append(cells, cell{string(r), runewidth.RuneWidth(r), i})
		}
	}
	for len(cells) > 0 && cells[len(cells)-1].s == " " || len(cells) > 0 && cells[len(cells)-1].s == "    " {
		cells = cells[:len(cells)-1]
	}
	colAt := func(off int) int {
		c := 0
		for _, x := range cells {
			if x.off >= off {
				break
			}
			c += x.w
		}
		return c
	}
	total := 0
	var b strings.Builder
	for _, x := range cells {
		total += x.w
		b.WriteString(x.s)
	}
	c0, c1 := colAt(from), colAt(to)
	if maxCols < 20 {
		maxCols = 20
	}
	if total <= maxCols {
		return b.String(), c0, max(c1, c0+1)
	}
	// A window: start a little before the span, cut at maxCols cells.
	want := max(0, c0-10)
	var out strings.Builder
	col, start, used := 0, -1, 0
	cut := false
	for _, x := range cells {
		if start < 0 {
			if col < want {
				col += x.w
				continue
			}
			start = col
		}
		if used+x.w > maxCols-2 {
			cut = true
			break
		}
		out.WriteString(x.s)
		used += x.w
	}
	if start < 0 {
		start = col
	}
	text := out.String()
	shift := 0
	if start > 0 {
		text = "…" + text
		shift = 1
	}
	if cut {
		text += "…"
	}
	if c1-start > used {
		c1 = start + used
	}
	return text, c0 - start + shift, max(c1-start+shift, c0-start+shift+1)
}

// writeWrapped writes head (whose visible width is headWidth) and text
// wrapped at width, continuation lines indented.
func writeWrapped(w io.Writer, head string, headWidth int, text string, width int, indent string) {
	words := strings.Fields(text)
	line := head
	used := headWidth
	first := true
	for _, word := range words {
		n := utf8.RuneCountInString(word)
		if !first && used+1+n > width {
			fmt.Fprintln(w, strings.TrimRight(line, " "))
			line, used, first = indent, len(indent), true
		}
		if !first {
			line += " "
			used++
		}
		line += word
		used += n
		first = false
	}
	fmt.Fprintln(w, line)
}

// writeChain writes a chain's hops joined by " -> ", wrapped between hops.
func writeChain(w io.Writer, head string, headWidth int, hops []string, width int, indent string) {
	line, used := head, headWidth
	for i, h := range hops {
		part := TextPath(h)
		if i > 0 {
			part = "-> " + part
		}
		n := utf8.RuneCountInString(part)
		if (i > 0 || used > len(indent)) && used+1+n > width {
			fmt.Fprintln(w, strings.TrimRight(line, " "))
			line, used = indent, len(indent)
		} else if i > 0 {
			line += " "
			used++
		}
		line += part
		used += n
	}
	fmt.Fprintln(w, line)
}

// writeFixDiff shows the lines a fix edits, before and after.
func writeFixDiff(w io.Writer, p painter, d *guard.Diagnostic, src []byte, pad string) {
	if src == nil || len(d.Fix.Edits) == 0 {
		return
	}
	edits := append([]guard.TextEdit(nil), d.Fix.Edits...)
	sort.Slice(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	for _, e := range edits {
		if e.Start < 0 || e.End > len(src) || e.Start > e.End {
			return
		}
	}
	// Group edits by the lines they touch.
	lineStart := func(off int) int {
		for off > 0 && src[off-1] != '\n' {
			off--
		}
		return off
	}
	lineEnd := func(off int) int {
		for off < len(src) && src[off] != '\n' {
			off++
		}
		return off
	}
	for i := 0; i < len(edits); {
		a, b := lineStart(edits[i].Start), lineEnd(edits[i].End)
		j := i + 1
		for j < len(edits) && edits[j].Start <= b {
			b = lineEnd(edits[j].End)
			j++
		}
		var after strings.Builder
		prev := a
		for _, e := range edits[i:j] {
			after.Write(src[prev:e.Start])
			after.WriteString(e.NewText)
			prev = e.End
		}
		after.Write(src[prev:b])
		for _, l := range strings.Split(strings.ReplaceAll(string(src[a:b]), "\r", ""), "\n") {
			fmt.Fprintf(w, "%s   %s\n", pad, p.err("- "+strings.ReplaceAll(l, "\t", "    ")))
		}
		for _, l := range strings.Split(strings.TrimSuffix(strings.ReplaceAll(after.String(), "\r", ""), "\n"), "\n") {
			fmt.Fprintf(w, "%s   %s\n", pad, p.green("+ "+strings.ReplaceAll(l, "\t", "    ")))
		}
		i = j
	}
	if d.Fix.NeedsHelper {
		fmt.Fprintf(w, "%s   %s\n", pad, p.dim("(and the persistent_buffer helper, once per file)"))
	}
}

// Summary writes the closing lines of the text formats: findings, the
// files they are in and the files checked; what `capguard fix` would fix
// and what --unsafe-fixes would add; file errors.
func Summary(w io.Writer, res *guard.Result, o Options) {
	p := painter(o.Color)
	c := Count(res, o.UnsafeFixes)
	var b strings.Builder
	if c.Findings == 0 {
		fmt.Fprintf(&b, "No capture hazards in %s checked", plural(c.Checked, "file"))
	} else {
		fmt.Fprintf(&b, "Found %s in %s (%s checked)", plural(c.Findings, "finding"), plural(c.FilesWith, "file"), plural(c.Checked, "file"))
	}
	if c.Errors > 0 {
		fmt.Fprintf(&b, "; %s, on stderr", plural(c.Errors, "file error"))
	}
	b.WriteString(".")
	fmt.Fprintln(w, p.bold(b.String()))
	if line := PresetsLine(res.Settings); line != "" {
		fmt.Fprintln(w, line)
	}
	if c.Fixable > 0 || c.HiddenUnsafe > 0 {
		var line string
		cmd := "`capguard fix`"
		if o.UnsafeFixes {
			cmd = "`capguard fix --unsafe-fixes`"
		}
		if c.Fixable > 0 {
			line = fmt.Sprintf("%s %d fixable with %s", p.cyan("[*]"), c.Fixable, cmd)
		} else {
			line = "No fixes available"
		}
		if c.HiddenUnsafe > 0 {
			line += fmt.Sprintf(" (%s can be enabled with `--unsafe-fixes`)", plural(c.HiddenUnsafe, "hidden fix", "hidden fixes"))
		}
		fmt.Fprintln(w, line+".")
	}
}

// PresetsLine names the presets a run applied and what turned each on, in
// one line ("" when none applied).
func PresetsLine(s *guard.Settings) string {
	if s == nil || len(s.Presets) == 0 {
		return ""
	}
	var parts []string
	for _, p := range s.Presets {
		parts = append(parts, p.Name+" ("+p.Why+")")
	}
	return "Presets: " + strings.Join(parts, ", ") + " (--show-settings says what else was assumed)."
}

// ShortChain renders a call chain in module-relative names: each hop as a
// dotted name ("layers.model.TinyDecoder.forward"), with the leading
// package folders or modules that every hop shares dropped. It takes hops
// as "path/to/mod.py:Qual.name" or as dotted names ("pkg.mod.Qual.name");
// each hop keeps at least its module's last name and its qualified name.
func ShortChain(chain []string) []string {
	type hop struct {
		mod  []string // module path parts (path form) or all dotted parts
		qual string   // "" in dotted form
	}
	hops := make([]hop, len(chain))
	for i, h := range chain {
		if j := strings.LastIndex(h, ".py:"); j >= 0 {
			p := path.Clean(filepath.ToSlash(h[:j]))
			var parts []string
			for _, s := range strings.Split(p, "/") {
				if s != "" && s != "." {
					parts = append(parts, s)
				}
			}
			if n := len(parts); n > 1 && parts[n-1] == "__init__" {
				parts = parts[:n-1]
			}
			hops[i] = hop{mod: parts, qual: h[j+4:]}
		} else {
			hops[i] = hop{mod: strings.Split(h, ".")}
		}
	}
	if len(hops) == 0 {
		return nil
	}
	// The longest common prefix, leaving each hop one module part (path
	// form) or two parts (dotted form: a module and a name).
	prefix := len(hops[0].mod)
	for _, h := range hops {
		keep := 1
		if h.qual == "" {
			keep = 2
		}
		prefix = min(prefix, max(len(h.mod)-keep, 0))
	}
	for k := 0; k < prefix; k++ {
		same := true
		for _, h := range hops[1:] {
			if h.mod[k] != hops[0].mod[k] {
				same = false
				break
			}
		}
		if !same {
			prefix = k
			break
		}
	}
	out := make([]string, len(hops))
	for i, h := range hops {
		name := strings.Join(h.mod[prefix:], ".")
		if h.qual != "" {
			name += "." + h.qual
		}
		out[i] = name
	}
	return out
}

// Statistics writes the findings counted by rule, with how many a fix
// covers and the contexts they were found in, most frequent first.
func Statistics(w io.Writer, res *guard.Result, o Options) {
	for _, s := range Stats(res, o.UnsafeFixes) {
		mark := "   "
		switch {
		case s.Fixable == s.Count:
			mark = "[*]"
		case s.Fixable > 0:
			mark = "[-]"
		}
		var ctx []string
		for _, k := range sortedKeys(s.Contexts) {
			ctx = append(ctx, fmt.Sprintf("%s %d", k, s.Contexts[k]))
		}
		fmt.Fprintf(w, "%5d  %-6s %s %-32s %s\n", s.Count, s.Rule, mark, s.Name, strings.Join(ctx, ", "))
	}
}

// Stat is one rule's line of --statistics.
type Stat struct {
	Rule     string         `json:"code"`
	Name     string         `json:"name"`
	Count    int            `json:"count"`
	Fixable  int            `json:"fixable"`
	Contexts map[string]int `json:"contexts"`
	URL      string         `json:"url"`
}

// Stats counts findings by rule and context, most frequent first.
func Stats(res *guard.Result, unsafe bool) []Stat {
	by := map[string]*Stat{}
	for _, d := range res.Diagnostics {
		s := by[d.Rule.ID]
		if s == nil {
			s = &Stat{Rule: d.Rule.ID, Name: d.Rule.Name, Contexts: map[string]int{}, URL: RuleURL(d.Rule.ID)}
			by[d.Rule.ID] = s
		}
		s.Count++
		if Fixable(d, unsafe) {
			s.Fixable++
		}
		ctx := string(d.Context)
		if ctx == "" {
			ctx = "file"
		}
		s.Contexts[ctx]++
	}
	out := make([]Stat, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}
