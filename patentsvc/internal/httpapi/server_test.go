package httpapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gatewayapis/patentsvc/internal/analysis"
	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/httpapi"
	"github.com/gatewayapis/patentsvc/internal/jobs"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/queue"
	"github.com/gatewayapis/patentsvc/internal/ratelimit"
	"github.com/gatewayapis/patentsvc/internal/reports"
	"github.com/gatewayapis/patentsvc/internal/schedule"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/patentsvc/internal/tracking"
	"github.com/gatewayapis/patentsvc/internal/webhook"
	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/testkit/syncbuf"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const (
	jwtSecret  = "test-jwt-secret-0123456789abcdef-do-not-log"
	accessTTL  = 30 * time.Minute
	refreshTTL = 168 * time.Hour
	password   = "correct horse battery"
	adminEmail = "admin@example.com"
)

// epoch is where every test clock starts; goldens rely on it.
var epoch = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// clock is a settable clock, safe for concurrent use. Token expiry and
// rate-limit windows are tested by moving it, never by sleeping.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is the service wired as run wires it: a real store, real auth, real
// rate-limit windows, all on one test clock.
type env struct {
	srv    http.Handler
	st     *store.Store
	clk    *clock
	logs   *syncbuf.Buffer
	limits httpapi.Limits
	root   string
	nextIP atomic.Uint32
	world  *analysistest.World
	runner *jobs.Runner
	q      *queue.Queue
	sched  *schedule.Scheduler // withScheduler only; no ticks
}

type options struct {
	dialect         string
	rootPath        string
	trusted         []netip.Prefix
	analyzerMissing []string
	storeLogs       bool
	version         string
	demo            bool
	noDocs          bool // DOCS_ENABLED=false
	sharedLimits    bool
	scheduler       bool // withScheduler
	jobs            jobs.Config
	pdf             export.PDFOptions
	extract         func(analysis.Extractor) analysis.Extractor
}

type option func(*options)

func onDialect(d string) option   { return func(o *options) { o.dialect = d } }
func withVersion(v string) option { return func(o *options) { o.version = v } }

// demo marks the server as make demo's (health says demo: true).
func demo() option                 { return func(o *options) { o.demo = true } }
func withRootPath(p string) option { return func(o *options) { o.rootPath = p } }

// withoutDocs turns the API reference off (DOCS_ENABLED=false).
func withoutDocs() option { return func(o *options) { o.noDocs = true } }
func withAnalyzerMissing(names ...string) option {
	return func(o *options) { o.analyzerMissing = names }
}

// withStoreLogs sends the store's own logs (GORM statements at DEBUG) to
// the env's log buffer too.
func withStoreLogs() option { return func(o *options) { o.storeLogs = true } }

// withSharedLimits keeps the rate-limit windows in the database whatever
// the dialect (run does so on PostgreSQL only).
func withSharedLimits() option { return func(o *options) { o.sharedLimits = true } }

// withScheduler wires a real scheduler (env.sched, without ticks) on the
// env's store, analyzer and clock, whose runs the env's queue runs. Its
// interval is a day.
func withScheduler() option { return func(o *options) { o.scheduler = true } }

// withJobs sets the job settings (default: 10 a user, a minute each).
func withJobs(cfg jobs.Config) option { return func(o *options) { o.jobs = cfg } }

// withPDF draws the PDF exports as opts say (fonts).
func withPDF(opts export.PDFOptions) option { return func(o *options) { o.pdf = opts } }

// withExtract wraps the analysis pipeline's PDF extractor.
func withExtract(wrap func(analysis.Extractor) analysis.Extractor) option {
	return func(o *options) { o.extract = wrap }
}

func withTrustedProxies(cidrs ...string) option {
	return func(o *options) {
		for _, c := range cidrs {
			o.trusted = append(o.trusted, netip.MustParsePrefix(c))
		}
	}
}

// databaseDown closes the env's store: every later query fails, as with
// the database gone. The work queue stops first, while it still can: a
// queue left on a closed store spends its whole shutdown timeout (10 s)
// at the test's end trying to give its leadership back, and the tests
// that take the database away are about the HTTP answers, not the queue.
func (en *env) databaseDown(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := en.q.Shutdown(ctx); err != nil {
		t.Fatalf("stop the work queue: %v", err)
	}
	if err := en.st.Close(); err != nil {
		t.Fatal(err)
	}
}

