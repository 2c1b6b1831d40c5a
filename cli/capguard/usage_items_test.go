package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUsagePointers(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--fix", "."}, "unknown flag --fix: capguard check only reports; run `capguard fix`"},
		{[]string{"check", "--diff", "."}, "unknown flag --diff: capguard check only reports; run `capguard fix`"},
		{[]string{"check", "-s", "."}, "unknown flag -s (short flags: -h, -q)"},
		{[]string{"check", "--hx", "."}, "unknown flag --hx (see"},
	} {
		_, _, code, msg := runApp(t, c.args...)
		if code != 2 || !strings.Contains(msg, c.want) {
			t.Errorf("%v: exit %d %q, want %q", c.args, code, msg, c.want)
		}
	}
}

func TestRuleJSONKeys(t *testing.T) {
	out, _, code, _ := runApp(t, "rule", "--output-format", "json", "CG101")
	var rules []map[string]any
	if err := json.Unmarshal([]byte(out), &rules); err != nil || code != 0 || len(rules) != 1 {
		t.Fatalf("exit %d %v\n%s", code, err, out)
	}
	for _, k := range []string{"id", "name", "severity", "summary", "fix", "doc", "url", "contexts"} {
		if _, ok := rules[0][k]; !ok {
			t.Errorf("no key %q: %v", k, rules[0])
		}
	}
	if rules[0]["id"] != "CG101" {
		t.Errorf("id %v", rules[0]["id"])
	}
}
