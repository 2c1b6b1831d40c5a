package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard"
)

// GitHub writes workflow commands (::error file=...::message), one per
// finding and per file error; warnings as ::warning.
func GitHub(w io.Writer, res *guard.Result, o Options) error {
	for _, d := range res.Diagnostics {
		msg := d.Message
		if len(d.Chain) > 0 {
			msg += "\n" + string(d.Context) + ": " + strings.Join(ShortChain(d.Chain), " -> ")
		}
		msg += "\n" + RuleURL(d.Rule.ID)
		fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,endLine=%d,endColumn=%d,title=%s::%s\n",
			level(d.Severity), ghProperty(d.Path), d.Start.Line, d.Start.Column, d.End.Line, d.End.Column,
			ghProperty(d.Rule.ID+" "+d.Rule.Name), ghData(msg))
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "::error file=%s,title=capguard::%s\n", ghProperty(e.Path), ghData(e.Message))
	}
	for _, m := range res.Warnings {
		fmt.Fprintf(w, "::warning title=capguard::%s\n", ghData(m))
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

// GitLabIssue is one entry of a GitLab Code Quality report.
type GitLabIssue struct {
	Description string         `json:"description"`
	CheckName   string         `json:"check_name"`
	Fingerprint string         `json:"fingerprint"`
	Severity    string         `json:"severity"` // info, minor, major, critical, blocker
	Location    GitLabLocation `json:"location"`
}

// GitLabLocation is a GitLab Code Quality location.
type GitLabLocation struct {
	Path  string `json:"path"`
	Lines struct {
		Begin int `json:"begin"`
		End   int `json:"end"`
	} `json:"lines"`
}

// GitLab writes a GitLab Code Quality report (artifacts:reports:codequality):
// a JSON array with a fingerprint per finding that survives moving the code
// (the rule, the path, the function and the message, plus a counter for
// repeats), and paths relative to the project (CI_PROJECT_DIR, else
// o.Root). File errors are reported as "capguard" issues.
func GitLab(w io.Writer, res *guard.Result, o Options) error {
	root := os.Getenv("CI_PROJECT_DIR")
	if root == "" {
		root = o.Root
	}
	out := []GitLabIssue{}
	seen := map[string]int{}
	add := func(check, path, function, msg, description, severity string, begin, end int) {
		rel, _ := relPath(root, path)
		key := check + "\x00" + rel + "\x00" + function + "\x00" + msg
		n := seen[key]
		seen[key]++
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", key, n)))
		is := GitLabIssue{Description: description, CheckName: check, Fingerprint: hex.EncodeToString(sum[:16]), Severity: severity}
		is.Location.Path = rel
		is.Location.Lines.Begin, is.Location.Lines.End = max(begin, 1), max(end, begin, 1)
		out = append(out, is)
	}
	for _, d := range res.Diagnostics {
		sev := "minor"
		if d.Severity == guard.SeverityError {
			sev = "major"
		}
		desc := d.Rule.ID + " " + d.Message
		if len(d.Chain) > 0 {
			desc += " (" + string(d.Context) + ": " + strings.Join(ShortChain(d.Chain), " -> ") + ")"
		}
		add(d.Rule.ID, d.Path, d.Function, d.Message, desc, sev, d.Start.Line, d.End.Line)
	}
	for _, e := range res.Errors {
		add("capguard", e.Path, "", e.Message, e.Message, "critical", 1, 1)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
