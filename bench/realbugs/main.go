// Command realbugs scores capguard on real CUDA-graph capture bugs that
// projects fixed: for each bug of bugs.tsv the package is checked out at the
// fix's parent and at the fix, capguard checks it as a user would, and the bug
// counts as FOUND when the parent has a finding of an expected rule in the
// buggy function and the fix has none of those rules there.
//
//	go build -o /tmp/capguard ./cli/capguard
//	go run ./bench/realbugs -mirrors /work/.mirror -capguard /tmp/capguard [-set train|val|holdout|fresh|all] [-errors-only] [-v]
//
// The mirrors folder holds one bare git mirror per repository, as
// <mirrors>/<owner>+<name>/repo (the repository column of bugs.tsv names that
// folder). For each commit the package's files are written from the mirror's
// objects into a temporary folder (files whose objects the mirror lacks are
// skipped and counted), and `capguard check --no-cache --output-format json
// <package>` runs there with the folder as its working directory.
//
// # bugs.tsv
//
// Tab-separated, one bug a line, '#' starts a comment line; the columns are
//
//	set  repository  parent  fix  file  function  rules  package  description
//
// set is train, val, holdout (a repository outside the corpus, read only
// to measure) or fresh (a repository capguard was first run on as a new user
// would, after its model was built: the never-seen sets' recall); parent and fix are commits (the parent is the fix's
// first parent); file is the path of the buggy file in the repository;
// function is the function as capguard's JSON names it (`Class.method`, or a
// module-level function's name); rules are comma-separated CG codes; package
// is the folder a user would check (relative to the repository root; `.` for
// the root). The file holds no code from the repositories: the description is
// our own words.
//
// # Verdicts
//
// A finding is "in the function" when its path is the bug's file and its
// function is the bug's function or a function nested in it
// (`Class.method.inner`). The verdict is
//
//	FOUND          the parent has an expected finding in the function, the fix none
//	MISSED         the parent has none
//	STILL-FLAGGED  the parent has one, and so does the fix
//	ERROR          a checkout or a run failed (not counted as found)
//
// Exit status: 0 when the table was printed, 2 on a usage error.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bug is one line of bugs.tsv.
type Bug struct {
	Set         string
	Repo        string
	Parent      string
	Fix         string
	File        string
	Function    string
	Rules       []string
	Package     string
	Description string
	Line        int // line in bugs.tsv
}

// Finding is the part of a capguard JSON finding the scorer reads.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	Context  string `json:"context"`
}

// Side is the result of checking one commit.
type Side struct {
	Hits    []Finding // expected-rule findings in the function
	Missing int       // files whose objects the mirror lacks
	Err     error
}

// Result is one scored bug.
type Result struct {
	Bug     Bug
	Parent  Side
	Fix     Side
	Verdict string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("realbugs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mirrors := fs.String("mirrors", "/work/.mirror", "folder of bare mirrors, <owner>+<name>/repo")
	capguard := fs.String("capguard", "", "the capguard binary to score (required)")
	set := fs.String("set", "all", "which bugs: train, val, holdout, fresh or all")
	bugsFile := fs.String("bugs", defaultBugs(), "the list of bugs")
	only := fs.String("repo", "", "only bugs of repositories whose name contains this")
	jobs := fs.Int("j", 2, "bugs scored in parallel")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit for one capguard run")
	verbose := fs.Bool("v", false, "print the expected findings of each side")
	jsonOut := fs.String("json", "", "also write the results as JSON to this file")
	errorsOnly := fs.Bool("errors-only", false, "count only error findings (at the parent and at the fix); by default warnings count too")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *capguard == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: realbugs -capguard BIN [-mirrors DIR] [-set train|val|holdout|fresh|all] [-bugs FILE] [-repo NAME] [-v]")
		return 2
	}
	if !knownSet(*set) && *set != "all" {
		fmt.Fprintf(stderr, "realbugs: -set must be train, val, holdout, fresh or all, not %q\n", *set)
		return 2
	}
	bin, err := filepath.Abs(*capguard)
	if err != nil {
		fmt.Fprintln(stderr, "realbugs:", err)
		return 2
	}
	bugs, err := readBugs(*bugsFile)
	if err != nil {
		fmt.Fprintln(stderr, "realbugs:", err)
		return 2
	}
	var todo []Bug
	for _, b := range bugs {
		if (*set == "all" || b.Set == *set) && strings.Contains(b.Repo, *only) {
			todo = append(todo, b)
		}
	}
	results := score(todo, *mirrors, bin, *jobs, *timeout, *errorsOnly)
	report(stdout, results, *verbose)
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, results); err != nil {
			fmt.Fprintln(stderr, "realbugs:", err)
			return 2
		}
	}
	return 0
}

