package guard

import (
	"fmt"
	"strconv"
	"strings"
)

var ruleTemporaryIntoKernel = register(&Rule{
	ID: "CG301", Name: "temporary-into-kernel", Severity: SeverityWarning, Fix: "sometimes",
	Contexts: []Context{Captured, Claimed, Launcher},
	Summary:  "a conversion or copy temporary feeds a kernel launch in code that may be captured",
	Doc: `## What it does
Finds a tensor temporary made by a conversion or copy (` + "`.to(dtype)`, `.int()`, `.long()`, `.contiguous()`, `.clone()`" + `,
a reshape of a non-contiguous view) in a function that passes it to a kernel launch: a Triton
` + "`kernel[grid](...)`" + `, ` + "`torch.ops.*`" + `, or a configured extension op (` + "`kernel-ops`" + `).

## Why it matters
A CUDA graph replays the addresses it saw at capture. The kernel will read the temporary's address on
every replay. Whether that is safe depends on who owns the memory:
- made inside ` + "`torch.cuda.graph`" + `, the cast kernel is captured too and the memory belongs to the
  graph's private pool: measured clean on an H200 (DESIGN.md);
- made outside the capture (replay-prep, a caller that prepares inputs, raw allocations, a function that
  also runs eagerly between replays), the address is freed and reused: the replay reads stale data, and a
  captured conversion writes into memory the graph no longer owns (a canary on the freed address was
  overwritten word for word while outputs still compared equal).
The finding is a warning in captured code and an error where the same function also runs in replay-prep.
In a function that claims capture safety or launches kernels for unknown callers, it is a warning.

## Example
` + "```python" + `
def read_index_logits(q, k, seq_lens, page_table):
    sl = seq_lens.reshape(-1).to(torch.int32)   # CG301
    pt = page_table.to(torch.int32)             # CG301
    _reader_kernel[(B,)](q[:, 0].contiguous(), k, sl, pt, out)  # CG301 (q)
` + "```" + `

## Fix
Copy into a persistent preallocated buffer with ` + "`copy_`" + ` (int32 for index conversions, the source
dtype for contiguity copies). capguard inserts the ` + "`persistent_buffer`" + ` helper once per file:
` + "```python" + `
    sl = persistent_buffer("reader.read_index_logits.sl", seq_lens.reshape(-1), torch.int32)
` + "```" + `
The source is evaluated once and the kernel call is unchanged. The fix is safe when the temporary is only
passed to kernels (or asked for its shape) in that function, and unsafe when it escapes: returned,
stored, aliased or passed to another function, since the persistent buffer is overwritten on the next call.
Warm up at the largest batch size before capture: a buffer cannot grow while the stream is capturing.`,
	Run: runTemporaryIntoKernel,
})

// harmlessUses are attribute uses of a temporary that do not let it escape.
var harmlessUses = map[string]bool{
	"shape": true, "stride": true, "numel": true, "size": true, "dtype": true, "device": true,
	"data_ptr": true, "dim": true, "ndim": true, "is_contiguous": true, "element_size": true,
}

func runTemporaryIntoKernel(p *Pass) {
	src := p.Src()
	fn := p.Fn
	all := assignmentsIn(bodyStmts(fn), src)
	reported := map[*Node]bool{}
	sev := SeverityWarning
	if p.Ctx != Launcher && p.HasContext(ReplayPrep) {
		sev = SeverityError
	}
	for _, call := range p.Calls() {
		kernel, ok := p.Proj.kernelName(p.File, call)
		if !ok {
			continue
		}
		args := call.Get("arguments")
		if args == nil {
			continue
		}
		for ai, arg := range args.NamedChildren() {
			label := strconv.Itoa(ai)
			if arg.Kind == "keyword_argument" {
				label = arg.Get("name").Text(src)
				arg = arg.Get("value")
			}
			arg = Unparen(arg)
			if arg == nil {
				continue
			}
			if t := tempOf(p.File, arg); t != nil {
				if reported[t.Expr] {
					continue
				}
				reported[t.Expr] = true
				site := siteKey(p.File, fn, fmt.Sprintf("%s.%s", lastName(kernel), label))
				p.ReportSeverity(t.Expr, sev, tempMessage(p, t, src, kernel), tempFix(t, site, Safe, src))
				continue
			}
			if arg.Kind != "identifier" {
				continue
			}
			name := arg.Text(src)
			var last *assignment
			for i := range all {
				if all[i].name == name && all[i].stmt.End <= call.Start {
					last = &all[i]
				}
			}
			if last == nil {
				continue
			}
			t := tempOf(p.File, last.value)
			if t == nil || reported[t.Expr] {
				continue
			}
			reported[t.Expr] = true
			app := Safe
			if escapes(p, name, last, src) {
				app = Unsafe
			}
			site := siteKey(p.File, fn, name)
			p.ReportSeverity(t.Expr, sev, tempMessage(p, t, src, kernel), tempFix(t, site, app, src))
		}
	}
}

