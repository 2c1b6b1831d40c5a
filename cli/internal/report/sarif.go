package report

import (
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/cudagraph-capguard/capguard/guard"
)

// sarifURI turns a path into a URI reference relative to root (the
// repository's root), percent-escaped; a path outside root becomes an
// absolute file URI. rel reports which.
func sarifURI(root, p string) (uri string, rel bool) {
	r, ok := relPath(root, p)
	parts := strings.Split(r, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	if !ok {
		return "file://" + strings.Join(parts, "/"), false
	}
	return strings.Join(parts, "/"), true
}

// utf16Column converts a 1-based byte column of a line to SARIF's default
// column unit, UTF-16 code units (1-based).
func utf16Column(line string, byteCol int) int {
	if byteCol < 1 {
		return 1
	}
	n := 0
	for i, r := range line {
		if i >= byteCol-1 {
			break
		}
		if r == utf8.RuneError {
			n++
			continue
		}
		n += len(utf16.Encode([]rune{r}))
	}
	if byteCol-1 > len(line) {
		n += byteCol - 1 - len(line)
	}
	return n + 1
}

// sarifRegion is a finding's region in UTF-16 columns (when its source is
// at hand; else the byte columns, the same for ASCII lines).
func sarifRegion(src []byte, d *guard.Diagnostic) *sarif.Region {
	sc, ec := d.Start.Column, d.End.Column
	if src != nil && d.End.Offset <= len(src) {
		if l, start, ok := lineAt(src, d.Start.Line); ok && d.Start.Offset >= start {
			sc = utf16Column(l, d.Start.Offset-start+1)
		}
		if l, start, ok := lineAt(src, d.End.Line); ok && d.End.Offset >= start {
			ec = utf16Column(l, d.End.Offset-start+1)
		}
	}
	return sarif.NewRegion().WithStartLine(d.Start.Line).WithStartColumn(sc).
		WithEndLine(d.End.Line).WithEndColumn(ec)
}

// firstParagraph returns the text of a rule doc's first section (under "##
// What it does"), joined into one paragraph: SARIF's full description.
func firstParagraph(doc string) string {
	var lines []string
	started := false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "## ") {
			if started {
				break
			}
			started = true
			continue
		}
		if started {
			if strings.TrimSpace(l) == "" && len(lines) > 0 {
				break
			}
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return strings.TrimSpace(strings.Join(lines, " "))
}

// SARIF writes a SARIF 2.1.0 log for GitHub code scanning: every rule with
// its short and full descriptions, help and helpUri; results with URIs
// relative to the repository root (%SRCROOT%, o.Root) and UTF-16 columns;
// file errors as tool notifications.
func SARIF(w io.Writer, res *guard.Result, o Options) error {
	rep, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	src := sourceFunc(res, o.Source)
	driver := sarif.NewVersionedDriver("capguard", o.Version).WithInformationURI(ProjectURL)
	run := sarif.NewRun(*sarif.NewTool(driver))
	run.WithColumnKind("utf16CodeUnits")
	root := o.Root
	if root == "" {
		root = "."
	}
	if abs, err := filepath.Abs(root); err == nil {
		run.WithOriginalUriBaseIds(map[string]*sarif.ArtifactLocation{
			"%SRCROOT%": sarif.NewArtifactLocation().WithUri("file://" + filepath.ToSlash(abs) + "/"),
		})
	}
	index := map[string]int{}
	for _, r := range guard.Rules() {
		index[r.ID] = len(run.Tool.Driver.Rules)
		full := firstParagraph(r.Doc)
		if full == "" || full == r.Summary {
			full = r.Summary + "."
		}
		run.AddRule(r.ID).
			WithName(r.Name).
			WithShortDescription(sarif.NewMultiformatMessageString(r.Summary)).
			WithFullDescription(sarif.NewMultiformatMessageString(full)).
			WithHelpURI(RuleURL(r.ID)).
			WithHelp(sarif.NewMultiformatMessageString(r.Doc).WithMarkdown(r.Doc)).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(level(r.Severity))).
			WithProperties(sarif.Properties{"tags": []string{"cuda-graphs", "correctness"}})
	}
	location := func(p string) *sarif.ArtifactLocation {
		uri, rel := sarifURI(root, p)
		loc := sarif.NewSimpleArtifactLocation(uri)
		if rel {
			loc.WithUriBaseId("%SRCROOT%")
		}
		return loc
	}
	for _, d := range res.Diagnostics {
		msg := d.Message
		if len(d.Chain) > 0 {
			msg += " (" + string(d.Context) + ": " + strings.Join(ShortChain(d.Chain), " -> ") + ")"
		}
		loc := sarif.NewPhysicalLocation().WithArtifactLocation(location(d.Path)).WithRegion(sarifRegion(src(d.Path), d))
		r := run.CreateResultForRule(d.Rule.ID).
			WithRuleIndex(index[d.Rule.ID]).
			WithLevel(level(d.Severity)).
			WithMessage(sarif.NewTextMessage(msg)).
			WithLocations([]*sarif.Location{sarif.NewLocationWithPhysicalLocation(loc)})
		props := sarif.Properties{"context": string(d.Context)}
		if len(d.Chain) > 0 {
			props["chain"] = d.Chain
			res := string(d.Resolution)
			if res == "" {
				res = string(guard.Resolved)
			}
			props["resolution"] = res
		}
		r.Properties = props
	}
	inv := run.AddInvocation(len(res.Errors) == 0)
	for _, e := range res.Errors {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			sarif.NewNotification().WithLevel("error").WithMessage(sarif.NewTextMessage(e.Path+": "+e.Message)).
				WithLocations([]*sarif.Location{sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().
					WithArtifactLocation(location(e.Path)))}))
	}
	for _, m := range res.Warnings {
		inv.ToolConfigurationNotifications = append(inv.ToolConfigurationNotifications,
			sarif.NewNotification().WithLevel("warning").WithMessage(sarif.NewTextMessage(m)))
	}
	rep.AddRun(run)
	return rep.PrettyWrite(w)
}
