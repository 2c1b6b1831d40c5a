package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/guard"
)

// contextNames are the contexts --context accepts: those of
// contexts.Order, and eager (the suppression findings).
var contextNames = []string{"captured", "replay-prep", "post-capture", "claimed", "launcher", "eager"}

// contextSet reads --context (comma-separated or repeated): nil when not
// given.
func contextSet(c *cli.Context) (map[guard.Context]bool, error) {
	names := splitCodes(c.StringSlice("context"))
	if len(names) == 0 {
		return nil, nil
	}
	out := map[guard.Context]bool{}
	for _, n := range names {
		n = strings.ToLower(n)
		ok := false
		for _, k := range contextNames {
			if n == k {
				ok = true
			}
		}
		if !ok {
			return nil, usageError("unknown context %q%s (known: %s)", n, didYouMean(n, contextNames, ""), strings.Join(contextNames, ", "))
		}
		out[guard.Context(n)] = true
	}
	return out, nil
}

// filterContexts keeps the findings in one of the contexts (all when
// set is nil).
func filterContexts(res *guard.Result, set map[guard.Context]bool) {
	if set == nil || res == nil {
		return
	}
	kept := res.Diagnostics[:0]
	for _, d := range res.Diagnostics {
		if set[d.Context] {
			kept = append(kept, d)
		}
	}
	res.Diagnostics = kept
}

// capguardDirectiveRE finds a `# capguard: ignore[...]` comment.
var capguardDirectiveRE = regexp.MustCompile(`capguard:\s*ignore\[`)

// noqaCommentRE finds a noqa directive in a comment: its codes, if any.
var noqaCommentRE = regexp.MustCompile(`(?i)#\s*noqa\b(:\s*[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)?`)

// addNoqa appends `# noqa: CGnnn` to the line each finding starts on, as
// ruff's --add-noqa does: an existing `# noqa: codes` gains the missing
// codes, a bare `# noqa` already covers the line. A line whose end lies
// inside a multi-line string or continues with a backslash gets the
// directive on a line of its own above it (a comment alone on its line
// covers the next line). It returns the directives added, the files
// changed, and the findings it could not cover (suppression findings,
// which no noqa silences, and lines it cannot reach safely).
func addNoqa(res *guard.Result) (added, files int, skipped []string, err error) {
	byFile := map[string]map[int][]string{}
	for _, d := range res.Diagnostics {
		switch d.Rule.ID {
		case "CG900", "CG901":
			skipped = append(skipped, fmt.Sprintf("%s:%d: %s (fix the comment itself)", d.Path, d.Start.Line, d.Rule.ID))
			continue
		}
		if byFile[d.Path] == nil {
			byFile[d.Path] = map[int][]string{}
		}
		byFile[d.Path][d.Start.Line] = append(byFile[d.Path][d.Start.Line], d.Rule.ID)
	}
	paths := make([]string, 0, len(byFile))
	for p := range byFile {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		src, rerr := os.ReadFile(p)
		if rerr != nil {
			return added, files, skipped, rerr
		}
		out, n, skip := noqaSource(src, byFile[p])
		for _, l := range skip {
			skipped = append(skipped, fmt.Sprintf("%s:%d: no place for a noqa comment (the line is inside a string or a continued line)", p, l))
		}
		if n == 0 {
			continue
		}
		st, serr := os.Stat(p)
		if serr != nil {
			return added, files, skipped, serr
		}
		if werr := os.WriteFile(p, out, st.Mode().Perm()); werr != nil {
			return added, files, skipped, werr
		}
		added += n
		files++
	}
	return added, files, skipped, nil
}

// lineInfo is what the scanner knows of one physical line.
type lineInfo struct {
	start, end int // byte offsets: the line's text is src[start:end] (without its line break)
	comment    int // offset of the comment's '#', -1 when none
	openEnd    bool
	openStart  bool // the line starts inside a string or a backslash continuation
}

