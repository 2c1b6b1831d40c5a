package pyverify

import (
	"regexp"
	"strings"
)

// A capture error names what PyTorch (or CUDA) refused; capguard names the
// hazard. ruleFor maps one to the other: first from the user's source line the
// error was raised at (the most specific evidence), then from the messages.
//
// The rules, as guard has them (DESIGN.md):
//
//	CG101 host-sync-in-capture     .item(), .tolist(), .cpu(), synchronize(), `if tensor:`
//	CG103 h2d-from-host-temporary  torch.tensor(...), from_numpy, .cuda(), .to(device) of host data
//	CG104 data-dependent-shape     nonzero(), masked_select, boolean masks, unique, bincount, histc, repeat_interleave
type ruleMatch struct {
	re     *regexp.Regexp
	rule   string
	reason string
}

// Matched against the source line of the deepest frame in the user's files.
var sourceRules = []ruleMatch{
	{regexp.MustCompile(`\.(nonzero|masked_select|unique|unique_consecutive|argwhere|bincount|histc)\s*\(|torch\.where\([^,()]*\)|repeat_interleave\(`), "CG104",
		"a data-dependent shape: the output size needs the data on the host"},
	{regexp.MustCompile(`torch\.(tensor|as_tensor|from_numpy)\s*\(|\.pin_memory\s*\(|pin_memory\s*=\s*True|\.cuda\s*\(|\.to\(\s*["']cuda`), "CG103",
		"a host-to-device copy from a host temporary"},
	{regexp.MustCompile(`\.(item|tolist|cpu|numpy)\s*\(|synchronize\s*\(|^\s*(if|while|assert)\b`), "CG101",
		"a host synchronization: the host waits for a value the GPU has not computed yet"},
}

// Matched against the exception messages, root first.
var messageRules = []ruleMatch{
	{regexp.MustCompile(`(?i)nonzero|masked_select|data[- ]dependent|dynamic shape|output_size`), "CG104",
		"PyTorch refused a data-dependent shape under capture"},
	{regexp.MustCompile(`(?i)Cannot copy between CPU and CUDA tensors during CUDA graph capture|pinned|pin_memory|cudaHostAlloc|host memory`), "CG103",
		"PyTorch refused a copy from host memory under capture"},
	{regexp.MustCompile(`(?i)called a synchronizing CUDA operation`), "CG101",
		"torch.cuda.set_sync_debug_mode(\"error\") caught a synchronizing operation under capture"},
	{regexp.MustCompile(`(?i)operation not permitted when stream is capturing|cudaErrorStreamCaptureUnsupported|operation not supported when stream is capturing|cudaErrorStreamCaptureImplicit|cudaErrorStreamCaptureInvalidated|capture (was )?invalidated|cannot be captured|not allowed (while|during) (stream |CUDA graph )?captur|cudaErrorStreamCaptureIsolation`), "CG101",
		"CUDA refused an operation that is illegal while a stream is capturing (a synchronization, a blocking copy, a query)"},
}

// ruleFor returns the rule ID a capture error stands for, and why; empty when
// nothing matches (the report keeps the message).
func ruleFor(e *CaseError) (rule, reason string) {
	if e == nil {
		return "", ""
	}
	if e.Code != "" {
		for _, m := range sourceRules {
			if m.re.MatchString(e.Code) {
				return m.rule, m.reason + " (raised at " + strings.TrimSpace(e.Code) + ")"
			}
		}
	}
	msgs := append([]string{e.Message}, e.Messages...)
	for _, m := range messageRules {
		for _, s := range msgs {
			if m.re.MatchString(s) {
				return m.rule, m.reason
			}
		}
	}
	return "", ""
}
