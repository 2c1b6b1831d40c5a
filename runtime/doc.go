// Package runtime proves, on a GPU, whether a captured CUDA graph is safe to
// replay: it captures a step, frees the step's temporaries as the step's
// return would, covers the freed memory with poisoned canaries, replays the
// graph with new inputs, and compares with the step run eagerly on the same
// inputs. A graph that reads memory it does not own gives different answers
// (stale-read); a graph that writes memory it no longer owns changes a canary
// (write-after-free) even when its answers are right; a device error is a
// fault and a failed capture a capture-error — verdicts, never crashes.
//
// The parts, one job each:
//
//   - runtime/backend: the device operations the checker needs (Backend).
//   - runtime/sim: a pure-Go device for tests and CI (default build).
//   - runtime/cuda: the CUDA driver through gorgonia.org/cu and a small cgo
//     shim (build tag cuda; scripts/build-cuda.sh).
//   - Arena: what a step allocates — Temp (freed when the step returns) and
//     Persistent(key, size) (the same address on every call) — so the checker
//     knows every buffer a graph may touch. With virtual memory (Remap),
//     temporaries live in a reserved range and a freed one is covered by
//     mapping fresh memory under exactly its addresses; otherwise (Realloc)
//     by allocating again, and the report says how much was covered.
//   - Env: a stream, an Arena and loaded kernels; steps run on it eagerly
//     (Run) or captured (CaptureGraph).
//   - Check: the proof for one Case; Report: its verdict and evidence
//     (mismatched elements, max difference, first mismatch, suspect buffers,
//     covered freed ranges, capture, replay and eager times).
//   - SelfTest: the planted cases — a temporary converted and read inside the
//     capture (write-after-free), a temporary converted before it
//     (stale-read), a persistent buffer refreshed inside it (clean), batch
//     sizes sharing one persistent buffer (clean), a sync inside it
//     (capture-error) — for a server's start-up and `capguard selftest`. A
//     detector that misses a planted hazard fails it.
//
// The capture uses CUDA's relaxed capture mode on purpose: the step allocates
// its temporaries with raw allocations while it is captured, as the hazard
// does, and the global and thread-local modes would forbid that. A sync on the
// capturing stream still invalidates the capture.
package runtime