// scanLines splits src into lines, finding each line's comment and whether
// its end lies inside a multi-line string or is continued by a backslash.
// Python's lexing, simplified: string prefixes, single and triple quotes,
// escapes; an f-string's nested quotes of another kind are read as the
// string's text, which is what Python before 3.12 allows.
func scanLines(src []byte) []lineInfo {
	var lines []lineInfo
	cur := lineInfo{comment: -1}
	var quote []byte // the open string's quote ("'", `"`, "'''", `"""`), nil outside
	cont := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\n' || (c == '\r' && (i+1 >= len(src) || src[i+1] != '\n')) {
			cur.end = i
			if i > 0 && src[i-1] == '\r' {
				cur.end = i - 1
			}
			if len(quote) == 1 {
				quote = nil // an unterminated one-line string: a syntax error; end it here
			}
			cur.openEnd = len(quote) == 3 || cont
			lines = append(lines, cur)
			cur = lineInfo{start: i + 1, comment: -1, openStart: cur.openEnd}
			cont = false
			continue
		}
		if c == '\r' {
			continue
		}
		cont = false
		if quote != nil {
			if c == '\\' {
				if i+1 < len(src) && src[i+1] == '\n' {
					continue // the newline is the string's; the line is still open
				}
				i++
				continue
			}
			if bytes.HasPrefix(src[i:], quote) {
				i += len(quote) - 1
				quote = nil
			}
			continue
		}
		switch c {
		case '#':
			cur.comment = i
			for i+1 < len(src) && src[i+1] != '\n' && src[i+1] != '\r' {
				i++
			}
		case '\\':
			cont = true
		case '\'', '"':
			q := src[i : i+1]
			if bytes.HasPrefix(src[i:], []byte{c, c, c}) {
				q = src[i : i+3]
			}
			quote = q
			i += len(q) - 1
		}
	}
	if cur.start < len(src) {
		cur.end = len(src)
		lines = append(lines, cur)
	}
	return lines
}

// noqaSource adds the directives to src (codes by 1-based line), returning
// the new source, the directives added and the lines it could not cover.
func noqaSource(src []byte, codes map[int][]string) ([]byte, int, []int) {
	lines := scanLines(src)
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n"
	}
	type edit struct {
		at   int
		del  int
		text string
	}
	var edits []edit
	var skipped []int
	added := 0
	nums := make([]int, 0, len(codes))
	for l := range codes {
		nums = append(nums, l)
	}
	sort.Ints(nums)
	for _, l := range nums {
		if l < 1 || l > len(lines) {
			skipped = append(skipped, l)
			continue
		}
		li := lines[l-1]
		want := uniqueSorted(codes[l])
		if li.comment >= 0 {
			text := string(src[li.comment:li.end])
			if m := noqaCommentRE.FindStringSubmatchIndex(text); m != nil {
				if m[2] < 0 {
					continue // a bare noqa covers every code
				}
				have := strings.FieldsFunc(text[m[2]+1:m[3]], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
				merged := uniqueSorted(append(append([]string{}, have...), want...))
				if len(merged) == len(uniqueSorted(have)) {
					continue
				}
				edits = append(edits, edit{at: li.comment + m[2], del: m[3] - m[2], text: ": " + strings.Join(merged, ", ")})
				added++
				continue
			}
		}
		directive := "# noqa: " + strings.Join(want, ", ")
		// A comment holding a capguard directive is read as that
		// directive alone: the noqa goes on the line above.
		above := li.openEnd || li.comment >= 0 && capguardDirectiveRE.Match(src[li.comment:li.end])
		if !above {
			end := li.end
			for end > li.start && (src[end-1] == ' ' || src[end-1] == '\t') {
				end--
			}
			edits = append(edits, edit{at: end, del: li.end - end, text: "  " + directive})
			added++
			continue
		}
		// The line's end is inside a string or continued (or its comment is
		// a capguard directive): a comment alone on the line above covers
		// it, when that line is not itself open.
		if li.openStart {
			skipped = append(skipped, l)
			continue
		}
		indent := li.start
		for indent < li.end && (src[indent] == ' ' || src[indent] == '\t') {
			indent++
		}
		edits = append(edits, edit{at: li.start, text: string(src[li.start:indent]) + directive + nl})
		added++
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	out := append([]byte{}, src...)
	for _, e := range edits {
		out = append(out[:e.at], append([]byte(e.text), out[e.at+e.del:]...)...)
	}
	return out, added, skipped
}

func uniqueSorted(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		s = strings.ToUpper(strings.TrimSpace(s))
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
