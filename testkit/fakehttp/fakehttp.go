// Package fakehttp is the scaffolding the recorded-answer fakes of the
// services' upstreams share (vinsvc's vpictest, patentsvc's serpapitest
// and llmtest): the calls received, kept in order, counted and waited for;
// scripted replies, answered one per request before the upstream's own
// answers resume (an error status, a garbage body, a header); and latency
// added to every answer (a slow upstream, a timeout). What a call holds,
// and what the upstream answers in its own format, stay in each fake's
// package.
//
// A fake embeds a Recorder of its own Call type in its server and calls
// Receive first in its handler:
//
//	reply, ok := s.Receive(r, call)
//	if !ok {
//		return // the client went away while the answer was delayed
//	}
//	if reply != nil {
//		reply.Write(w)
//		return
//	}
//	// the upstream's own answer
package fakehttp

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gatewayapis/testkit/internal/wake"
)

// Reply is a scripted answer. Status 0 means 200.
type Reply struct {
	Status      int
	Body        string
	ContentType string      // set when not empty
	Header      http.Header // copied into the answer's header
	Delay       time.Duration
}

// Write writes r: Header's fields, Content-Type when ContentType is set,
// the status and Body.
func (r Reply) Write(w http.ResponseWriter) {
	for k, vs := range r.Header {
		w.Header()[k] = vs
	}
	if r.ContentType != "" {
		w.Header().Set("Content-Type", r.ContentType)
	}
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	io.WriteString(w, r.Body)
}

// Recorder keeps a fake's calls, of the fake's own type C, its scripted
// replies and its latency. The zero value is ready. It is safe for
// concurrent use.
type Recorder[C any] struct {
	mu       sync.Mutex
	calls    []C
	script   []Reply
	latency  time.Duration
	received wake.Chan
}

// Script queues replies, one per request, before the fake's own answers
// resume.
func (r *Recorder[C]) Script(replies ...Reply) {
	r.mu.Lock()
	r.script = append(r.script, replies...)
	r.mu.Unlock()
}

// SetLatency delays every answer by d, a scripted reply's by d plus its
// Delay.
func (r *Recorder[C]) SetLatency(d time.Duration) {
	r.mu.Lock()
	r.latency = d
	r.mu.Unlock()
}

// Calls returns the calls received so far, in order (a new slice; the
// calls themselves are shallow copies).
func (r *Recorder[C]) Calls() []C {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]C(nil), r.calls...)
}

// CallCount returns how many calls were received.
func (r *Recorder[C]) CallCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// WaitCalls returns nil once n calls have been received, or the cause of
// ctx's end if that comes first. A call counts when Receive records it,
// before its answer is delayed or written.
func (r *Recorder[C]) WaitCalls(ctx context.Context, n int) error {
	return wake.Until(ctx, &r.mu, &r.received, func() bool { return len(r.calls) >= n })
}

// Receive records call and takes the next scripted reply, if any; then it
// waits the latency (SetLatency's, plus the reply's Delay). It returns
// the reply, nil when none was scripted, and false when req's context
// ended during the wait: the client went away, and the fake answers
// nothing. It is the fake's handler's, not its tests'.
func (r *Recorder[C]) Receive(req *http.Request, call C) (*Reply, bool) {
	r.mu.Lock()
	r.calls = append(r.calls, call)
	r.received.Broadcast()
	delay := r.latency
	var reply *Reply
	if len(r.script) > 0 {
		next := r.script[0]
		reply = &next
		r.script = r.script[1:]
		delay += reply.Delay
	}
	r.mu.Unlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-req.Context().Done():
			return reply, false
		}
	}
	return reply, true
}
