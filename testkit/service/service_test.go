package service_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/service"
	"github.com/gatewayapis/testkit/syncbuf"
)

// childEnv makes the test binary a small service (see child) instead of
// running the tests.
const childEnv = "SERVICE_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child is the service Exec's tests start: it listens on PORT, logs the
// start-up line both services log, answers /livez, and exits 0 on
// SIGTERM. Modes: "serve" does that; "exit" exits with status 3 before
// listening; "stubborn" ignores SIGTERM; "noport" logs a start-up line
// without a port and then waits.
func child(mode string) int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	switch mode {
	case "exit":
		fmt.Println(`{"msg":"config invalid"}`)
		return 3
	case "noport":
		fmt.Println(`{"msg":"http server listening","addr":"nowhere"}`)
		<-term
		return 0
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf(`{"msg":"http server listening","addr":%q}`+"\n", ln.Addr().String())
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "PORT=%s", os.Getenv("PORT"))
	}))
	for {
		<-term
		if mode != "stubborn" {
			fmt.Println(`{"msg":"stopped"}`)
			return 0
		}
	}
}

// childCmd is the test binary re-executed as child in mode.
func childCmd(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	return cmd
}

// failT is a testing.TB whose Fatalf ends the calling goroutine and keeps
// the message, so that a test can watch a helper fail. The rest is the
// real test's (Cleanup, TempDir, Logf).
type failT struct {
	testing.TB
	msg string
}

func (f *failT) Helper() {}

func (f *failT) Fatal(args ...any) { f.msg = fmt.Sprint(args...); runtime.Goexit() }

func (f *failT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// mustFail runs fn with a failT and returns the message it failed with;
// the test fails if fn returns without failing.
func mustFail(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	ft := &failT{TB: t}
	returned := make(chan bool, 1)
	go func() {
		defer func() { returned <- ft.msg == "" }()
		fn(ft)
	}()
	if <-returned {
		t.Fatal("the helper returned; want it to fail the test")
	}
	return ft.msg
}

// serveMux serves h on ln until ctx ends, then shuts down.
func serveMux(ctx context.Context, ln net.Listener, logs io.Writer, h http.Handler) error {
	srv := &http.Server{Handler: h}
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	fmt.Fprintln(logs, "serving")
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(logs, "stopped")
	return nil
}

// TestStart: Start returns once the service answers its Ready paths (one
// answers 503 twice first), with the service's URL and log; Stop returns
// serve's own result, once, for every call.
func TestStart(t *testing.T) {
	var asked atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/livez", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	stopped := errors.New("serve's own result")
	s := service.Start(t, func(ctx context.Context, ln net.Listener, logs io.Writer) error {
		if err := serveMux(ctx, ln, logs, mux); err != nil {
			return err
		}
		return stopped
	}, service.Options{Ready: []string{"/livez", "/readyz"}})
	if n := asked.Load(); n != 3 {
		t.Errorf("/readyz asked %d times before Start returned, want 3 (503, 503, 200)", n)
	}
	resp, err := http.Get(s.URL + "/livez")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/livez = %v, %v", s.URL, resp, err)
	}
	resp.Body.Close()
	for range 2 {
		if err := s.Stop(); !errors.Is(err, stopped) {
			t.Errorf("Stop = %v, want serve's %v", err, stopped)
		}
	}
	if got := s.Logs.String(); got != "serving\nstopped\n" {
		t.Errorf("Logs = %q", got)
	}
	select {
	case <-s.Ended():
	default:
		t.Error("Ended not closed after Stop")
	}
}

// TestStartFails: Start fails the test, with the log, when serve returns
// before serving, and when the service does not answer 200 in time.
func TestStartFails(t *testing.T) {
	msg := mustFail(t, func(tb testing.TB) {
		service.Start(tb, func(ctx context.Context, ln net.Listener, logs io.Writer) error {
			fmt.Fprintln(logs, "opening the database")
			return errors.New("database locked")
		}, service.Options{Name: "vinsvc"})
	})
	for _, want := range []string{"vinsvc ended before it served: database locked", "opening the database"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure %q lacks %q", msg, want)
		}
	}

	msg = mustFail(t, func(tb testing.TB) {
		service.Start(tb, func(ctx context.Context, ln net.Listener, logs io.Writer) error {
			return serveMux(ctx, ln, logs, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
			}))
		}, service.Options{StartWithin: 200 * time.Millisecond})
	})
	for _, want := range []string{"status 503, want 200", "service did not start within 200ms", "serving"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure %q lacks %q", msg, want)
		}
	}
}

