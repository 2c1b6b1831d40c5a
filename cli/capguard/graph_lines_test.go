package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// linesEngine is a stand-in engine: the runner captures Decoder.step,
// whose adapter branch (and Decoder.post under it) the traced run never
// took, and copies the next input in before each replay. Decoder.unrolled
// is longer than the page shows of one function.
func linesEngine() string {
	var b strings.Builder
	b.WriteString(`import torch


class Decoder(object):
    def __init__(self):
        self.bias = torch.zeros(8, device="cuda")
        self.adapter = None

    def step(self, x):
        tag = "<b>a & b</b>" if x is not None else '<i>'  # L-ESC: x < y > z & "q"
        y = x + self.bias  # L-RAN
        k = self.bias.sum().item()  # L-FIND
        if self.adapter is not None:  # L-IF
            y = self.post(y + self.adapter.item())  # L-MISSED

        return self.unrolled(y)  # L-RET

    def post(self, y):
        return y * 2  # L-POST

    def unrolled(self, y):  # L-LONG
`)
	for i := 0; i < 205; i++ {
		b.WriteString("        y = y + 1\n")
	}
	b.WriteString(`        return y  # L-LONG-END


class Runner(object):
    def __init__(self, dec):
        self.dec = dec
        self.x = torch.zeros(8, device="cuda")
        self.graph = torch.cuda.CUDAGraph()

    def capture(self):
        with torch.cuda.graph(self.graph):  # L-WITH
            self.out = self.dec.step(self.x)  # L-CALL

    def replay(self, x):
        self.x.copy_(x)  # L-PREP
        self.graph.replay()
        return self.out
`)
	return b.String()
}

