package supervise

import "syscall"

// procAttr puts a child in a process group of its own, so that a Ctrl-C in
// the terminal reaches the supervisor, which stops the children in order,
// not the children at once; and has the kernel send the child SIGTERM
// when the supervisor dies without stopping it (kill -9, a crash), so no
// service is left holding its port. The kernel ties that to the thread
// that started the child, which the Go runtime does not end while the
// supervisor runs (it ends threads only behind a goroutine that locked one
// and exited, which this package never does).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
