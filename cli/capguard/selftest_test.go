package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// runSelftestArgs runs capguard with args and returns stdout, the exit code
// and, when it is not 0, the error main would print.
func runSelftestArgs(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	stdout, _, code, msg := runApp(t, args...)
	if code != 0 {
		return stdout, code, errors.New(msg)
	}
	return stdout, 0, nil
}

func TestSelftestSimJSON(t *testing.T) {
	out, code, err := runSelftestArgs(t, "selftest", "--backend", "sim", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	var res struct {
		Backend string
		Device  string
		Cases   []struct{ Name, Verdict, Expected string }
		Passed  bool
		Seconds float64
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if res.Backend != "sim" || !res.Passed || len(res.Cases) != 5 || res.Seconds <= 0 {
		t.Errorf("result %+v", res)
	}
	for _, c := range res.Cases {
		if c.Verdict != c.Expected {
			t.Errorf("%s: %s, expected %s", c.Name, c.Verdict, c.Expected)
		}
	}
}

func TestSelftestText(t *testing.T) {
	out, code, _ := runSelftestArgs(t, "selftest", "--backend", "sim", "--placement", "realloc")
	if code != 0 || !strings.Contains(out, "self-test passed") || !strings.Contains(out, "write-after-free") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestSelftestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"selftest", "--format", "xml"}, 2, "--format"},
		{[]string{"selftest", "--backend", "rocm"}, 2, "unknown backend"},
		{[]string{"selftest", "--backend", "sim", "--device", "x"}, 2, "--device"},
		{[]string{"selftest", "--backend", "sim", "--device", "3"}, 2, "one device"},
		{[]string{"selftest", "--backend", "sim", "--placement", "lucky"}, 2, "--placement"},
		{[]string{"selftest", "--backend", "sim", "--ptx", "/nonexistent.ptx"}, 2, "nonexistent"},
	} {
		_, code, err := runSelftestArgs(t, tc.args...)
		if code != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: exit %d, %v; want exit %d mentioning %q", tc.args, code, err, tc.code, tc.msg)
		}
	}
}

func TestSelftestAllSimDevices(t *testing.T) {
	out, code, err := runSelftestArgs(t, "selftest", "--backend", "sim", "--device", "all", "--format", "json")
	if code != 0 || !strings.Contains(out, `"devices"`) {
		t.Errorf("exit %d, %v:\n%s", code, err, out)
	}
}