func newEnv(t testing.TB, opts ...option) *env {
	t.Helper()
	o := options{dialect: store.SQLite}
	for _, f := range opts {
		f(&o)
	}
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clk := &clock{t: epoch}

	// The store; its work queue, whose workers run the env's jobs and
	// scheduled runs, is built once they exist.
	dsn := storetest.DSN(t, o.dialect)
	var st *store.Store
	if o.storeLogs {
		var err error
		st, err = store.Open(context.Background(), o.dialect, dsn, store.Pool{MaxOpen: 10, MaxIdle: 5, MaxLifetime: time.Minute}, logger, clk.Now)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
	} else {
		st = storetest.OpenAt(t, o.dialect, dsn, clk.Now)
	}

	authn, err := auth.New(st.Users(), []byte(jwtSecret), nil, accessTTL, refreshTTL, bcrypt.MinCost, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	// The windows are wired as run wires them: in the database on
	// PostgreSQL, in the process on SQLite (unless the test shares them).
	var cluster *ratelimit.Cluster
	if o.dialect == store.Postgres || o.sharedLimits {
		cluster = ratelimit.NewCluster(st.RateWindows(), ratelimit.StoreTimeout, logger, clk.Now)
	}
	limits := httpapi.NewLimits(clk.Now, cluster)
	// The analysis pipeline is real, around fakes of the search API, the
	// LLM gateway and the PDF host.
	world := analysistest.NewWorld(t, st)
	world.Extract = o.extract
	analyzer := world.Analyzer(logger)
	if o.jobs == (jobs.Config{}) {
		o.jobs = jobs.Config{MaxPerUser: 10, Timeout: time.Minute}
	}
	runner := jobs.NewRunner(o.jobs, st.Jobs(), st.Jobs(), analyzer, nil, logger, clk.Now)
	qcfg, workers := queue.Config{JobWorkers: 2}, queue.Workers{Jobs: runner}
	var sched *schedule.Scheduler
	if o.scheduler {
		sched = schedule.New(schedule.Config{Interval: 24 * time.Hour, Threshold: 20, NewPatentAlerts: true}, st.Tracking(), analyzer, nil, logger, clk.Now)
		qcfg.ScheduledWorkers, workers.Runs = 2, sched
	}
	q := storetest.NewQueue(t, st, dsn, qcfg, workers)
	storetest.StartQueue(t, q)
	srv := httpapi.NewServer(logger, httpapi.Options{
		Version:         o.version,
		Demo:            o.demo,
		Docs:            !o.noDocs,
		RootPath:        o.rootPath,
		CORSOrigins:     []string{"http://localhost:3000", "http://localhost:5173"},
		TrustedProxies:  o.trusted,
		DefaultModel:    patent.DefaultModel,
		AnalyzerMissing: o.analyzerMissing,
		Scheduler:       "disabled",
		PDF:             o.pdf,
	}, httpapi.Deps{
		Users: authn, Analyses: analyzer, Jobs: runner, Tracking: tracking.New(st.Tracking(), clk.Now), Reports: reports.New(st.Analyses(), st.Tracking(), clk.Now),
		Deliveries: webhook.NewAdmin(st.Deliveries()), Database: st, Limits: limits, Registry: observe.NewRegistry(),
		Started: epoch.Add(-90 * time.Second), Now: clk.Now,
	})
	return &env{srv: srv, st: st, q: q, clk: clk, logs: logs, limits: limits, root: o.rootPath, world: world, runner: runner, sched: sched}
}

// eachDialect runs fn once per database dialect; the PostgreSQL subtest
// skips (visibly) without TEST_DATABASE_URL.
func eachDialect(t *testing.T, fn func(t *testing.T, dialect string)) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) { fn(t, d) })
	}
}

type request struct {
	method  string
	target  string
	body    string
	token   string // sent as "Authorization: Bearer <token>"
	remote  string // RemoteAddr; empty: a fresh address for every request
	headers map[string]string
}

// freshAddr returns a client address no other request of the env used, so
// requests that do not test rate limits never trip them.
func (en *env) freshAddr() string {
	n := en.nextIP.Add(1)
	return fmt.Sprintf("198.18.%d.%d:1234", n/250, n%250+1)
}

func (en *env) do(t testing.TB, r request) *httptest.ResponseRecorder {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, en.root+r.target, body)
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.RemoteAddr = r.remote
	if req.RemoteAddr == "" {
		req.RemoteAddr = en.freshAddr()
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	en.srv.ServeHTTP(rec, req)
	if rec.Header().Get("X-Request-Id") == "" {
		t.Errorf("%s %s: no X-Request-Id header", r.method, r.target)
	}
	return rec
}

func decode(t testing.TB, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("body %q is not JSON: %v", rec.Body.String(), err)
	}
}

// keys returns the sorted top-level keys of a JSON object body.
func keys(t testing.TB, body []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", body, err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func wantKeys(t testing.TB, body []byte, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := keys(t, body); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("body %s has keys %v, want exactly %v", body, got, want)
	}
}

func wantStatus(t testing.TB, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
}

// written remembers the goldens rewritten in this run, so that a test run
// per dialect compares the second dialect's body with the first's instead
// of overwriting it.
var written sync.Map