// graph --format html with a capture map that has line coverage: each
// function the map has lines in shows its source, the lines run under
// capture with the class ran-captured, those run in replay prep ran-prep,
// statements that ran in neither missed; source text is escaped; a long
// function is cut with a note that counts the rest; a function without
// coverage has no listing.
func TestGraphHTMLLines(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "engine.py")
	if err := os.WriteFile(src, []byte(linesEngine()), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(m string) int { return lineOf(t, src, m) }
	step, capture, long := at("L-ESC")-1, at("L-WITH")-1, at("L-LONG")
	// Recorded in another checkout (cwd /trace/run), as a GPU machine's map is.
	const rec = "/trace/run/engine.py"
	mp := fmt.Sprintf(`{"schema": "capguard-capture-map", "version": 2, "cwd": "/trace/run",
	  "tool": {"tracer": "capguard-trace", "lines": "sys.monitoring"},
	  "graphs": [{"id": 0, "backend": "cuda", "api": "graph", "status": "captured", "replays": 3,
	    "functions": [
	      {"path": %[1]q, "qual": "Runner.capture", "first_line": %[2]d, "graph": 0, "stack": []},
	      {"path": %[1]q, "qual": "Decoder.step", "first_line": %[3]d, "graph": 0, "stack": []},
	      {"path": %[1]q, "qual": "Decoder.unrolled", "first_line": %[4]d, "graph": 0, "stack": []}],
	    "lines": {%[1]q: [[%[5]d, %[6]d], [%[7]d, %[8]d], [%[9]d, %[10]d], [%[11]d, %[11]d]]},
	    "prep_lines": {%[1]q: [[%[12]d, %[12]d]]}}]}`,
		rec, capture, step, long,
		at("L-WITH"), at("L-CALL"), at("L-ESC"), at("L-IF"), long+1, at("L-LONG-END"), at("L-RET"), at("L-PREP"))
	mapFile := filepath.Join(dir, "map.json")
	os.WriteFile(mapFile, []byte(mp), 0o644)
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	out, stderr, code, msg := runApp(t, "graph", "--format", "html", "--no-progress", "--capture-map", mapFile, "engine.py")
	if code != 0 {
		t.Fatalf("exit %d %s\n%s", code, msg, stderr)
	}
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	attr := func(n *html.Node, k string) string {
		for _, a := range n.Attr {
			if a.Key == k {
				return a.Val
			}
		}
		return ""
	}
	text := func(n *html.Node) string {
		var b strings.Builder
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.TextNode {
				b.WriteString(n.Data)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(n)
		return b.String()
	}
	// The listings by section id; in each, the line elements by number.
	type line struct {
		class, text string
		n           *html.Node
	}
	sections := map[string]map[int]line{}
	notes := map[string]string{}
	var data string
	var walk func(n *html.Node, sec string)
	walk = func(n *html.Node, sec string) {
		if n.Type == html.ElementNode {
			if n.Data == "section" {
				sec = attr(n, "id")
				sections[sec] = map[int]line{}
			}
			if attr(n, "id") == "data" {
				data = text(n)
			}
			if l := attr(n, "data-line"); l != "" && sec != "" {
				var num int
				fmt.Sscan(l, &num)
				// The line's text without its number and finding marks.
				var b strings.Builder
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.TextNode {
						b.WriteString(c.Data)
					}
				}
				sections[sec][num] = line{attr(n, "class"), b.String(), n}
			}
			if attr(n, "class") == "more-lines" {
				notes[sec] = text(n)
			}
			if sec != "" && n.Data != "section" && n.Data != "div" && n.Data != "span" && n.Data != "h2" {
				t.Errorf("<%s> element inside a listing: source text not escaped", n.Data)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, sec)
		}
	}
	walk(doc, "")
	var page struct {
		Functions []struct {
			N string `json:"n"`
			S bool   `json:"s"`
			V string `json:"v"`
		} `json:"functions"`
	}
	if err := json.Unmarshal([]byte(data), &page); err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{}
	for i, f := range page.Functions {
		idx[f.N] = i
		if _, ok := sections[fmt.Sprintf("src-%d", i)]; ok != f.S {
			t.Errorf("%s: listing flag %v, section %v", f.N, f.S, ok)
		}
	}
	listing := func(name string) map[int]line {
		i, ok := idx[name]
		if !ok {
			t.Fatalf("%s not on the page: %+v", name, page.Functions)
		}
		return sections[fmt.Sprintf("src-%d", i)]
	}
	has := func(l line, c string) bool { return strings.Contains(" "+l.class+" ", " "+c+" ") }
	ls := listing("engine.Decoder.step")
	for _, m := range []string{"L-ESC", "L-RAN", "L-IF", "L-RET"} {
		if l := ls[at(m)]; !has(l, "ran-captured") || has(l, "missed") || has(l, "ran-prep") {
			t.Errorf("%s (line %d, run under capture): class %q", m, at(m), l.class)
		}
	}
	if l := ls[at("L-MISSED")]; has(l, "ran-captured") || !has(l, "missed") {
		t.Errorf("L-MISSED (never run): class %q", l.class)
	}
	if l, ok := ls[at("L-RET")-1]; !ok || strings.TrimSpace(l.class) != "l" || l.text != "" {
		t.Errorf("the blank line: %+v %v", l, ok)
	}
	if l := ls[step]; has(l, "ran-captured") || has(l, "missed") {
		t.Errorf("the def line (not a statement the run reported): class %q", l.class)
	}
	// Escaped: the markup in the source is text, read back as written.
	want := strings.Split(linesEngine(), "\n")[at("L-ESC")-1]
	if got := ls[at("L-ESC")].text; got != want {
		t.Errorf("escaped line reads back as\n%q, want\n%q", got, want)
	}
	if !strings.Contains(out, "&lt;b&gt;a &amp; b&lt;/b&gt;") || strings.Contains(out, `"<b>a & b</b>"`) {
		t.Error("the source's markup is not escaped in the page")
	}
	if l := listing("engine.Runner.replay")[at("L-PREP")]; !has(l, "ran-prep") || has(l, "ran-captured") {
		t.Errorf("replay prep line: class %q", l.class)
	}
	if l := listing("engine.Runner.replay")[at("L-PREP")+1]; !has(l, "missed") {
		t.Errorf("replay line not run in prep: class %q", l.class)
	}
	// The list's share: statements run under capture, else in replay prep.
	if v := page.Functions[idx["engine.Decoder.step"]].V; v != "5/6" {
		t.Errorf("Decoder.step's share %q, want 5/6", v)
	}
	if v := page.Functions[idx["engine.Runner.replay"]].V; v != "prep 1/3" {
		t.Errorf("Runner.replay's share %q, want prep 1/3", v)
	}
	if i, ok := idx["engine.Decoder.post"]; !ok || page.Functions[i].S {
		t.Errorf("Decoder.post (captured statically, never run): on page %v, with a listing", ok)
	}
	// The long function: 200 lines shown, the 7 others counted.
	lg := listing("engine.Decoder.unrolled")
	if len(lg) != 200 || !has(lg[long+199], "ran-captured") {
		t.Errorf("long function: %d lines shown", len(lg))
	}
	if n := notes[fmt.Sprintf("src-%d", idx["engine.Decoder.unrolled"])]; n != "7 more lines not shown (7 of them ran under capture, 0 in replay prep)" {
		t.Errorf("long function's note: %q", n)
	}
	// The host read on a line run under capture: its finding is marked there.
	var marks []string
	for c := ls[at("L-FIND")].n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && attr(c, "class") != "n" {
			marks = append(marks, attr(c, "class")+" "+text(c))
		}
	}
	if len(marks) != 1 || !strings.HasPrefix(marks[0], "fl err CG") {
		t.Errorf("L-FIND's finding marks: %q", marks)
	}
	if !strings.Contains(out, "ran under capture</span>") {
		t.Error("no legend")
	}

	// In a real browser (where installed): #f=Decoder.step shows its listing.
	browser := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Log("no chromium: the page's script is not run")
		return
	}
	page2 := filepath.Join(t.TempDir(), "map.html")
	os.WriteFile(page2, []byte(out), 0o644)
	cmd := exec.Command(browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(),
		"--dump-dom", "file://"+page2+"#f=Decoder.step")
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", browser, err)
	}
	_, detail, _ := strings.Cut(string(dom), `<div id="detail">`)
	detail, _, _ = strings.Cut(detail, `<div id="sources"`)
	if !strings.Contains(detail, "Lines run") || !strings.Contains(detail, `class="l ran-captured" data-line="`+fmt.Sprint(at("L-RAN"))) {
		t.Errorf("the opened function shows no listing:\n%.2000s", detail)
	}
}
