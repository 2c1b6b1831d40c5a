package main

import (
	"bytes"
	"testing"
)

// runApp runs the app in-process with args (after "capguard") and returns
// stdout, stderr, the exit code and the message main would print.
func runApp(t *testing.T, args ...string) (stdout, stderr string, code int, msg string) {
	t.Helper()
	var out, errb bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errb
	code, msg = exitStatus(runArgs(app, append([]string{"capguard"}, args...)))
	return out.String(), errb.String(), code, msg
}
