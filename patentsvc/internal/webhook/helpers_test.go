package webhook_test

import (
	"bytes"
	"context"
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
)

// fastSchedule keeps retry tests quick: 4 attempts, 5 ms apart.
var fastSchedule = []time.Duration{5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond}

// newDispatcher returns a dispatcher for urls on an in-memory store, with
// fastSchedule and a 10 ms poll; run starts it.
func newDispatcher(tb testing.TB, urls []string, secret string, logger *slog.Logger) *webhook.Dispatcher {
	tb.Helper()
	return webhook.New(context.Background(), webhook.Config{URLs: urls, Secret: secret, Timeout: 5 * time.Second,
		Schedule: fastSchedule, Owner: "test", Poll: 10 * time.Millisecond}, newMemStore(), logger)
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

// memStore is webhook.Store in memory, with the claim rules of the real
// one (store.ClaimDeliveries), for tests that need no database.
type memStore struct {
	mu   sync.Mutex
	rows map[string]*memRow
	seq  []string // insertion order
}

type memRow struct {
	d            patent.Delivery
	claimedBy    string
	claimedUntil time.Time
}

var _ webhook.Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{rows: map[string]*memRow{}} }

func (m *memStore) add(ds []patent.Delivery) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for _, d := range ds {
		d.Status, d.NextAttemptAt, d.CreatedAt = patent.DeliveryPending, &now, now
		m.rows[d.ID] = &memRow{d: d}
		m.seq = append(m.seq, d.ID)
	}
}

func (m *memStore) ClaimDeliveries(_ context.Context, owner string, limit int, lease time.Duration) ([]patent.Delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	var out []patent.Delivery
	for _, id := range m.seq {
		r := m.rows[id]
		if len(out) == limit || r.d.Status != patent.DeliveryPending || r.d.NextAttemptAt.After(now) || r.claimedUntil.After(now) {
			continue
		}
		r.claimedBy, r.claimedUntil = owner, now.Add(lease)
		out = append(out, r.d)
	}
	return out, nil
}

func (m *memStore) RecordAttempt(_ context.Context, id, owner string, a patent.Attempt) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rows[id]
	if r == nil || r.claimedBy != owner || r.d.Status != patent.DeliveryPending {
		return patent.ErrConflict
	}
	r.d.Status, r.d.Attempts, r.claimedBy, r.claimedUntil = a.Status, r.d.Attempts+1, "", time.Time{}
	next := a.NextAttemptAt
	r.d.NextAttemptAt = &next
	if a.StatusCode != 0 {
		code := a.StatusCode
		r.d.LastStatusCode = &code
	}
	return nil
}

func (m *memStore) ReleaseDelivery(_ context.Context, id, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.rows[id]; r != nil && r.claimedBy == owner {
		r.claimedBy, r.claimedUntil = "", time.Time{}
	}
	return nil
}

func (m *memStore) PendingDeliveries(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, r := range m.rows {
		if r.d.Status == patent.DeliveryPending {
			n++
		}
	}
	return n, nil
}

func (m *memStore) PruneDeliveries(context.Context, time.Time, time.Time) (int64, error) {
	return 0, nil
}

// logBuffer collects a dispatcher's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// count is the number of log lines holding every one of subs.
func (b *logBuffer) count(subs ...string) int {
	n := 0
	for line := range strings.Lines(b.String()) {
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
	deadline := time.Now().Add(10 * time.Second)
	for b.count(subs...) < n {
		if time.Now().After(deadline) {
			tb.Fatalf("no %d log lines with %q after 10s; logs:\n%s", n, subs, b.String())
		}
		time.Sleep(5 * time.Millisecond)
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

// deadEndpoint accepts requests and never answers until the test ends.
func deadEndpoint(tb testing.TB) *receiver {
	tb.Helper()
	release := make(chan struct{})
	rc := newReceiver(tb, func(_ int, _ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	tb.Cleanup(func() { close(release) }) // runs before rc.Close
	return rc
}

// closedURL returns a URL on which nothing listens.
func closedURL(tb testing.TB, pathAndQuery string) string {
	tb.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL + pathAndQuery
	srv.Close()
	return u
}

// run starts d.Run; at cleanup it shuts d down (cutting what is left
// after 5s) and waits for Run to return.
func run(tb testing.TB, d *webhook.Dispatcher) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	tb.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = d.Shutdown(sctx)
		cancel()
		<-done
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
