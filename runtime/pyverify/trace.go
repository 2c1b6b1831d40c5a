package pyverify

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cudagraph-capguard/capguard/templates"
)

// HarnessCases writes the verify harness and one case file per batch size
// into dir, as Verify would run them, and returns their paths: for callers
// that run the harness themselves under other instrumentation (`capguard
// trace file.py:func --inputs spec.toml` runs each case with the tracer).
// The options' defaults are filled as Verify fills them.
func HarnessCases(t Target, s *Spec, o Options, dir string) (harness string, cases []string, err error) {
	if err := o.fill(s); err != nil {
		return "", nil, err
	}
	harness = filepath.Join(dir, "verify_harness.py")
	if err := os.WriteFile(harness, templates.VerifyHarness, 0o644); err != nil {
		return "", nil, err
	}
	for i, b := range o.BatchSizes {
		c, err := buildCase(t, s, source{RunPath: t.Path, OrigPath: t.Path}, b, &o)
		if err != nil {
			return "", nil, err
		}
		data, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return "", nil, err
		}
		p := filepath.Join(dir, fmt.Sprintf("case-%d-b%d.json", i, b))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return "", nil, err
		}
		cases = append(cases, p)
	}
	return harness, cases, nil
}

// HarnessResult is the part of the harness's result line a tracing caller
// reads: the status and, for an error, its kind and message.
type HarnessResult struct {
	Status string `json:"status"`
	Error  *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

// ParseHarnessOutput finds the harness's result line in its stdout (nil
// when it printed none) and the last phase it reported.
func ParseHarnessOutput(stdout []byte) (phase string, res *HarnessResult, err error) {
	ph, r, err := parseOutput(stdout)
	if err != nil || r == nil {
		return ph, nil, err
	}
	out := &HarnessResult{Status: r.Status}
	if r.Error != nil {
		out.Error = &struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		}{r.Error.Kind, r.Error.Message}
	}
	return ph, out, nil
}
