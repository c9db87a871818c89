package fakehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatewayapis/testkit/fakehttp"
)

// fake is a fake upstream as the services' fakes are built: a Recorder of
// its own calls, then its own answer.
type fake struct {
	*httptest.Server
	fakehttp.Recorder[string]
}

func newFake(t *testing.T) *fake {
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply, ok := f.Receive(r, r.URL.Path)
		if !ok {
			return
		}
		if reply != nil {
			reply.Write(w)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "own answer")
	}))
	t.Cleanup(f.Close)
	return f
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestScript: scripted replies answer one request each, in order, with
// their status (0 is 200), header, content type and body; then the fake's
// own answers resume. Every call is recorded and counted, in order.
func TestScript(t *testing.T) {
	f := newFake(t)
	f.Script(
		fakehttp.Reply{Status: http.StatusServiceUnavailable, Body: `{"error":"down"}`, ContentType: "application/json", Header: http.Header{"Retry-After": {"7"}}},
		fakehttp.Reply{Body: "<html>garbage"},
	)
	resp, body := get(t, f.URL+"/a")
	if resp.StatusCode != 503 || body != `{"error":"down"}` || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("first answer = %d %v %q", resp.StatusCode, resp.Header, body)
	}
	if resp, body := get(t, f.URL+"/b"); resp.StatusCode != 200 || body != "<html>garbage" {
		t.Errorf("second answer = %d %q, want 200 and the scripted body", resp.StatusCode, body)
	}
	if resp, body := get(t, f.URL+"/c"); resp.StatusCode != 200 || body != "own answer" {
		t.Errorf("third answer = %d %q, want the fake's own", resp.StatusCode, body)
	}
	if got := f.Calls(); !slices.Equal(got, []string{"/a", "/b", "/c"}) || f.CallCount() != 3 {
		t.Errorf("Calls = %v, CallCount = %d", got, f.CallCount())
	}
}

// TestLatency: an answer waits the latency plus the reply's Delay, and a
// client gone during the wait gets nothing written.
func TestLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec fakehttp.Recorder[int]
		rec.SetLatency(time.Second)
		rec.Script(fakehttp.Reply{Delay: 2 * time.Second})
		start := time.Now()
		if reply, ok := rec.Receive(httptest.NewRequest("GET", "/", nil), 1); !ok || reply == nil || reply.Delay != 2*time.Second {
			t.Fatalf("Receive = %v, %v", reply, ok)
		}
		if waited := time.Since(start); waited != 3*time.Second {
			t.Errorf("scripted answer waited %v, want 3s", waited)
		}
		start = time.Now()
		if reply, ok := rec.Receive(httptest.NewRequest("GET", "/", nil), 2); !ok || reply != nil {
			t.Fatalf("Receive = %v, %v; want no reply", reply, ok)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("own answer waited %v, want 1s", waited)
		}

		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(500*time.Millisecond, cancel)
		start = time.Now()
		if _, ok := rec.Receive(httptest.NewRequestWithContext(ctx, "GET", "/", nil), 3); ok {
			t.Error("Receive = ok after the client went away")
		}
		if waited := time.Since(start); waited != 500*time.Millisecond {
			t.Errorf("Receive waited %v for a client gone after 500ms", waited)
		}
		if got := rec.Calls(); !slices.Equal(got, []int{1, 2, 3}) {
			t.Errorf("Calls = %v", got)
		}
	})
}

// TestWaitCalls: WaitCalls returns when the n-th call is received, not
// before, and with the context's cause when it ends first.
func TestWaitCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec fakehttp.Recorder[int]
		done := make(chan error, 1)
		go func() { done <- rec.WaitCalls(t.Context(), 2) }()
		rec.Receive(httptest.NewRequest("GET", "/", nil), 1)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("WaitCalls(2) returned %v after one call", err)
		default:
		}
		rec.Receive(httptest.NewRequest("GET", "/", nil), 2)
		if err := <-done; err != nil {
			t.Fatalf("WaitCalls(2) = %v after two calls", err)
		}

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := rec.WaitCalls(ctx, 3); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("WaitCalls(3) with two calls = %v, want the deadline", err)
		}
	})
}
