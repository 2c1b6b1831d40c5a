package report

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/cudagraph-capguard/capguard/guard"
)

// HTMLFunction is one function of the capture map page.
type HTMLFunction struct {
	Name       string        `json:"n"`
	Path       string        `json:"p"`
	Line       int           `json:"l"`
	Contexts   []string      `json:"x"`
	Chain      []int         `json:"c,omitempty"` // indexes into the page's functions, root first (-1: outside the page)
	ChainNames []string      `json:"cn,omitempty"`
	Root       string        `json:"r,omitempty"` // why the chain's first function is a root
	Condition  string        `json:"k,omitempty"`
	Calls      []int         `json:"o,omitempty"`
	Findings   []HTMLFinding `json:"f,omitempty"`
	// Listing: the page holds its source with the lines the traced run
	// executed (a capture map with line coverage), in #src-INDEX.
	Listing bool `json:"s,omitempty"`
	// Ran is the share of its statements run under capture ("5/8"), or in
	// replay prep where none ran under capture ("prep 1/3"), with a listing.
	Ran string `json:"v,omitempty"`
}

// HTMLFinding is a finding shown on its function.
type HTMLFinding struct {
	Rule     string `json:"r"`
	Line     int    `json:"l"`
	Column   int    `json:"c"`
	Severity string `json:"s"`
	Message  string `json:"m"`
}

// htmlPage is the data the page's script reads.
type htmlPage struct {
	Version   string         `json:"version"`
	Roots     []int          `json:"roots"`
	Functions []HTMLFunction `json:"functions"`
	// Left are the functions not on the page: eager, and a library's
	// launchers without a finding.
	Left int `json:"left"`
}

// GraphHTML writes the capture map as one self-contained page (no
// network): the capture roots, the functions that run in a capture
// context (captured, replay-prep, post-capture, claimed; a library's
// launchers where they have findings) with each finding on its function,
// search and filters by file, context and rule, and on click the chain
// that makes a function run there. res, when not nil, gives the findings.
func GraphHTML(w io.Writer, g *guard.GraphResult, res *guard.Result, version string) error {
	byPathQual := map[string][]*guard.Diagnostic{}
	if res != nil {
		for _, d := range res.Diagnostics {
			k := d.Path + "\x00" + d.Function
			byPathQual[k] = append(byPathQual[k], d)
		}
	}
	// A function's findings: those whose Function is its qualified name
	// (its Name less its module's prefix). Module-level code has "".
	findingsOf := func(f guard.GraphFunction) []*guard.Diagnostic {
		var out []*guard.Diagnostic
		for k, ds := range byPathQual {
			path, qual, _ := strings.Cut(k, "\x00")
			if path != f.Path {
				continue
			}
			if qual == "" && !strings.Contains(f.Name, ".") || qual != "" && (f.Name == qual || strings.HasSuffix(f.Name, "."+qual)) {
				out = append(out, ds...)
			}
		}
		return out
	}
	page := htmlPage{Version: version, Roots: []int{}, Functions: []HTMLFunction{}}
	// The roots: the first function of every chain (a capture region's
	// function is a root without being captured itself), and why.
	rootWhy := map[string]string{}
	for _, f := range g.Functions {
		if len(f.Chain) > 0 && f.Root != "" && (f.Context == guard.Captured || f.Context == guard.ReplayPrep ||
			f.Context == guard.PostCapture || f.Context == guard.Claimed) {
			if _, ok := rootWhy[f.Chain[0]]; !ok {
				rootWhy[f.Chain[0]] = f.Root
			}
		}
	}
	index := map[string]int{}
	var keep []guard.GraphFunction
	var found [][]*guard.Diagnostic
	for _, f := range g.Functions {
		ds := findingsOf(f)
		on := false
		for _, c := range f.Contexts {
			if c != guard.Launcher && c != guard.Eager {
				on = true
			}
		}
		_, isRoot := rootWhy[f.Name]
		if !on && !isRoot && !(len(f.Contexts) > 0 && len(ds) > 0) && f.Coverage == nil {
			page.Left++
			continue
		}
		index[f.Name] = len(keep)
		keep = append(keep, f)
		found = append(found, ds)
	}
	var listings strings.Builder
	for i, f := range keep {
		hf := HTMLFunction{Name: f.Name, Path: f.Path, Line: f.Line, Root: f.Root, Condition: f.Condition}
		if c := f.Coverage; c != nil && len(c.Source) > 0 {
			hf.Listing = true
			hf.Ran = fmt.Sprintf("%d/%d", c.Captured, c.Lines)
			if c.Captured == 0 {
				hf.Ran = fmt.Sprintf("prep %d/%d", c.ReplayPrep, c.Lines)
			}
			writeListing(&listings, i, c, found[i])
		}
		for _, c := range f.Contexts {
			hf.Contexts = append(hf.Contexts, string(c))
		}
		for _, n := range f.Chain {
			j, ok := index[n]
			if !ok {
				j = -1
			}
			hf.Chain = append(hf.Chain, j)
		}
		if len(hf.Chain) > 0 && slicesContainsMinus(hf.Chain) {
			hf.ChainNames = f.Chain
		}
		seen := map[int]bool{}
		for _, n := range f.Calls {
			if j, ok := index[n]; ok && !seen[j] && j != i {
				seen[j] = true
				hf.Calls = append(hf.Calls, j)
			}
		}
		sort.Ints(hf.Calls)
		for _, d := range found[i] {
			hf.Findings = append(hf.Findings, HTMLFinding{Rule: d.Rule.ID, Line: d.Start.Line, Column: d.Start.Column,
				Severity: string(d.Severity), Message: d.Message})
		}
		sort.Slice(hf.Findings, func(a, b int) bool { return hf.Findings[a].Line < hf.Findings[b].Line })
		if why, ok := rootWhy[f.Name]; ok {
			page.Roots = append(page.Roots, i)
			if hf.Root == "" || len(f.Chain) != 1 {
				hf.Root = why
			}
		}
		page.Functions = append(page.Functions, hf)
	}
	data, err := json.Marshal(page) // escapes <, > and & (safe inside a script element)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, htmlTemplate, data, listings.String())
	return err
}

