package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/patentsvc/internal/webhook"
	"github.com/gatewayapis/testkit/wait"
)

// hookReceiver is a webhook endpoint that hangs (never answers) until up
// is set, then answers 200 and records what it accepted.
type hookReceiver struct {
	*httptest.Server
	up       atomic.Bool
	mu       sync.Mutex
	attempts []string // webhook-id of every request
	accepted []string // webhook-id of every request answered 200
	arrived  chan struct{}
}

func newHookReceiver(t *testing.T, secret string) *hookReceiver {
	h := &hookReceiver{arrived: make(chan struct{}, 100)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.Header.Get("webhook-id")
		h.mu.Lock()
		h.attempts = append(h.attempts, id)
		h.mu.Unlock()
		h.arrived <- struct{}{}
		if !h.up.Load() {
			<-r.Context().Done() // down: the request hangs until the client gives up
			return
		}
		if err := webhook.Verify(secret, r.Header, body, time.Now()); err != nil {
			t.Errorf("delivery %s: signature: %v", id, err)
		}
		h.mu.Lock()
		h.accepted = append(h.accepted, id)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) snapshot() (attempts, accepted []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.attempts...), append([]string(nil), h.accepted...)
}

// TestWebhookSurvivesKill9: a job ends and its job.completed delivery is
// committed; the receiver hangs on the first attempt; the process is
// killed with SIGKILL mid-attempt; a new process on the same database
// delivers it within 45 s (its attempt's timeout is 10 minutes: it is the
// dead process's ended session that tells, not a timeout), with the same
// webhook-id, signed, exactly once.
func TestWebhookSurvivesKill9(t *testing.T) {
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			dsn := storetest.DSN(t, dialect)
			if dialect == store.SQLite {
				dsn = "sqlite:" + filepath.Join(t.TempDir(), "patentsvc.db")
			}
			webhookKill9(t, dialect, dsn)
		})
	}
}

func webhookKill9(t *testing.T, dialect, dsn string) {
	st := storetest.Open(t, store.SQLite, time.Now) // only to build the world's fixtures
	w := analysistest.NewWorld(t, st)
	w.Company("Acme Corp", 1)
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	hooks := newHookReceiver(t, secret)
	bin := buildBinary(t)
	env := map[string]string{
		"DATABASE_URL": dsn, "BCRYPT_COST": "4", "STORAGE_DIR": filepath.Join(t.TempDir(), "patents"),
		"SERPAPI_API_KEY": "serp-key", "SERPAPI_BASE_URL": w.Serp.BaseURL(),
		"LLM_API_KEY": "llm-key", "LLM_BASE_URL": w.LLM.BaseURL(), "PDF_ALLOWED_HOSTS": "127.0.0.1",
		"SCHEDULER_ENABLED": "false", "WEBHOOK_URLS": hooks.URL + "/hooks?token=T", "WEBHOOK_SECRET": secret,
		"WEBHOOK_TIMEOUT": "10m", "WEBHOOK_RETRY_SCHEDULE": "1s,1s,1s",
	}
	a := startReplica(t, "first process", bin, env)
	creds := map[string]string{"email": "ada@example.com", "password": "correct horse battery"}
	call(t, "POST", a.base+"/auth/register", "", creds)
	_, tok := call(t, "POST", a.base+"/auth/login", "", creds)
	access, _ := tok["access_token"].(string)
	if code, job := call(t, "POST", a.base+"/analyze/batch/async", access, map[string]any{"companies": []string{"Acme Corp"}}); code != 202 {
		t.Fatalf("async = %d %v\n%s", code, job, a.logs)
	}
	select { // the job ended and the first attempt hangs at the receiver
	case <-hooks.arrived:
	case <-time.After(30 * time.Second):
		t.Fatalf("no webhook attempt within 30s\n%s", a.logs)
	}
	if err := a.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown at all
		t.Fatal(err)
	}
	<-a.svc.Ended()
	killed := time.Now()
	hooks.up.Store(true)

	// The new process sends it again: the dead one's session ended.
	b := startReplica(t, "restarted process", bin, env)
	if !wait.Until(45*time.Second, func() bool { _, accepted := hooks.snapshot(); return len(accepted) > 0 }) {
		t.Fatalf("not delivered within 45s of the restart\n%s", b.logs)
	}
	t.Logf("kill -9 mid-attempt and restart: delivered again %.1fs after the kill", time.Since(killed).Seconds())
	// Every delivery unit ended: no attempt runs or is due, so a second
	// delivery, were there one, has reached the receiver.
	unitsEnded(t, storetest.OpenAt(t, dialect, strings.TrimPrefix(dsn, "sqlite:"), time.Now), patent.KindDelivery)
	attempts, accepted := hooks.snapshot()
	if len(accepted) != 1 || accepted[0] != attempts[0] || attempts[0] == "" {
		t.Errorf("attempts %v, accepted %v: want one accepted delivery with the first attempt's webhook-id", attempts, accepted)
	}
	code, page := call(t, "GET", b.base+"/admin/webhooks/deliveries?status=delivered", access, nil)
	items, _ := page["items"].([]any)
	if code != 200 || len(items) != 1 || items[0].(map[string]any)["id"] != attempts[0] {
		t.Errorf("delivered listing = %d %v, want the delivery", code, page)
	}
	b.stop(t)
}