// TestStopBounded: Stop of a service that does not end returns an error
// after StopWithin.
func TestStopBounded(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := service.Start(t, func(ctx context.Context, ln net.Listener, logs io.Writer) error {
		go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		<-release // ignores ctx
		return nil
	}, service.Options{Name: "stuck", StopWithin: 100 * time.Millisecond})
	if err := s.Stop(); err == nil || !strings.Contains(err.Error(), "stuck did not stop within 100ms") {
		t.Errorf("Stop = %v, want it to say the service did not stop", err)
	}
}

// TestExec: Exec starts the process with PORT=0 winning over the test's
// PORT, reads its port from the start-up line, and Stop's SIGTERM ends
// it with status 0.
func TestExec(t *testing.T) {
	t.Setenv("PORT", "1")
	cmd := childCmd("serve")
	s := service.Exec(t, cmd, service.Options{Name: "child"})
	resp, err := http.Get(s.URL + "/livez")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "PORT=0" {
		t.Errorf("the child saw %s, want PORT=0", body)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop = %v, want a clean exit\n%s", err, s.Logs)
	}
	if !strings.Contains(s.Logs.String(), `{"msg":"stopped"}`) {
		t.Errorf("no output after SIGTERM:\n%s", s.Logs)
	}
}

// TestExecFails: Exec fails the test, with the output, when the process
// exits before listening or logs a start-up line without a port; Stop of
// a process that ignores SIGTERM kills it after StopWithin; a process not
// stopped is killed when its test ends.
func TestExecFails(t *testing.T) {
	msg := mustFail(t, func(tb testing.TB) { service.Exec(tb, childCmd("exit"), service.Options{Name: "child"}) })
	for _, want := range []string{"child ended before it served: exit status 3", "config invalid"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure %q lacks %q", msg, want)
		}
	}
	msg = mustFail(t, func(tb testing.TB) { service.Exec(tb, childCmd("noport"), service.Options{Name: "child"}) })
	if !strings.Contains(msg, `start-up line's address "nowhere"`) {
		t.Errorf("failure %q does not name the address", msg)
	}

	s := service.Exec(t, childCmd("stubborn"), service.Options{StopWithin: 300 * time.Millisecond})
	if err := s.Stop(); err == nil || !strings.Contains(err.Error(), "did not stop within 300ms") {
		t.Errorf("Stop of a process ignoring SIGTERM = %v", err)
	}
	select {
	case <-s.Ended():
	default:
		t.Error("the process runs on after Stop gave up on it")
	}

	var left *service.Service
	t.Run("not stopped", func(t *testing.T) { left = service.Exec(t, childCmd("serve"), service.Options{}) })
	select {
	case <-left.Ended():
	default:
		t.Error("a process not stopped runs on after its test")
	}
}

// TestListeningPort: the port comes from the start-up line, whenever it
// is written; without one, the context's cause is in the error.
func TestListeningPort(t *testing.T) {
	var out syncbuf.Buffer
	got := make(chan string, 1)
	go func() {
		port, err := service.ListeningPort(t.Context(), &out)
		if err != nil {
			t.Error(err)
		}
		got <- port
	}()
	fmt.Fprintln(&out, `{"msg":"starting"}`)
	fmt.Fprintln(&out, `{"level":"INFO","msg":"http server listening","addr":"[::]:41234"}`)
	if port := <-got; port != "41234" {
		t.Errorf("ListeningPort = %q, want 41234", port)
	}

	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errors.New("the process exited"))
	if _, err := service.ListeningPort(ctx, &syncbuf.Buffer{}); err == nil || !strings.Contains(err.Error(), "the process exited") {
		t.Errorf("ListeningPort without the line = %v", err)
	}
}