// MaxListing is the most source lines the page shows of one function; the
// rest is counted in a note.
const MaxListing = 200

// writeListing writes function i's source as one element per line: the
// lines the traced run executed under capture carry the class
// ran-captured, those run in replay prep ran-prep, statements that ran in
// neither missed; each finding is marked on its line. Text is escaped.
func writeListing(b *strings.Builder, i int, c *guard.FunctionCoverage, found []*guard.Diagnostic) {
	set := func(xs []int) map[int]bool {
		m := make(map[int]bool, len(xs))
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	capd, prep, stmt := set(c.RanCaptured), set(c.RanPrep), set(c.Statements)
	atLine := map[int][]*guard.Diagnostic{}
	for _, d := range found {
		atLine[d.Start.Line] = append(atLine[d.Start.Line], d)
	}
	fmt.Fprintf(b, "<section class=\"src\" id=\"src-%d\"><h2>Lines run</h2><div class=\"legend\">"+
		"<span class=\"l ran-captured\">ran under capture</span> <span class=\"l ran-prep\">ran in replay prep</span> "+
		"<span class=\"l missed\">a statement that ran in neither</span> &nbsp;%d of %d statements ran under capture, %d in replay prep</div>"+
		"<div class=\"listing\">", i, c.Captured, c.Lines, c.ReplayPrep)
	shown := len(c.Source)
	if shown > MaxListing {
		shown = MaxListing
	}
	for k, text := range c.Source[:shown] {
		n := c.First + k
		cls := []string{"l"}
		switch {
		case capd[n]:
			cls = append(cls, "ran-captured")
		case stmt[n] && !prep[n]:
			cls = append(cls, "missed")
		}
		if prep[n] {
			cls = append(cls, "ran-prep")
		}
		fmt.Fprintf(b, "<div class=\"%s\" data-line=\"%d\"><span class=\"n\">%d</span>%s", strings.Join(cls, " "), n, n, html.EscapeString(text))
		for _, d := range atLine[n] {
			sev := "warn"
			if d.Severity == guard.SeverityError {
				sev = "err"
			}
			fmt.Fprintf(b, "<span class=\"fl %s\" title=\"%s\">%s</span>", sev, html.EscapeString(d.Message), html.EscapeString(d.Rule.ID))
		}
		b.WriteString("</div>")
	}
	if more := len(c.Source) - shown; more > 0 {
		last := c.First + shown - 1
		nc, np := 0, 0
		for _, n := range c.RanCaptured {
			if n > last {
				nc++
			}
		}
		for _, n := range c.RanPrep {
			if n > last {
				np++
			}
		}
		fmt.Fprintf(b, "<div class=\"more-lines\">%d more lines not shown (%d of them ran under capture, %d in replay prep)</div>", more, nc, np)
	}
	b.WriteString("</div></section>\n")
}

func slicesContainsMinus(xs []int) bool {
	for _, x := range xs {
		if x < 0 {
			return true
		}
	}
	return false
}

// htmlTemplate is the page: plain HTML, CSS and JavaScript, nothing
// fetched. %[1]s is the data.
const htmlTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>capguard capture map</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;display:flex;height:100vh;color:#222}
#side{width:34%%;min-width:320px;border-right:1px solid #ccc;display:flex;flex-direction:column}
#filters{padding:8px;border-bottom:1px solid #ddd;background:#f7f7f7}
#filters input[type=search]{width:100%%;box-sizing:border-box;margin-bottom:4px}
#filters select{max-width:100%%}
#list{overflow:auto;flex:1}
#main{flex:1;overflow:auto;padding:12px 18px}
.fn{padding:3px 8px;cursor:pointer;border-bottom:1px solid #eee;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.fn:hover,.fn.sel{background:#e8f0fe}
.badge{display:inline-block;font-size:11px;padding:0 5px;border-radius:8px;margin-right:4px;color:#000}
.captured{background:#ffb4a8}.replay-prep{background:#ffe27a}.post-capture{background:#ffc98a}.claimed{background:#e4c3f0}.launcher{background:#b8dcf5}
.count{float:right;color:#b00;font-weight:bold;margin-left:6px}
.err{color:#b00}.warn{color:#a60}
code,.mono{font-family:ui-monospace,monospace;font-size:13px}
.hop{cursor:pointer;color:#1558d6}
h2{font-size:16px;margin:8px 0}
#more{padding:6px 8px;color:#666}
.listing{font-family:ui-monospace,monospace;font-size:12px;border:1px solid #ddd;overflow-x:auto}
.listing .l{white-space:pre;padding-right:8px}
.legend .l{display:inline-block;padding:0 4px;font-size:12px}
.n{display:inline-block;width:4em;color:#888;text-align:right;margin-right:10px;user-select:none}
.ran-captured{background:#c6f0c2}.ran-prep{background:#fff0a8}.ran-captured.ran-prep{box-shadow:inset 4px 0 #e0b400}
.missed{background:#f6f6f6;color:#888}
.fl{margin-left:12px;font-weight:bold}
.ran{color:#2a7a2a;font-size:12px}
.more-lines{padding:4px 8px;color:#666;font-style:italic}
</style>
</head>
<body>
<div id="side">
<div id="filters">
<input type="search" id="q" placeholder="search functions, files, messages">
<div>file <select id="file"><option value="">all files</option></select></div>
<div>rule <select id="rule"><option value="">any</option><option value="*">with a finding</option></select></div>
<div id="ctx"></div>
<div id="stats" class="mono"></div>
</div>
<div id="list"></div>
</div>
<div id="main"><h2>Capture roots</h2><div id="roots"></div><div id="detail"></div></div>
<div id="sources" hidden>
%[2]s</div>
<script type="application/json" id="data">%[1]s</script>
<script>
(function(){
var D=JSON.parse(document.getElementById('data').textContent),F=D.functions;
var CTX=['captured','replay-prep','post-capture','claimed','launcher'];
var q=document.getElementById('q'),fileSel=document.getElementById('file'),ruleSel=document.getElementById('rule');
var ctxOn={};
function el(t,a,txt){var e=document.createElement(t);for(var k in a)e.setAttribute(k,a[k]);if(txt!=null)e.textContent=txt;return e}
var files={},rules={};
F.forEach(function(f){files[f.p]=1;(f.f||[]).forEach(function(x){rules[x.r]=1})});
Object.keys(files).sort().forEach(function(p){fileSel.appendChild(el('option',{value:p},p))});
Object.keys(rules).sort().forEach(function(r){ruleSel.appendChild(el('option',{value:r},r))});
var ctxDiv=document.getElementById('ctx');
CTX.forEach(function(c){ctxOn[c]=true;var l=el('label',{});var b=el('input',{type:'checkbox',checked:''});b.onchange=function(){ctxOn[c]=b.checked;render()};l.appendChild(b);l.appendChild(el('span',{'class':'badge '+c},c));ctxDiv.appendChild(l)});
var nf=0;F.forEach(function(f){nf+=(f.f||[]).length});
var nl=F.filter(function(f){return f.s}).length;
document.getElementById('stats').textContent=F.length+' functions in capture contexts, '+nf+' findings, '+D.roots.length+' roots; '+D.left+' other functions not shown'+(nl?'; '+nl+' with the lines the traced run executed':'');
function matches(f){
 if(fileSel.value&&f.p!==fileSel.value)return false;
 if(f.x&&f.x.length&&!f.x.some(function(c){return ctxOn[c]}))return false;
 var fs=f.f||[];
 if(ruleSel.value==='*'&&!fs.length)return false;
 if(ruleSel.value&&ruleSel.value!=='*'&&!fs.some(function(x){return x.r===ruleSel.value}))return false;
 var s=q.value.toLowerCase();
 if(s&&(f.n+' '+f.p+' '+fs.map(function(x){return x.r+' '+x.m}).join(' ')).toLowerCase().indexOf(s)<0)return false;
 return true}
var LIMIT=400,limit=LIMIT,selected=-1;
function row(i){var f=F[i],d=el('div',{'class':'fn'+(i===selected?' sel':''),'data-i':i});
 if(f.f&&f.f.length)d.appendChild(el('span',{'class':'count'},f.f.length));
 (f.x||[]).forEach(function(c){d.appendChild(el('span',{'class':'badge '+c},c))});
 if(!(f.x||[]).length)d.appendChild(el('span',{'class':'badge'},'root'));
 d.appendChild(el('span',{'class':'mono'},f.n));
 if(f.v)d.appendChild(el('span',{'class':'ran','title':'statements run under capture (or in replay prep)'},' '+f.v));
 d.title=f.p+':'+f.l;d.onclick=function(){show(i)};return d}
function render(){var list=document.getElementById('list');list.textContent='';var n=0,shown=0;
 for(var i=0;i<F.length;i++){if(!matches(F[i]))continue;n++;if(shown<limit){list.appendChild(row(i));shown++}}
 if(n>shown){var m=el('div',{id:'more'},(n-shown)+' more: narrow the search, or click to show more');m.onclick=function(){limit+=LIMIT;render()};list.appendChild(m)}}
function hop(i,name){if(i<0)return el('span',{'class':'mono'},name);var a=el('span',{'class':'hop mono'},F[i].n);a.onclick=function(){show(i)};return a}
function show(i){selected=i;var f=F[i],d=document.getElementById('detail');d.textContent='';
 d.appendChild(el('h2',{},f.n));d.appendChild(el('div',{'class':'mono'},f.p+':'+f.l));
 var cx=el('div',{});(f.x||[]).forEach(function(c){cx.appendChild(el('span',{'class':'badge '+c},c))});d.appendChild(cx);
 if(f.r&&!(f.c&&f.c.length>1))d.appendChild(el('div',{},'root: '+f.r));
 if(f.c&&f.c.length>1){d.appendChild(el('h2',{},'Why it runs there'));var ol=el('ol',{});
  f.c.forEach(function(j,k){var li=el('li',{});li.appendChild(hop(j,(f.cn||[])[k]));if(k===0&&f.r)li.appendChild(el('span',{},' \u2014 root: '+f.r));ol.appendChild(li)});d.appendChild(ol);
  if(f.k)d.appendChild(el('div',{'class':'warn'},'only if '+f.k))}
 if(f.f&&f.f.length){d.appendChild(el('h2',{},'Findings'));var ul=el('ul',{});
  f.f.forEach(function(x){ul.appendChild(el('li',{'class':x.s==='error'?'err':'warn'},f.p+':'+x.l+':'+x.c+' '+x.r+' '+x.m))});d.appendChild(ul)}
 if(f.s){var s=document.getElementById('src-'+i);if(s){s=s.cloneNode(true);s.removeAttribute('id');d.appendChild(s)}}
 if(f.o&&f.o.length){d.appendChild(el('h2',{},'Calls (in capture contexts)'));var uc=el('ul',{});f.o.forEach(function(j){var li=el('li',{});li.appendChild(hop(j));uc.appendChild(li)});d.appendChild(uc)}
 render()}
var roots=document.getElementById('roots');
if(!D.roots.length)roots.textContent='none found';
D.roots.forEach(function(i){var f=F[i],dv=el('div',{});dv.appendChild(hop(i));dv.appendChild(el('span',{},' \u2014 '+(f.r||'')+' ('+f.p+':'+f.l+')'));roots.appendChild(dv)});
[q,fileSel,ruleSel].forEach(function(e){e.oninput=function(){limit=LIMIT;render()}});
render();
// #f=NAME (a name or its suffix) opens that function, e.g. for a link or a screenshot.
var h=decodeURIComponent(location.hash||'');if(h.indexOf('#f=')===0){var want=h.slice(3);for(var i=0;i<F.length;i++){var n=F[i].n;if(n===want||n.slice(-want.length-1)==='.'+want){show(i);break}}}
})();
</script>
</body>
</html>
`