// defaultBugs is bugs.tsv beside this program when run from the module root.
func defaultBugs() string {
	return filepath.Join("bench", "realbugs", "bugs.tsv")
}

func readBugs(file string) ([]Bug, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var bugs []Bug
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 9 {
			return nil, fmt.Errorf("%s:%d: %d columns, want 9", file, i+1, len(f))
		}
		b := Bug{Set: f[0], Repo: f[1], Parent: f[2], Fix: f[3], File: f[4], Function: f[5],
			Package: f[7], Description: f[8], Line: i + 1}
		for _, r := range strings.Split(f[6], ",") {
			if r = strings.TrimSpace(r); r != "" {
				b.Rules = append(b.Rules, r)
			}
		}
		if !knownSet(b.Set) {
			return nil, fmt.Errorf("%s:%d: set %q, want train, val, holdout or fresh", file, i+1, b.Set)
		}
		if b.Parent == "" || b.Fix == "" || b.File == "" || b.Function == "" || len(b.Rules) == 0 || b.Package == "" {
			return nil, fmt.Errorf("%s:%d: an empty column", file, i+1)
		}
		bugs = append(bugs, b)
	}
	return bugs, nil
}

func score(bugs []Bug, mirrors, bin string, jobs int, timeout time.Duration, errorsOnly bool) []Result {
	if jobs < 1 {
		jobs = 1
	}
	results := make([]Result, len(bugs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, jobs)
	for i, b := range bugs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			gitDir := filepath.Join(mirrors, b.Repo, "repo")
			r := Result{Bug: b}
			r.Parent = checkSide(gitDir, b.Parent, b, bin, timeout, errorsOnly)
			r.Fix = checkSide(gitDir, b.Fix, b, bin, timeout, errorsOnly)
			r.Verdict = verdict(r)
			results[i] = r
		}()
	}
	wg.Wait()
	return results
}

func verdict(r Result) string {
	switch {
	case r.Parent.Err != nil || r.Fix.Err != nil:
		return "ERROR"
	case len(r.Parent.Hits) == 0:
		return "MISSED"
	case len(r.Fix.Hits) > 0:
		return "STILL-FLAGGED"
	}
	return "FOUND"
}

// checkSide checks the bug's package at one commit.
func checkSide(gitDir, commit string, b Bug, bin string, timeout time.Duration, errorsOnly bool) Side {
	dir, err := os.MkdirTemp("", "realbugs-")
	if err != nil {
		return Side{Err: err}
	}
	defer os.RemoveAll(dir)
	pkg := cleanRel(b.Package)
	missing, err := materialize(gitDir, commit, pkg, b.File, dir)
	if err != nil {
		return Side{Err: err, Missing: missing}
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(cleanRel(b.File)))); err != nil {
		return Side{Err: fmt.Errorf("%s not in %s at %.10s", b.File, b.Repo, commit), Missing: missing}
	}
	findings, err := runCheck(bin, dir, pkg, timeout)
	if err != nil {
		return Side{Err: err, Missing: missing}
	}
	return Side{Hits: matching(findings, b, errorsOnly), Missing: missing}
}

