//go:build !linux

package supervise

import "syscall"

// procAttr puts a child in a process group of its own, so that a Ctrl-C in
// the terminal reaches the supervisor, which stops the children in order.
// Outside Linux there is no parent-death signal: a supervisor killed with
// kill -9 leaves its children running.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
