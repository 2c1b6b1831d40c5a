// Package pyverify runs `capguard verify`: it proves a Python function
// (PyTorch + Triton) capture-safe, or shows the hazard, on the GPU of the
// machine it runs on.
//
// For every batch size it runs the embedded harness (templates.VerifyHarness)
// in its own interpreter process, since a CUDA fault is sticky and poisons the
// process that met it. The harness warms the target up on a side stream,
// captures it with torch.cuda.graph (with torch's sync debug mode set to
// "error" inside the capture), then for each replay writes a new batch into
// the static inputs, runs the replay-prep callable if the spec names one,
// churns the caching allocator and poisons the blocks it hands out, replays,
// and compares the replay's outputs with an eager run on the same inputs.
//
// The harness reports facts; this package decides the verdicts, which are
// those of DESIGN.md and of the Go runtime checker: clean, stale-read, fault,
// capture-error (write-after-free needs canaries at fixed addresses, which
// only the Go checker plants). A case that could not run at all (no torch, no
// GPU, a bad target or spec, a timeout outside the replay) gets the verdict
// error. Capture errors are mapped to capguard rule IDs (rules.go).
package pyverify
