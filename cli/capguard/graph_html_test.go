package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// graph --format html writes one self-contained page: it parses as HTML,
// fetches nothing (no src or href to another place), carries the capture
// roots and every finding of `check` on its function, and stays small.
func TestGraphHTML(t *testing.T) {
	const proj = "../../testdata/sglang_like"
	out, _, code, msg := runApp(t, "graph", "--format", "html", "--no-progress", proj)
	if code != 0 {
		t.Fatalf("exit %d %s", code, msg)
	}
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var data string
	scripts := 0
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if (a.Key == "src" || a.Key == "href") && !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s %s=%q>: the page must fetch nothing", n.Data, a.Key, a.Val)
				}
				if a.Key == "id" && a.Val == "data" && n.FirstChild != nil {
					data = n.FirstChild.Data
				}
			}
			if n.Data == "script" {
				scripts++
			}
			if n.Data == "link" || n.Data == "iframe" || n.Data == "img" {
				t.Errorf("<%s> element: the page must be self-contained", n.Data)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if strings.Contains(out, "<section") {
		t.Error("source listings without a capture map's line coverage")
	}
	if scripts != 2 || data == "" {
		t.Fatalf("scripts %d, data %d bytes", scripts, len(data))
	}
	var page struct {
		Roots     []int `json:"roots"`
		Functions []struct {
			N string               `json:"n"`
			R string               `json:"r"`
			F []struct{ R string } `json:"f"`
			C []int                `json:"c"`
		} `json:"functions"`
	}
	if err := json.Unmarshal([]byte(data), &page); err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, i := range page.Roots {
		roots = append(roots, page.Functions[i].N+" ("+page.Functions[i].R+")")
	}
	joined := strings.Join(roots, "\n")
	// The attention backend's decode is reached from the capture region
	// itself (a proved chain), so the naming convention adds no root.
	for _, want := range []string{"CudaGraphRunner.capture_one_batch_size (with torch.cuda.graph at", "CudaGraphRunner.replay (before .replay() at"} {
		if !strings.Contains(joined, want) {
			t.Errorf("roots lack %q:\n%s", want, joined)
		}
	}
	onPage := 0
	for _, f := range page.Functions {
		onPage += len(f.F)
		for _, j := range f.C {
			if j >= len(page.Functions) {
				t.Errorf("%s: chain index %d out of range", f.N, j)
			}
		}
	}
	if n := len(codesOf(t, proj)); onPage != n || n == 0 {
		t.Errorf("%d findings on the page, check reports %d", onPage, n)
	}
	// Bounded: a fixed part (the script and styles) plus a little per function.
	if limit := 12000 + 600*len(page.Functions); len(out) > limit {
		t.Errorf("page is %d bytes for %d functions, over %d", len(out), len(page.Functions), limit)
	}
}

// graph --format dot draws the functions in a capture context by default,
// everything with --all, and what --root calls, --depth hops deep.
func TestGraphDotSubgraph(t *testing.T) {
	const proj = "../../testdata/sglang_like"
	count := func(args ...string) int {
		out, _, code, msg := runApp(t, append([]string{"graph", "--format", "dot", "--no-progress"}, append(args, proj)...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, msg)
		}
		return strings.Count(out, "fillcolor=")
	}
	def, all := count(), count("--all")
	one, deep := count("--root", "CudaGraphRunner.capture", "--depth", "1"), count("--root", "CudaGraphRunner.capture")
	if !(0 < def && def < all) || !(1 < one && one < deep) {
		t.Errorf("default %d, --all %d, --root depth 1 %d, no limit %d", def, all, one, deep)
	}
	if _, _, code, _ := runApp(t, "graph", "--format", "dot", "--root", "nosuchfunction", proj); code != 2 {
		t.Errorf("--root of nothing: exit %d", code)
	}
}

// In a real headless browser (chromium, where installed), the page's
// script runs: #f=NAME opens the function with its chain and findings.
func TestGraphHTMLInBrowser(t *testing.T) {
	browser := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium (apt-get install chromium)")
	}
	out, _, code, _ := runApp(t, "graph", "--format", "html", "--no-progress", "../../testdata/sglang_like")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	page := filepath.Join(t.TempDir(), "map.html")
	os.WriteFile(page, []byte(out), 0o644)
	cmd := exec.Command(browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(),
		"--dump-dom", "file://"+page+"#f=TopKRouter.forward")
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", browser, err)
	}
	for _, want := range []string{"Why it runs there", "CudaGraphRunner.capture_one_batch_size.run_once", "CG104", "9 functions in capture contexts, 8 findings, 2 roots"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
}
