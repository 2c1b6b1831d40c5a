// Package report renders guard findings: text for people, JSON for tools,
// SARIF 2.1.0 for code scanning, and GitHub workflow annotations.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/capguard/capguard/guard"
	"github.com/owenrumney/go-sarif/v2/sarif"
)

// Formats lists the output formats.
var Formats = []string{"text", "json", "sarif", "github"}

// Write renders res in format to w.
func Write(w io.Writer, format string, res *guard.Result, version string) error {
	switch format {
	case "text":
		return Text(w, res)
	case "json":
		return JSON(w, res)
	case "sarif":
		return SARIF(w, res, version)
	case "github":
		return GitHub(w, res)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// TextPath is a path as text output shows it: as it is, or Go-quoted
// ("new\nline.py") when it holds a control character or bytes that are not
// UTF-8, so that one finding stays one line.
func TextPath(p string) string {
	if utf8.ValidString(p) && strings.IndexFunc(p, unicode.IsControl) < 0 {
		return p
	}
	return strconv.Quote(p)
}

// Text: `path:line:col: CG301 [*] message`, then the context and chain.
func Text(w io.Writer, res *guard.Result) error {
	fixable := 0
	for _, d := range res.Diagnostics {
		mark := ""
		if d.Fix != nil {
			mark = "[*] "
			fixable++
		}
		fmt.Fprintf(w, "%s:%d:%d: %s %s%s\n", TextPath(d.Path), d.Start.Line, d.Start.Column, d.Rule.ID, mark, d.Message)
		if len(d.Chain) > 0 {
			chain := make([]string, len(d.Chain))
			for i, c := range d.Chain {
				chain[i] = TextPath(c)
			}
			fmt.Fprintf(w, "    %s: %s\n", d.Context, strings.Join(chain, " -> "))
		}
	}
	switch n := len(res.Diagnostics); {
	case n == 0:
		fmt.Fprintf(w, "No capture hazards in %d file%s", res.Files, plural(res.Files))
	default:
		fmt.Fprintf(w, "Found %d finding%s in %d file%s", n, plural(n), res.Files, plural(res.Files))
		if fixable > 0 {
			fmt.Fprintf(w, " (%d fixable with `capguard fix`; [*] marks them)", fixable)
		}
	}
	if e := len(res.Errors); e > 0 {
		fmt.Fprintf(w, "; %d file error%s, on stderr", e, plural(e))
	}
	fmt.Fprintln(w, ".")
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// JSONFinding is one finding in the JSON document.
type JSONFinding struct {
	Rule      string   `json:"rule"`
	Name      string   `json:"name"`
	Severity  string   `json:"severity"`
	Path      string   `json:"path"`
	Line      int      `json:"line"`
	Column    int      `json:"column"`
	EndLine   int      `json:"end_line"`
	EndColumn int      `json:"end_column"`
	Message   string   `json:"message"`
	Context   string   `json:"context"`
	Function  string   `json:"function,omitempty"`
	Chain     []string `json:"chain"`
	Fix       *JSONFix `json:"fix"`
}

// JSONFix describes a fix without its edits.
type JSONFix struct {
	Applicability string `json:"applicability"`
	Message       string `json:"message"`
}

// JSONDoc is the whole JSON document.
type JSONDoc struct {
	Version  int               `json:"version"`
	Findings []JSONFinding     `json:"findings"`
	Files    int               `json:"files"`
	Errors   []guard.FileError `json:"errors"`
}

// JSON writes one document.
func JSON(w io.Writer, res *guard.Result) error {
	doc := JSONDoc{Version: 1, Findings: []JSONFinding{}, Files: res.Files, Errors: res.Errors}
	if doc.Errors == nil {
		doc.Errors = []guard.FileError{}
	}
	for _, d := range res.Diagnostics {
		f := JSONFinding{Rule: d.Rule.ID, Name: d.Rule.Name, Severity: string(d.Severity), Path: d.Path,
			Line: d.Start.Line, Column: d.Start.Column, EndLine: d.End.Line, EndColumn: d.End.Column,
			Message: d.Message, Context: string(d.Context), Function: d.Function, Chain: d.Chain}
		if f.Chain == nil {
			f.Chain = []string{}
		}
		if d.Fix != nil {
			f.Fix = &JSONFix{Applicability: string(d.Fix.Applicability), Message: d.Fix.Message}
		}
		doc.Findings = append(doc.Findings, f)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// sarifURI turns a path as named into a relative URI reference.
func sarifURI(p string) string {
	p = filepath.ToSlash(filepath.Clean(p))
	p = strings.TrimPrefix(p, "./")
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

func level(s guard.Severity) string {
	if s == guard.SeverityError {
		return "error"
	}
	return "warning"
}

// SARIF writes a SARIF 2.1.0 log for GitHub code scanning.
func SARIF(w io.Writer, res *guard.Result, version string) error {
	rep, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	driver := sarif.NewVersionedDriver("capguard", version).WithInformationURI("https://github.com/capguard/capguard")
	run := sarif.NewRun(*sarif.NewTool(driver))
	index := map[string]int{}
	for _, r := range guard.Rules() {
		index[r.ID] = len(run.Tool.Driver.Rules)
		run.AddRule(r.ID).
			WithName(r.Name).
			WithShortDescription(sarif.NewMultiformatMessageString(r.Summary)).
			WithFullDescription(sarif.NewMultiformatMessageString(r.Summary)).
			WithHelp(sarif.NewMultiformatMessageString(r.Doc).WithMarkdown(r.Doc)).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(level(r.Severity))).
			WithProperties(sarif.Properties{"tags": []string{"cuda-graphs", "correctness"}})
	}
	for _, d := range res.Diagnostics {
		msg := d.Message
		if len(d.Chain) > 0 {
			msg += " (" + string(d.Context) + ": " + strings.Join(d.Chain, " -> ") + ")"
		}
		region := sarif.NewRegion().WithStartLine(d.Start.Line).WithStartColumn(d.Start.Column).
			WithEndLine(d.End.Line).WithEndColumn(d.End.Column)
		loc := sarif.NewPhysicalLocation().
			WithArtifactLocation(sarif.NewSimpleArtifactLocation(sarifURI(d.Path)).WithUriBaseId("%SRCROOT%")).
			WithRegion(region)
		run.CreateResultForRule(d.Rule.ID).
			WithRuleIndex(index[d.Rule.ID]).
			WithLevel(level(d.Severity)).
			WithMessage(sarif.NewTextMessage(msg)).
			WithLocations([]*sarif.Location{sarif.NewLocationWithPhysicalLocation(loc)})
	}
	inv := run.AddInvocation(len(res.Errors) == 0)
	for _, e := range res.Errors {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			sarif.NewNotification().WithLevel("error").WithMessage(sarif.NewTextMessage(e.Path+": "+e.Message)).
				WithLocations([]*sarif.Location{sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().
					WithArtifactLocation(sarif.NewSimpleArtifactLocation(sarifURI(e.Path))))}))
	}
	rep.AddRun(run)
	return rep.PrettyWrite(w)
}

// GitHub writes workflow commands (::error file=...::message), one per
// finding and per file error.
func GitHub(w io.Writer, res *guard.Result) error {
	for _, d := range res.Diagnostics {
		msg := d.Message
		if len(d.Chain) > 0 {
			msg += "\n" + string(d.Context) + ": " + strings.Join(d.Chain, " -> ")
		}
		fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,endLine=%d,endColumn=%d,title=%s::%s\n",
			level(d.Severity), ghProperty(d.Path), d.Start.Line, d.Start.Column, d.End.Line, d.End.Column,
			ghProperty(d.Rule.ID+" "+d.Rule.Name), ghData(msg))
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "::error file=%s,title=capguard::%s\n", ghProperty(e.Path), ghData(e.Message))
	}
	return nil
}

var (
	ghDataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghPropertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// ghData escapes a workflow command's message.
func ghData(s string) string { return ghDataEscaper.Replace(s) }

// ghProperty escapes a workflow command's property value.
func ghProperty(s string) string { return ghPropertyEscaper.Replace(s) }
