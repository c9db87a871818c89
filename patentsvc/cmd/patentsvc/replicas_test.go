package main

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/testkit/service"
	"github.com/gatewayapis/testkit/syncbuf"
)

// replica is a patentsvc process started by a test (service.Exec).
type replica struct {
	name string
	base string
	cmd  *exec.Cmd
	logs *syncbuf.Buffer
	svc  *service.Service
}

// buildBinary builds this command into a temporary directory.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "patentsvc")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startReplica runs the binary with exactly env (nothing inherited; PORT=0
// added) as a process of its own, reads the port it took from its start-up
// line and waits for its /livez (service.Exec). It is stopped with SIGTERM
// (stop) or, at the latest, killed when the test ends.
func startReplica(t testing.TB, name, bin string, env map[string]string) *replica {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = []string{} // not nil: nothing inherited
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	s := service.Exec(t, cmd, service.Options{Name: name})
	return &replica{name: name, base: s.URL, cmd: cmd, logs: s.Logs, svc: s}
}

// stop sends SIGTERM and waits, at most 30 s, for a clean exit.
func (r *replica) stop(t testing.TB) {
	t.Helper()
	if err := r.svc.Stop(); err != nil {
		t.Errorf("%s after SIGTERM: %v\n%s", r.name, err, r.logs)
	}
}

// post sends a JSON body and returns the status and Retry-After.
func (r *replica) post(t *testing.T, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(r.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s POST %s: %v", r.name, path, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// TestReplicasShareRateLimits runs two patentsvc processes on one
// PostgreSQL database (a schema of the test's own) and alternates the
// requests of one client (127.0.0.1) between them: the registration and
// the login that go one past the per-IP limit within a minute are 429
// whichever process answers them, with a Retry-After, and both processes
// show the same cluster-wide counters.
func TestReplicasShareRateLimits(t *testing.T) {
	dsn := storetest.DSN(t, store.Postgres) // skips, or fails under REQUIRE_POSTGRES=1, without TEST_DATABASE_URL
	bin := buildBinary(t)
	env := map[string]string{
		"APP_ENV": "production", "JWT_SECRET": strings.Repeat("replica-secret-", 3), "DATABASE_URL": dsn,
		"BCRYPT_COST": "4", "STORAGE_DIR": filepath.Join(t.TempDir(), "patents"),
	}
	a := startReplica(t, "replica A", bin, env)
	b := startReplica(t, "replica B", bin, env)
	replicas := []*replica{a, b}
	started := time.Now()

	// Registrations, 5 a minute: the first (A) makes the admin, then four
	// invalid ones alternate B, A, B, A; the sixth (B) and seventh (A) are
	// refused.
	const creds = `{"email":"ada@example.com","password":"correct horse battery"}`
	if code, _ := a.post(t, "/auth/register", creds); code != http.StatusCreated {
		t.Fatalf("register on A = %d, want 201", code)
	}
	for i := 1; i < 7; i++ {
		r := replicas[i%2]
		code, retry := r.post(t, "/auth/register", `{"email":"nobody","password":"x"}`)
		wantLimited(t, r.name, "register", i+1, code, retry, http.StatusUnprocessableEntity, i >= 5)
	}

	// Logins, 10 a minute: A logs in, then nine wrong passwords alternate
	// B, A, ...; the eleventh (A) and twelfth (B) are refused.
	const wrong = `{"email":"ada@example.com","password":"wrong password"}`
	code, tok := call(t, http.MethodPost, a.base+"/auth/login", "", map[string]string{"email": "ada@example.com", "password": "correct horse battery"})
	if code != http.StatusOK {
		t.Fatalf("login on A = %d, want 200", code)
	}
	token, _ := tok["access_token"].(string)
	for i := 1; i < 12; i++ {
		r := replicas[i%2]
		code, retry := r.post(t, "/auth/login", wrong)
		wantLimited(t, r.name, "login", i+1, code, retry, http.StatusUnauthorized, i >= 10)
	}
	if d := time.Since(started); d > 50*time.Second {
		t.Fatalf("the requests took %v, too close to the one-minute window for the test to mean anything", d)
	}

	// Both processes show the same counters: the cluster's.
	want := `{"rate_limits":[` +
		`{"endpoint":"/auth/register","limit":"5/minute","total_requests":7,"rejected_requests":2},` +
		`{"endpoint":"/auth/login","limit":"10/minute","total_requests":12,"rejected_requests":2}]}`
	for _, r := range replicas {
		if got := adminRateLimits(t, r, token); got != want {
			t.Errorf("%s GET /admin/rate-limits = %s\nwant %s", r.name, got, want)
		}
	}
	for _, r := range replicas {
		r.stop(t)
		if !strings.Contains(r.logs.String(), `"msg":"rate-limit windows kept in the database, shared across replicas"`) {
			t.Errorf("%s did not log that its windows are shared:\n%s", r.name, r.logs)
		}
	}
}

// wantLimited checks the n-th request of a sequence: 429 with a Retry-After
// of 1 to 60 seconds when limited, the endpoint's own status otherwise.
func wantLimited(t *testing.T, name, endpoint string, n, code int, retry string, otherwise int, limited bool) {
	t.Helper()
	if !limited {
		if code != otherwise || retry != "" {
			t.Fatalf("%s %s #%d = %d (Retry-After %q), want %d", endpoint, name, n, code, retry, otherwise)
		}
		return
	}
	secs, err := strconv.Atoi(retry)
	if code != http.StatusTooManyRequests || err != nil || secs < 1 || secs > 60 {
		t.Fatalf("%s %s #%d = %d (Retry-After %q), want 429 with 1..60 seconds", endpoint, name, n, code, retry)
	}
}

// adminRateLimits returns GET /admin/rate-limits' body.
func adminRateLimits(t *testing.T, r *replica, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.base+"/admin/rate-limits", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s GET /admin/rate-limits = %d %s", r.name, resp.StatusCode, body)
	}
	return strings.TrimSpace(string(body))
}