func tempMessage(p *Pass, t *Temp, src []byte, kernel string) string {
	what := fmt.Sprintf("temporary `%s` feeds kernel `%s`", short(t.Expr.Text(src)), kernel)
	switch {
	case p.Ctx == Launcher:
		return what + ": if a caller captures this function, the graph pins the temporary's address; copy into a persistent buffer"
	case p.HasContext(ReplayPrep):
		return what + " and this function also runs in replay-prep, outside the capture: the graph replays a freed, reused address"
	case p.Ctx == Claimed:
		return what + " in a function that claims capture safety: safe only while made inside torch.cuda.graph's pool; copy into a persistent buffer"
	}
	return what + " in captured code: graph-owned only while made inside torch.cuda.graph; copy into a persistent buffer"
}

// tempFix replaces the temporary with a persistent buffer filled by copy_.
func tempFix(t *Temp, site string, app Applicability, src []byte) *Fix {
	call := fmt.Sprintf("%s(%q, %s", HelperName, site, t.Source.Text(src))
	kind := "a persistent buffer of the source's dtype"
	if t.Dtype != "" {
		call += ", " + t.Dtype
		kind = "a persistent " + strings.TrimPrefix(t.Dtype, "torch.") + " buffer"
	}
	call += ")" + t.Reshape
	msg := "copy into " + kind + " with copy_ (persistent_buffer) instead of making a temporary"
	if app == Unsafe {
		msg += "; unsafe: the temporary escapes this function, and the buffer is overwritten on the next call"
	}
	return &Fix{Message: msg, Applicability: app, NeedsHelper: true,
		Edits: []TextEdit{{Start: t.Expr.Start, End: t.Expr.End, NewText: call}}}
}

// escapes reports whether local name, bound by a, is used other than as a
// kernel argument or for its shape after the assignment.
func escapes(p *Pass, name string, a *assignment, src []byte) bool {
	esc := false
	for _, s := range bodyStmts(p.Fn) {
		Walk(s, func(n *Node) bool {
			if esc {
				return false
			}
			if n.Kind != "identifier" || n.Text(src) != name || n.Start < a.stmt.End || n == a.target {
				return true
			}
			par := n.Parent
			if par == nil {
				esc = true
				return false
			}
			switch {
			case par.Kind == "attribute" && par.Get("object") == n:
				if !harmlessUses[par.Get("attribute").Text(src)] {
					esc = true
				}
			case par.Kind == "argument_list":
				if _, ok := p.Proj.kernelName(p.File, par.Parent); !ok {
					esc = true
				}
			case par.Kind == "keyword_argument" && par.Get("value") == n:
				if _, ok := p.Proj.kernelName(p.File, par.Parent.Parent); !ok {
					esc = true
				}
			case par.Kind == "assignment" && par.Get("left") == n:
				// rebound: later uses are of another value
			default:
				esc = true
			}
			return false
		})
	}
	return esc
}

// siteKey names a persistent-buffer site: module.function.name.
func siteKey(f *File, fn *Function, name string) string {
	mod := f.Name
	if i := strings.LastIndexByte(mod, '.'); i >= 0 {
		mod = mod[i+1:]
	}
	q := "module"
	if fn != nil && fn.Qual != "" {
		q = fn.Qual
	}
	return join(join(mod, q), name)
}

func lastName(dotted string) string {
	return dotted[strings.LastIndexByte(dotted, '.')+1:]
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