func cleanRel(p string) string {
	p = path.Clean(filepath.ToSlash(p))
	if p == "" || p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

// materialize writes the Python files (and capguard's configuration files)
// under pkg at commit into dir, and the bug's file wherever it is. It returns
// how many files were skipped because the mirror lacks their objects.
func materialize(gitDir, commit, pkg, file, dir string) (int, error) {
	args := []string{"--git-dir", gitDir, "ls-tree", "-r", "-z", commit, "--"}
	if pkg != "." {
		args = append(args, pkg)
	} else {
		args = append(args, ".")
	}
	if f := cleanRel(file); pkg != "." && !strings.HasPrefix(f, pkg+"/") {
		args = append(args, f)
	}
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return 0, fmt.Errorf("git ls-tree %.10s: %v", commit, gitErr(err))
	}
	type entry struct{ oid, path string }
	var want []entry
	for _, rec := range strings.Split(string(out), "\x00") {
		// "<mode> <type> <oid>\t<path>"
		tab := strings.IndexByte(rec, '\t')
		if tab < 0 {
			continue
		}
		meta := strings.Fields(rec[:tab])
		p := rec[tab+1:]
		if len(meta) != 3 || meta[1] != "blob" || meta[0] == "120000" {
			continue
		}
		base := path.Base(p)
		if !strings.HasSuffix(p, ".py") && base != "pyproject.toml" && base != "capguard.toml" {
			continue
		}
		want = append(want, entry{meta[2], p})
	}
	if len(want) == 0 {
		return 0, nil
	}
	cmd := exec.Command("git", "--git-dir", gitDir, "cat-file", "--batch")
	var in bytes.Buffer
	for _, e := range want {
		in.WriteString(e.oid + "\n")
	}
	cmd.Stdin = &in
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("git cat-file %.10s: %v", commit, gitErr(err))
	}
	rd := bufio.NewReader(&stdout)
	missing := 0
	for _, e := range want {
		header, err := rd.ReadString('\n')
		if err != nil {
			return missing, fmt.Errorf("git cat-file: short output")
		}
		f := strings.Fields(header)
		if len(f) >= 2 && f[1] == "missing" {
			missing++
			continue
		}
		if len(f) != 3 {
			return missing, fmt.Errorf("git cat-file: bad header %q", header)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return missing, fmt.Errorf("git cat-file: bad size in %q", header)
		}
		body := make([]byte, size+1) // the content and its newline
		if _, err := io.ReadFull(rd, body); err != nil {
			return missing, fmt.Errorf("git cat-file: short object %s", e.oid)
		}
		dst := filepath.Join(dir, filepath.FromSlash(e.path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return missing, err
		}
		if err := os.WriteFile(dst, body[:size], 0o644); err != nil {
			return missing, err
		}
	}
	return missing, nil
}

func gitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}

