// Package supervise runs the services of make run and make demo as child
// processes: their output interleaved line by line, each line prefixed by
// the service's name, and all of them stopped as soon as one stops, so a
// service that cannot start (a port taken, a bad setting) ends the whole
// run with its own error line and a non-zero exit.
package supervise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Service is one child process.
type Service struct {
	Name string
	Path string   // the binary
	Args []string // after the binary's name
	Env  []string // added to the supervisor's environment (later wins)
}

// StopTimeout is how long the children get to stop after SIGTERM before
// they are killed.
const StopTimeout = 20 * time.Second

// exit is a child's end: its index and cmd.Wait's error.
type exit struct {
	i   int
	err error
}

// ExitError reports the service that stopped first, with its exit status
// and the last line it wrote to stderr (its own error line).
type ExitError struct {
	Service  string
	Status   string
	LastLine string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%s stopped (%s)", e.Service, e.Status)
	if e.LastLine != "" {
		msg += ": " + e.LastLine
	}
	return msg
}

// Run starts every service and waits. When ctx ends it sends each one
// SIGTERM and returns nil once they have stopped; when one stops first, it
// stops the others the same way and returns an *ExitError for it. ready,
// when not nil, is called once every service has started (not
// necessarily listening yet).
func Run(ctx context.Context, out io.Writer, services []Service, ready func()) error {
	w := &prefixWriter{out: out, width: width(services)}
	exits := make(chan exit, len(services))
	procs := make([]*exec.Cmd, 0, len(services))
	stderrs := make([]*lineWriter, len(services))
	for i, s := range services {
		cmd := exec.Command(s.Path, s.Args...)
		cmd.Env = append(os.Environ(), s.Env...)
		cmd.SysProcAttr = procAttr()
		// Writers, not pipes: Wait returns once exec has copied all of the
		// child's output, so its last line (its error) is never lost. A
		// grandchild holding the pipes open delays Wait by WaitDelay at
		// most.
		stdout := &lineWriter{w: w, name: s.Name}
		stderrs[i] = &lineWriter{w: w, name: s.Name}
		cmd.Stdout, cmd.Stderr = stdout, stderrs[i]
		cmd.WaitDelay = 2 * time.Second
		if err := cmd.Start(); err != nil {
			stopAll(procs, exits, len(procs))
			return fmt.Errorf("start %s: %w", s.Name, err)
		}
		procs = append(procs, cmd)
		go func() {
			err := cmd.Wait()
			stdout.flush()
			stderrs[i].flush()
			exits <- exit{i, err}
		}()
	}
	if ready != nil {
		ready()
	}
	select {
	case <-ctx.Done():
		stopAll(procs, exits, len(procs))
		return nil
	case e := <-exits:
		stopAll(procs, exits, len(procs)-1)
		return &ExitError{Service: services[e.i].Name, Status: status(e.err), LastLine: stderrs[e.i].last()}
	}
}

// stopAll sends SIGTERM to every process still running and waits for
// pending of them to report on exits, killing them after StopTimeout.
func stopAll(procs []*exec.Cmd, exits <-chan exit, pending int) {
	for _, p := range procs {
		_ = p.Process.Signal(syscall.SIGTERM) // os.ErrProcessDone for one that has stopped
	}
	deadline := time.After(StopTimeout)
	for range pending {
		select {
		case <-exits:
		case <-deadline:
			for _, p := range procs {
				_ = p.Process.Kill()
			}
			deadline = nil // every process is killed: the waits end now
		}
	}
}

func status(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err != nil {
		return err.Error()
	}
	return "exit status 0"
}

func width(services []Service) int {
	n := 0
	for _, s := range services {
		n = max(n, len(s.Name))
	}
	return n
}

// prefixWriter writes whole lines, each prefixed with its service's name,
// one at a time.
type prefixWriter struct {
	mu    sync.Mutex
	out   io.Writer
	width int
}

func (w *prefixWriter) line(name, line string) {
	w.mu.Lock()
	fmt.Fprintf(w.out, "%-*s | %s\n", w.width, name, line)
	w.mu.Unlock()
}

// lineWriter is one output stream of a child: it writes each whole line
// through w, prefixed, and keeps the last non-blank one.
type lineWriter struct {
	w    *prefixWriter
	name string

	mu      sync.Mutex
	partial []byte
	lastNB  string
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.emit(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > 1<<20 { // a "line" of a megabyte: write it as it is
		l.emit(string(l.partial))
		l.partial = l.partial[:0]
	}
	return len(p), nil
}

// flush writes a last line without its line feed.
func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.emit(string(l.partial))
		l.partial = nil
	}
}

func (l *lineWriter) emit(line string) {
	line = strings.TrimSuffix(line, "\r")
	if strings.TrimSpace(line) != "" {
		l.lastNB = line
	}
	l.w.line(l.name, line)
}

// last is the last non-blank line written.
func (l *lineWriter) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastNB
}
