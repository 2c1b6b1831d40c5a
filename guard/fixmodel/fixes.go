package fixmodel

import (
	"fmt"
	"strconv"
	"strings"
)

// tempFix replaces the temporary with a persistent buffer filled by copy_.
func tempFix(t *Temp, site string, app Applicability, src []byte) *Fix {
	return tempFixKeyed(t, strconv.Quote(site), app, src)
}

// tempFixKeyed is tempFix with the buffer's key given as Python text (a
// string literal, or a tuple naming the instance: instanceKey).
func tempFixKeyed(t *Temp, key string, app Applicability, src []byte) *Fix {
	call := fmt.Sprintf("%s(%s, %s", HelperName, key, t.Source.Text(src))
	kind := "a persistent buffer of the source's dtype"
	if t.Dtype != "" {
		call += ", " + t.Dtype
		kind = "a persistent " + strings.TrimPrefix(t.Dtype, "torch.") + " buffer"
	}
	if t.Op == "clone" {
		call += ", copy=True" // a clone never aliases its source
	}
	call += ")" + t.Reshape
	msg := "copy into " + kind + " with copy_ (persistent_buffer) instead of making a temporary"
	if app == Unsafe {
		msg += "; unsafe: the temporary escapes this function, and the buffer is overwritten on the next call"
	}
	return &Fix{Message: msg, Applicability: app, NeedsHelper: true,
		Edits: []TextEdit{{Start: int(t.Expr.Start), End: int(t.Expr.End), NewText: call}}}
}
