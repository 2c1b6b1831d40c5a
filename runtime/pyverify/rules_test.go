package pyverify

import "testing"

func TestRuleFor(t *testing.T) {
	cases := []struct {
		e    CaseError
		rule string
	}{
		{CaseError{Message: "CUDA error: operation not permitted when stream is capturing", Code: "n = seq_lens.max().item()"}, "CG101"},
		{CaseError{Message: "CUDA error: operation not permitted when stream is capturing", Code: "if (lens > 0).any():"}, "CG101"},
		{CaseError{Message: "CUDA error: operation not permitted when stream is capturing", Code: "idx = mask.nonzero()"}, "CG104"},
		{CaseError{Message: "anything", Code: "x = torch.repeat_interleave(a, r)"}, "CG104"},
		// Measured on an H200 (testdata/gpu/probes/cg104_bincount_pos.py): torch's own message names a copy.
		{CaseError{Message: "RuntimeError: Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned.", Code: "counts = torch.bincount(ids, minlength=V)"}, "CG104"},
		{CaseError{Message: "RuntimeError: Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned.", Code: "h = torch.histc(x, bins=16)"}, "CG104"},
		{CaseError{Message: "CUDA error: operation not permitted when stream is capturing", Code: "t = torch.tensor(lens, device=dev)"}, "CG103"},
		{CaseError{Message: "x", Code: "t = torch.from_numpy(arr).to(dev)"}, "CG103"},
		{CaseError{Message: "x", Code: "pt = page_table_host.cuda()"}, "CG103"},
		{CaseError{Message: "called a synchronizing CUDA operation"}, "CG101"},
		{CaseError{Message: "Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned."}, "CG103"},
		{CaseError{Message: "CUDA error: operation not supported when stream is capturing (cudaErrorStreamCaptureUnsupported)"}, "CG101"},
		{CaseError{Message: "boom", Messages: []string{"RuntimeError: boom", "RuntimeError: CUDA error: operation failed due to a previous error during capture (cudaErrorStreamCaptureInvalidated)"}}, "CG101"},
		{CaseError{Message: "this op cannot be captured"}, "CG101"},
		{CaseError{Message: "aten::nonzero is not supported with dynamic shape"}, "CG104"},
		{CaseError{Message: "ValueError: bad shape"}, ""},
	}
	for _, c := range cases {
		e := c.e
		if got, why := ruleFor(&e); got != c.rule || (got != "" && why == "") {
			t.Errorf("ruleFor(%+v) = %q (%q), want %q", c.e, got, why, c.rule)
		}
	}
	if r, _ := ruleFor(nil); r != "" {
		t.Errorf("nil error gave %q", r)
	}
}
