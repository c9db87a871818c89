package webhook_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/webhook"
	"github.com/gatewayapis/testkit/syncbuf"
)

// fastSchedule keeps retry tests quick: 4 attempts, 5 ms apart.
var fastSchedule = []time.Duration{5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond}

// newDispatcher returns a dispatcher for urls on an in-memory store, with
// fastSchedule; run makes the attempts its deliveries ask for.
func newDispatcher(tb testing.TB, urls []string, secret string, logger *slog.Logger) *webhook.Dispatcher {
	tb.Helper()
	return webhook.New(context.Background(), webhook.Config{URLs: urls, Secret: secret, Timeout: 5 * time.Second,
		Schedule: fastSchedule}, newMemStore(), logger)
}

// send composes e's deliveries and stores them in d's in-memory store.
func send(tb testing.TB, d *webhook.Dispatcher, e webhook.Event) []patent.Delivery {
	tb.Helper()
	ds, err := webhook.Compose(d, e)
	if err != nil {
		tb.Fatalf("compose %s: %v", e.Type, err)
	}
	webhook.StoreOf(d).(*memStore).add(ds)
	return ds
}

// memStore is webhook.Store in memory, with the rules of the real one
// (an attempt is recorded only while the delivery is pending), for tests
// that need no database. Its due times (due) stand in for the queue's
// units: run attempts what is due.
type memStore struct {
	mu   sync.Mutex
	rows map[string]*patent.Delivery
	due  map[string]time.Time
	seq  []string // insertion order
}

var _ webhook.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{rows: map[string]*patent.Delivery{}, due: map[string]time.Time{}}
}

func (m *memStore) add(ds []patent.Delivery) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for _, d := range ds {
		d.Status, d.NextAttemptAt, d.CreatedAt = patent.DeliveryPending, &now, now
		m.rows[d.ID] = &d
		m.due[d.ID] = now
		m.seq = append(m.seq, d.ID)
	}
}

func (m *memStore) Delivery(_ context.Context, id string) (patent.Delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.rows[id]
	if !ok {
		return patent.Delivery{}, patent.ErrNotFound
	}
	return *d, nil
}

func (m *memStore) RecordAttempt(_ context.Context, id string, a patent.Attempt) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.rows[id]
	if d == nil || d.Status != patent.DeliveryPending {
		return patent.ErrConflict
	}
	d.Status, d.Attempts = a.Status, d.Attempts+1
	next := a.NextAttemptAt
	d.NextAttemptAt = &next
	if a.StatusCode != 0 {
		code := a.StatusCode
		d.LastStatusCode = &code
	}
	return nil
}

func (m *memStore) SweepDeliveries(context.Context, string) (int64, int64, error) { return 0, 0, nil }

func (m *memStore) ReleaseDeadUnits(context.Context) (int64, error) { return 0, nil }

func (m *memStore) PendingDeliveries(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, d := range m.rows {
		if d.Status == patent.DeliveryPending {
			n++
		}
	}
	return n, nil
}

func (m *memStore) PruneDeliveries(context.Context, time.Time, time.Time) (int64, error) {
	return 0, nil
}

// dueNow lists the pending deliveries whose attempt is due, and marks them
// taken (as the queue marks a unit running).
func (m *memStore) dueNow() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	var out []string
	for _, id := range m.seq {
		if at, ok := m.due[id]; ok && !at.After(now) && m.rows[id].Status == patent.DeliveryPending {
			out = append(out, id)
			delete(m.due, id)
		}
	}
	return out
}

// settle records what an attempt's unit asked for: to run again later, or
// (an error) at once.
func (m *memStore) settle(id string, err error) {
	var later *patent.LaterError
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case errors.As(err, &later):
		m.due[id] = time.Now().Add(later.After)
	case err != nil:
		m.due[id] = time.Now()
	}
}

// logBuffer collects a dispatcher's JSON log lines; each write wakes
// waitFor.
type logBuffer struct {
	syncbuf.Buffer
}

// countLines is the number of lines of text holding every one of subs.
func countLines(text string, subs ...string) int {
	n := 0
	for line := range strings.Lines(text) {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}

// waitFor waits until n log lines hold every one of subs.
func (b *logBuffer) waitFor(tb testing.TB, n int, subs ...string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if text, err := b.WaitFor(ctx, func(text string) bool { return countLines(text, subs...) >= n }); err != nil {
		tb.Fatalf("no %d log lines with %q after 10s; logs:\n%s", n, subs, text)
	}
}

func newLogger() (*slog.Logger, *logBuffer) {
	b := new(logBuffer)
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// delivery is one request a receiver got.
type delivery struct {
	path   string // path and query as received
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a webhook endpoint on loopback that records every request
// and answers with respond (n counts requests from 1); nil answers 200 ok.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []delivery
	arrived chan struct{}
}

func newReceiver(tb testing.TB, respond func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	tb.Helper()
	rc := &receiver{arrived: make(chan struct{}, 1000)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{path: r.URL.RequestURI(), header: r.Header.Clone(), body: body, at: time.Now()})
		n := len(rc.got)
		rc.mu.Unlock()
		rc.arrived <- struct{}{}
		if respond == nil {
			io.WriteString(w, "ok")
			return
		}
		respond(n, w, r)
	}))
	tb.Cleanup(rc.Close)
	return rc
}

// status answers the statuses in turn, the last one for ever after.
func status(codes ...int) func(int, http.ResponseWriter, *http.Request) {
	return func(n int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(codes[min(n, len(codes))-1])
	}
}

// deliveries returns what has arrived so far.
func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// waitN waits until n requests have arrived and returns them.
func (rc *receiver) waitN(tb testing.TB, n int, within time.Duration) []delivery {
	tb.Helper()
	timeout := time.After(within)
	for len(rc.deliveries()) < n {
		select {
		case <-rc.arrived:
		case <-timeout:
			tb.Fatalf("receiver got %d requests within %v, want %d", len(rc.deliveries()), within, n)
		}
	}
	return rc.deliveries()
}

// closedURL returns a URL on which nothing listens.
func closedURL(tb testing.TB, pathAndQuery string) string {
	tb.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL + pathAndQuery
	srv.Close()
	return u
}

// run stands in for the work queue of d's in-memory store: every 2 ms it
// makes the due attempts (d.Deliver), each in a goroutine of its own as
// the queue's workers do, and keeps each delivery's next due time from
// what Deliver returns. It stops when the test ends.
func run(tb testing.TB, d *webhook.Dispatcher) {
	tb.Helper()
	m := webhook.StoreOf(d).(*memStore)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			for _, id := range m.dueNow() {
				wg.Go(func() { m.settle(id, d.Deliver(ctx, patent.DeliveryAttempt{DeliveryID: id})) })
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// rewrite sends requests for the hosts of routes to other servers, keeping
// path and query: hooks.slack.com cannot be an httptest host.
type rewrite map[string]string // host -> test server URL

func (rw rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	if to, ok := rw[r.URL.Host]; ok {
		u, err := url.Parse(to)
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, ""
	}
	return http.DefaultTransport.RoundTrip(r)
}
