package pyverify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a fake Python interpreter: with
// PYVERIFY_FAKE_PYTHON set, TestMain behaves as `python -u harness.py
// case.json` would, printing canned harness output chosen per batch size by
// PYVERIFY_FAKE ("4:stale,32:fault,*:clean"). Modes:
//
//	clean, stale, fault, rebind-fault, crash-replay, crash-capture, crash-start,
//	capture-sync, capture-debug, capture-pinned, capture-nonzero, hang, hang-replay,
//	garbage, badjson, no-torch, no-gpu, bad-target, user-prints
//
// PYVERIFY_FAKE_LOG gets a line "pid batch" per process; PYVERIFY_FAKE_DUMP
// a copy of each case JSON.
func TestMain(m *testing.M) {
	if os.Getenv("PYVERIFY_FAKE_PYTHON") != "" {
		os.Exit(fakePython(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakePython(args []string) int {
	if len(args) != 3 || args[0] != "-u" {
		fmt.Fprintln(os.Stderr, "fake python: want -u harness.py case.json, got", args)
		return 9
	}
	h, err := os.ReadFile(args[1])
	if err != nil || !bytes.HasPrefix(h, []byte(`"""capguard verify harness`)) {
		fmt.Fprintln(os.Stderr, "fake python: the harness is not the embedded one:", err)
		return 9
	}
	data, err := os.ReadFile(args[2])
	var c harnessCase
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil || c.Protocol != protocol {
		fmt.Fprintln(os.Stderr, "fake python: bad case file:", err)
		return 9
	}
	if p := os.Getenv("PYVERIFY_FAKE_LOG"); p != "" {
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		fmt.Fprintf(f, "%d %d\n", os.Getpid(), c.BatchSize)
		f.Close()
	}
	if d := os.Getenv("PYVERIFY_FAKE_DUMP"); d != "" {
		os.WriteFile(filepath.Join(d, fmt.Sprintf("case-%d.json", c.BatchSize)), data, 0o644)
	}
	mode := ""
	for _, kv := range strings.Split(os.Getenv("PYVERIFY_FAKE"), ",") {
		k, v, _ := strings.Cut(kv, ":")
		if k == strconv.Itoa(c.BatchSize) || (k == "*" && mode == "") {
			mode = v
		}
	}
	phase := func(p string) { fmt.Printf("%sphase %s\n", mark, p) }
	result := func(r map[string]any) {
		r["protocol"] = protocol
		r["batch_size"] = c.BatchSize
		r["torch"] = "2.11.0+fake"
		r["triton"] = "3.6.0"
		r["device"] = "Fake H200"
		r["sync_debug"] = true
		b, _ := json.Marshal(r)
		fmt.Printf("%sresult %s\n", mark, b)
	}
	replays := func(bad map[int]bool) []map[string]any {
		var out []map[string]any
		for i := 0; i < c.Replays; i++ {
			r := map[string]any{"index": i, "equal": !bad[i], "elements": 256 * c.BatchSize, "replay_ms": 0.02, "eager_ms": 0.1}
			if bad[i] {
				r["mismatched"] = 10 + i
				r["max_diff"] = float64(i) + 0.5
				r["first_mismatch"] = map[string]any{"output": "out", "index": []int{0, i}, "replay_value": "1.5", "eager_value": "-inf"}
			}
			out = append(out, r)
		}
		return out
	}
	for _, p := range []string{"import-torch", "load", "inputs", "warmup", "capture"} {
		if mode == "crash-start" {
			return 1
		}
		if mode == "user-prints" {
			fmt.Println("@@capguard-verifyish not a protocol line {")
		}
		phase(p)
	}
	switch mode {
	case "clean", "user-prints":
		phase("replay 0")
		result(map[string]any{"status": "ok", "replays": replays(nil), "capture_ms": 3.0})
	case "stale":
		phase("replay 0")
		result(map[string]any{"status": "ok", "replays": replays(map[int]bool{1: true, 3: true})})
	case "fault", "rebind-fault":
		phase("replay 0")
		r := map[string]any{"status": "fault", "replays": []map[string]any{{"index": 0}},
			"error": map[string]any{"type": "AcceleratorError", "phase": "replay 0",
				"message": "CUDA error: an illegal memory access was encountered"}}
		if mode == "rebind-fault" {
			r["suspects"] = []map[string]any{{"name": "META.sl", "reason": "rebound after capture", "captured_ptr": "0x7f00", "replays": 1, "captured_block_live": false}}
		}
		result(r)
	case "crash-replay":
		phase("replay 0")
		fmt.Fprintln(os.Stderr, "terminate called after throwing an instance of 'c10::Error'")
		return 134
	case "crash-capture":
		return 139
	case "capture-sync", "capture-debug", "capture-pinned", "capture-nonzero":
		e := map[string]any{"type": "RuntimeError", "phase": "capture"}
		switch mode {
		case "capture-sync":
			e["message"] = "CUDA error: operation not permitted when stream is capturing"
			e["file"], e["line"], e["code"] = "/x/reader.py", 12, "n = int(lens.max().item())"
		case "capture-debug":
			e["message"] = "called a synchronizing CUDA operation"
		case "capture-pinned":
			e["message"] = "CUDA error: operation not permitted when stream is capturing"
			e["file"], e["line"], e["code"] = "/x/reader.py", 7, "sl = torch.tensor(lst, dtype=torch.int32).cuda()"
		case "capture-nonzero":
			e["message"] = "CUDA error: operation not permitted when stream is capturing"
			e["code"] = "idx = mask.nonzero()"
		}
		e["messages"] = []string{"RuntimeError: " + e["message"].(string), "RuntimeError: CUDA error: operation failed due to a previous error during capture"}
		result(map[string]any{"status": "capture-error", "error": e})
	case "hang":
		time.Sleep(time.Hour)
	case "hang-replay":
		phase("replay 0")
		time.Sleep(time.Hour)
	case "garbage":
		fmt.Println("Segmentation fault? {not json")
	case "badjson":
		fmt.Printf("%sresult {oops\n", mark)
	case "no-torch", "no-gpu", "bad-target":
		result(map[string]any{"status": "error", "error": map[string]any{"kind": mode, "message": mode + ": canned message", "phase": "import-torch"}})
	default:
		fmt.Fprintln(os.Stderr, "fake python: unknown mode", mode)
		return 9
	}
	return 0
}