// runCheck runs capguard on pkg with dir as the working directory. Exit
// status 0 and 1 (findings) are normal; 2 still counts when JSON came out
// (an internal error in one file does not void the others).
func runCheck(bin, dir, pkg string, timeout time.Duration) ([]Finding, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "check", "--no-cache", "--no-progress", "--output-format", "json", pkg)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("capguard timed out after %v", timeout)
	}
	var doc struct {
		Findings []Finding `json:"findings"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &doc); jerr != nil {
		return nil, fmt.Errorf("capguard: %v, no JSON (%v): %s", err, jerr, firstError(stderr.String()))
	}
	return doc.Findings, nil
}

// firstError picks the line of a failed run's standard error that says why
// (a Go runtime's "fatal error:" or panic line, else the first line).
func firstError(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "runtime: ") {
			return strings.TrimSpace(l)
		}
	}
	if len(lines[0]) > 200 {
		return lines[0][:200]
	}
	return lines[0]
}

// matching keeps the findings of an expected rule in the bug's function
// (errors only, with errorsOnly).
func matching(findings []Finding, b Bug, errorsOnly bool) []Finding {
	file := cleanRel(b.File)
	var out []Finding
	for _, f := range findings {
		if cleanRel(f.Path) != file || (errorsOnly && f.Severity != "error") {
			continue
		}
		if f.Function != b.Function && !strings.HasPrefix(f.Function, b.Function+".") {
			continue
		}
		for _, r := range b.Rules {
			if f.Rule == r {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

func short(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

func report(w io.Writer, results []Result, verbose bool) {
	fmt.Fprintf(w, "%-5s %-28s %-10s %-44s %-11s %6s %4s  %s\n", "set", "repository", "fix", "function", "rules", "parent", "fix", "verdict")
	type tally struct{ n, found, missed, still, errs int }
	sets := map[string]*tally{}
	for _, r := range results {
		b := r.Bug
		fn := b.Function
		if len(fn) > 44 {
			fn = "…" + fn[len(fn)-43:]
		}
		v := r.Verdict
		if r.Parent.Missing+r.Fix.Missing > 0 {
			v += fmt.Sprintf(" (%d files missing)", r.Parent.Missing+r.Fix.Missing)
		}
		fmt.Fprintf(w, "%-5s %-28s %-10s %-44s %-11s %6d %4d  %s\n", b.Set, b.Repo, short(b.Fix), fn,
			strings.Join(b.Rules, ","), len(r.Parent.Hits), len(r.Fix.Hits), v)
		for _, s := range []struct {
			name string
			side Side
		}{{"parent", r.Parent}, {"fix", r.Fix}} {
			if s.side.Err != nil {
				fmt.Fprintf(w, "      %s: %v\n", s.name, s.side.Err)
			}
			if verbose {
				for _, f := range s.side.Hits {
					fmt.Fprintf(w, "      %s: %s %s %s:%d (%s)\n", s.name, f.Rule, f.Severity, f.Path, f.Line, f.Context)
				}
			}
		}
		t := sets[b.Set]
		if t == nil {
			t = &tally{}
			sets[b.Set] = t
		}
		t.n++
		switch r.Verdict {
		case "FOUND":
			t.found++
		case "MISSED":
			t.missed++
		case "STILL-FLAGGED":
			t.still++
		default:
			t.errs++
		}
	}
	var names []string
	for s := range sets {
		names = append(names, s)
	}
	sort.Strings(names)
	all := tally{}
	fmt.Fprintln(w)
	for _, s := range names {
		t := sets[s]
		all.n += t.n
		all.found += t.found
		all.missed += t.missed
		all.still += t.still
		all.errs += t.errs
		fmt.Fprintf(w, "%-5s found %d/%d (%.0f%%), missed %d, still flagged at the fix %d, errors %d\n", s, t.found, t.n, pct(t.found, t.n), t.missed, t.still, t.errs)
	}
	if len(names) > 1 {
		fmt.Fprintf(w, "%-5s found %d/%d (%.0f%%), missed %d, still flagged at the fix %d, errors %d\n", "all", all.found, all.n, pct(all.found, all.n), all.missed, all.still, all.errs)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func writeJSON(file string, results []Result) error {
	type side struct {
		Hits    []Finding `json:"hits"`
		Missing int       `json:"missing_files"`
		Error   string    `json:"error,omitempty"`
	}
	type row struct {
		Set      string   `json:"set"`
		Repo     string   `json:"repository"`
		Parent   string   `json:"parent"`
		Fix      string   `json:"fix"`
		File     string   `json:"file"`
		Function string   `json:"function"`
		Rules    []string `json:"rules"`
		Verdict  string   `json:"verdict"`
		AtParent side     `json:"at_parent"`
		AtFix    side     `json:"at_fix"`
	}
	conv := func(s Side) side {
		o := side{Hits: s.Hits, Missing: s.Missing}
		if s.Err != nil {
			o.Error = s.Err.Error()
		}
		return o
	}
	var rows []row
	for _, r := range results {
		b := r.Bug
		rows = append(rows, row{b.Set, b.Repo, b.Parent, b.Fix, b.File, b.Function, b.Rules, r.Verdict, conv(r.Parent), conv(r.Fix)})
	}
	data, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

// knownSet says whether s names one of bugs.tsv's sets.
func knownSet(s string) bool {
	return s == "train" || s == "val" || s == "holdout" || s == "fresh"
}