// golden compares body, indented, with testdata/name.golden.
func golden(t testing.TB, name string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(body), "", "  "); err != nil {
		t.Fatalf("%s: body is not JSON: %v\n%s", name, err, body)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name+".golden")
	if _, done := written.LoadOrStore(name, true); *update && !done {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/httpapi -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s: body differs from %s\ngot:\n%s\nwant:\n%s", name, path, buf.Bytes(), want)
	}
}

type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

type errorBody struct {
	Detail string       `json:"detail"`
	Errors []fieldError `json:"errors"`
}

// wantError checks the status and that the body is the service's error
// body: {"detail"} only, plus a non-empty "errors" on 422. A non-empty
// detail must match exactly. A 401 must carry WWW-Authenticate: Bearer.
func wantError(t testing.TB, rec *httptest.ResponseRecorder, status int, detail string) errorBody {
	t.Helper()
	wantStatus(t, rec, status)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if status == http.StatusUnprocessableEntity {
		wantKeys(t, rec.Body.Bytes(), "detail", "errors")
	} else {
		wantKeys(t, rec.Body.Bytes(), "detail")
	}
	var b errorBody
	decode(t, rec, &b)
	if b.Detail == "" || detail != "" && b.Detail != detail {
		t.Errorf("detail = %q, want %q", b.Detail, detail)
	}
	if status == http.StatusUnprocessableEntity {
		if len(b.Errors) == 0 {
			t.Errorf("422 without errors: %s", rec.Body)
		}
		for _, fe := range b.Errors {
			if fe.Message == "" {
				t.Errorf("field error %+v has no message", fe)
			}
		}
	}
	wwwAuth := rec.Header().Get("WWW-Authenticate")
	if status == http.StatusUnauthorized && wwwAuth != "Bearer" {
		t.Errorf("401 with WWW-Authenticate %q, want Bearer", wwwAuth)
	}
	if status != http.StatusUnauthorized && wwwAuth != "" {
		t.Errorf("%d with WWW-Authenticate %q, want none", status, wwwAuth)
	}
	return b
}

type userBody struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

type tokenBody struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
}

func credentials(email, pw string) string {
	b, _ := json.Marshal(map[string]string{"email": email, "password": pw})
	return string(b)
}

// register registers email with the package password; it must answer 201.
func (en *env) register(t testing.TB, email string) userBody {
	t.Helper()
	rec := en.do(t, request{method: http.MethodPost, target: "/auth/register", body: credentials(email, password)})
	wantStatus(t, rec, http.StatusCreated)
	var u userBody
	decode(t, rec, &u)
	return u
}

// login logs email in with the package password; it must answer 200.
func (en *env) login(t testing.TB, email string) tokenBody {
	t.Helper()
	rec := en.do(t, request{method: http.MethodPost, target: "/auth/login", body: credentials(email, password)})
	wantStatus(t, rec, http.StatusOK)
	var tok tokenBody
	decode(t, rec, &tok)
	if tok.AccessToken == "" || tok.RefreshToken == "" {
		t.Fatalf("login answered %s", rec.Body)
	}
	return tok
}

// newUser registers and logs in email.
func (en *env) newUser(t testing.TB, email string) (userBody, tokenBody) {
	t.Helper()
	u := en.register(t, email)
	return u, en.login(t, email)
}

// admin registers the first user (the admin) and returns it and its access
// token. It must be the env's first registration.
func (en *env) admin(t testing.TB) (userBody, string) {
	t.Helper()
	u, tok := en.newUser(t, adminEmail)
	if u.Role != "admin" {
		t.Fatalf("first user %+v is not admin", u)
	}
	return u, tok.AccessToken
}

// forge builds a JWT by hand: header and claims as given, signed with
// HMAC-SHA256 or -SHA512 (alg "HS256"/"HS512" picks it; any other alg is
// signed with HMAC-SHA256 when key is set) or unsigned when key is nil.
func forge(t testing.TB, header, claims map[string]any, key []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := enc(header) + "." + enc(claims)
	if key == nil {
		return signing + "."
	}
	newHash := sha256.New
	if header["alg"] == "HS512" {
		newHash = func() hash.Hash { return sha512.New() }
	}
	mac := hmac.New(newHash, key)
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// accessClaims are valid access-token claims for user id at now.
func accessClaims(id int64, now time.Time) map[string]any {
	return map[string]any{
		"sub":   fmt.Sprint(id),
		"email": adminEmail,
		"role":  "admin",
		"typ":   "access",
		"iat":   now.Unix(),
		"exp":   now.Add(accessTTL).Unix(),
		"jti":   "11111111-2222-3333-4444-555555555555",
	}
}

var hs256 = map[string]any{"alg": "HS256", "typ": "JWT"}
