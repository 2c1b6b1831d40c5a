//go:build unix

package pyverify

import (
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup puts the interpreter in its own process group so that a
// timeout kills it together with what it started (Triton's compiler, say).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
}
