package templates

import _ "embed"

// VerifyHarness is the Python harness of `capguard verify` (verify_harness.py):
// run as `python3 verify_harness.py CASE.json`, it captures, replays and
// compares one (target, batch size) case and prints one result line.
//
//go:embed verify_harness.py
var VerifyHarness []byte
