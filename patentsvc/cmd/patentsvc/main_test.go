package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/patentsvc/internal/webhook"
	"github.com/gatewayapis/testkit/service"
	"github.com/gatewayapis/testkit/syncbuf"
	"github.com/gatewayapis/testkit/wait"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// handOver is serve's listen for a listener the test opened: PORT is not
// used.
func handOver(ln net.Listener) func(int) (net.Listener, error) {
	return func(int) (net.Listener, error) { return ln, nil }
}

// closedAddr is an address nothing listens on (a port the kernel picked,
// closed again), for a setting that must point at nothing; nothing binds
// it.
func closedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs the service as main does, on a listener of the test's own
// (service.Start), and returns its base URL (ROOT_PATH included), a stop
// function returning serve's error, and its log.
func start(t *testing.T, env map[string]string) (string, func() error, *syncbuf.Buffer) {
	t.Helper()
	root := env["ROOT_PATH"]
	s := service.Start(t, func(ctx context.Context, ln net.Listener, logs io.Writer) error {
		return serve(ctx, handOver(ln), func(k string) string { return env[k] }, logs)
	}, service.Options{Name: "patentsvc", Ready: []string{root + "/livez"}})
	return s.URL + root, s.Stop, s.Logs
}

func call(t testing.TB, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestRunEndToEnd runs the service on each database, registers, logs in,
// makes a user call and an admin call, and shuts down cleanly.
func TestRunEndToEnd(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			if d == store.SQLite {
				// Outside development SQLite must be named as such.
				dsn = "sqlite:" + filepath.Join(t.TempDir(), "data", "patentsvc.db")
			}
			secret := strings.Repeat("e2e-secret-", 4)
			base, stop, logs := start(t, map[string]string{
				"APP_ENV": "production", "JWT_SECRET": secret, "DATABASE_URL": dsn, "BCRYPT_COST": "4", "ROOT_PATH": "/patents",
				"STORAGE_DIR": filepath.Join(t.TempDir(), "patents"),
			})
			creds := map[string]string{"email": "Ada@Example.com", "password": "correct horse battery"}
			if code, body := call(t, "POST", base+"/auth/register", "", creds); code != 201 || body["role"] != "admin" || body["email"] != "ada@example.com" {
				t.Fatalf("register = %d %v", code, body)
			}
			code, tok := call(t, "POST", base+"/auth/login", "", creds)
			if code != 200 || tok["token_type"] != "bearer" {
				t.Fatalf("login = %d %v", code, tok)
			}
			access := tok["access_token"].(string)
			if code, me := call(t, "GET", base+"/auth/me", access, nil); code != 200 || me["email"] != "ada@example.com" {
				t.Errorf("me = %d %v", code, me)
			}
			if code, tr := call(t, "POST", base+"/admin/tracked", access, map[string]string{"company_name": "Acme Corp"}); code != 201 || tr["company_name"] != "Acme Corp" {
				t.Errorf("track = %d %v", code, tr)
			}
			if code, h := call(t, "GET", base+"/health", "", nil); code != 200 || h["database"] != "ok" || h["analyzer"] != "not_configured" {
				t.Errorf("health = %d %v", code, h)
			}
			if err := stop(); err != nil {
				t.Fatalf("run = %v after shutdown\n%s", err, logs)
			}
			out := logs.String()
			if !strings.Contains(out, `"msg":"pdf storage ready","backend":"local"`) {
				t.Errorf("no storage check logged:\n%s", out)
			}
			if !strings.Contains(out, `"msg":"patentsvc stopped"`) {
				t.Errorf("no clean stop logged:\n%s", out)
			}
			for _, leak := range []string{secret, "correct horse battery", access} {
				if strings.Contains(out, leak) {
					t.Errorf("logs contain a secret (%.12s...)", leak)
				}
			}
		})
	}
}

// TestRunChecksStorage: a PDF store that does not answer is reported at
// start-up, without its address, and does not stop the service (readiness
// depends on the database alone); one that answers is reported ready.
func TestRunChecksStorage(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	s3 := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	defer s3.Close()
	if code, _ := call(t, http.MethodPut, s3.URL+"/pdfs", "", nil); code != http.StatusOK {
		t.Fatalf("create bucket = %d", code)
	}
	closed := closedAddr(t)
	for _, tt := range []struct {
		name, endpoint, bucket, want string
	}{
		{"answers", s3.URL, "pdfs", `"msg":"pdf storage ready","backend":"s3"`},
		{"missing bucket", s3.URL, "nope", `"msg":"pdf storage check failed; PDFs cannot be stored until it answers","backend":"s3"`},
		{"unreachable", "http://" + closed, "pdfs", `"msg":"pdf storage check failed; PDFs cannot be stored until it answers","backend":"s3"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			base, stop, logs := start(t, map[string]string{
				"DATABASE_URL": filepath.Join(dir, "patentsvc.db"), "STORAGE_BACKEND": "s3",
				"S3_BUCKET": tt.bucket, "S3_ENDPOINT_URL": tt.endpoint,
			})
			if code, _ := call(t, "GET", base+"/readyz", "", nil); code != 200 {
				t.Errorf("readyz = %d, want 200 whatever the PDF store says", code)
			}
			if err := stop(); err != nil {
				t.Fatalf("run = %v\n%s", err, logs)
			}
			out := logs.String()
			if !strings.Contains(out, tt.want) {
				t.Errorf("logs lack %s:\n%s", tt.want, out)
			}
			if strings.Contains(out, closed) {
				t.Errorf("logs carry the store's address %s:\n%s", closed, out)
			}
		})
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"default jwt secret in production": {"APP_ENV": "production"},
		"short jwt secret in production":   {"APP_ENV": "production", "JWT_SECRET": "short"},
		"unknown model":                    {"MODEL": "nope/nope"},
	} {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), []string{"patentsvc"}, func(k string) string { return env[k] }, io.Discard)
			if err == nil {
				t.Fatal("run started, want a configuration error")
			}
		})
	}
}

// TestRunPDFFonts: a PDF_FONT_PATH that cannot be loaded stops start-up
// with an error naming it; a good one starts.
func TestRunPDFFonts(t *testing.T) {
	dir := t.TempDir()
	collection := filepath.Join(dir, "fonts.ttc")
	if err := os.WriteFile(collection, append([]byte("ttcf"), make([]byte, 64)...), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join("..", "..", "internal", "export", "testdata", "fonts", "DroidSansFallback-subset.ttf")
	for _, tt := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"missing", map[string]string{"PDF_FONT_PATH": filepath.Join(dir, "nope.ttf")}, []string{"PDF_FONT_PATH", "nope.ttf", "no such file"}},
		{"collection", map[string]string{"PDF_FONT_PATH": collection}, []string{"PDF_FONT_PATH", "fonts.ttc", "collection"}},
		{"bad bold", map[string]string{"PDF_FONT_PATH": good, "PDF_FONT_BOLD_PATH": collection}, []string{"PDF_FONT_BOLD_PATH", "fallback bold font", "collection"}},
		{"missing bold", map[string]string{"PDF_FONT_PATH": good, "PDF_FONT_BOLD_PATH": filepath.Join(dir, "bold.ttf")}, []string{"PDF_FONT_BOLD_PATH", "bold.ttf"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), []string{"patentsvc"}, func(k string) string { return tt.env[k] }, io.Discard)
			if err == nil {
				t.Fatal("run started, want a font error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("run error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("good", func(t *testing.T) {
		base, stop, logs := start(t, map[string]string{"DATABASE_URL": filepath.Join(dir, "patentsvc.db"), "PDF_FONT_PATH": good, "STORAGE_DIR": filepath.Join(dir, "patents")})
		if code, _ := call(t, "GET", base+"/livez", "", nil); code != 200 {
			t.Errorf("livez = %d", code)
		}
		if err := stop(); err != nil {
			t.Fatalf("run = %v\n%s", err, logs)
		}
	})
}

// TestRunAnalysisFlow runs the service against the fakes of the search
// API, the LLM gateway and a PDF host: a company analysis, an async job
// polled to completion, and the listing.
func TestRunAnalysisFlow(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now) // only to build the world's fixtures
	w := analysistest.NewWorld(t, st)
	w.Company("Acme Corp", 2)
	dir := t.TempDir()
	base, stop, logs := start(t, map[string]string{
		"DATABASE_URL": filepath.Join(dir, "patentsvc.db"), "BCRYPT_COST": "4",
		"SERPAPI_API_KEY": "serp-key", "SERPAPI_BASE_URL": w.Serp.BaseURL(),
		"LLM_API_KEY": "llm-key", "LLM_BASE_URL": w.LLM.BaseURL(),
		"PDF_ALLOWED_HOSTS": "127.0.0.1", "STORAGE_DIR": filepath.Join(dir, "patents"),
	})
	creds := map[string]string{"email": "ada@example.com", "password": "correct horse battery"}
	call(t, "POST", base+"/auth/register", "", creds)
	_, tok := call(t, "POST", base+"/auth/login", "", creds)
	access := tok["access_token"].(string)

	if code, h := call(t, "GET", base+"/health", "", nil); code != 200 || h["analyzer"] != "ready" {
		t.Fatalf("health = %d %v", code, h)
	}
	code, res := call(t, "GET", base+"/analyze/Acme%20Corp", access, nil)
	if code != 200 || res["success"] != true || res["patent_count"] != 2.0 {
		t.Fatalf("analyze = %d %v\n%s", code, res, logs)
	}
	code, job := call(t, "POST", base+"/analyze/batch/async", access, map[string]any{"companies": []string{"Acme Corp", "Nobody Inc"}})
	if code != 202 {
		t.Fatalf("async = %d %v", code, job)
	}
	id := job["job_id"].(string)
	if !wait.Until(30*time.Second, func() bool {
		_, job = call(t, "GET", base+"/jobs/"+id, access, nil)
		return job["status"] == "completed" || job["status"] == "failed"
	}) || job["status"] != "completed" {
		t.Fatalf("job = %v", job)
	}
	if code, page := call(t, "GET", base+"/analyze/batch?limit=1", access, nil); code != 200 || len(page["items"].([]any)) != 1 {
		t.Errorf("listing = %d %v", code, page)
	}
	if err := stop(); err != nil {
		t.Fatalf("run = %v\n%s", err, logs)
	}
	for _, key := range []string{"serp-key", "llm-key"} {
		if strings.Contains(logs.String(), key) {
			t.Errorf("logs contain %s", key)
		}
	}
}

func TestRunExtract(t *testing.T) {
	var out bytes.Buffer
	pdfPath := filepath.Join(analysistest.PDFDir(), "US8427103.pdf")
	if err := run(context.Background(), []string{"patentsvc", "extract", pdfPath}, func(string) string { return "" }, &out); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Pages    int
		Abstract string
		Claims   []struct {
			Number      int
			Independent bool
		}
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil || s.Pages < 10 || s.Abstract == "" || len(s.Claims) == 0 || !s.Claims[0].Independent {
		t.Fatalf("extract = %s (%v)", out.String(), err)
	}
	// With OCR on (PDF_OCR=auto) the scan's text would be read when
	// tesseract is installed: internal/pdf tests that.
	ocrOff := func(k string) string { return map[string]string{"PDF_OCR": "off"}[k] }
	err := run(context.Background(), []string{"patentsvc", "extract", filepath.Join(analysistest.PDFDir(), analysistest.ScannedPDF)}, ocrOff, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no text layer") || !strings.Contains(err.Error(), "PDF_OCR is off") {
		t.Errorf("extract of a scan = %v, want the image-only error with its reason", err)
	}
}

// TestRunTrackingAlertsWebhooks tracks a company with a 3.6 s schedule
// (SCHEDULE_INTERVAL_HOURS=0.001): the first run records the baseline,
// the count then grows 50%, the next run stores an alert, and a signed
// alert.patent_count_change webhook arrives.
func TestRunTrackingAlertsWebhooks(t *testing.T) {
	st := storetest.Open(t, store.SQLite, time.Now)
	w := analysistest.NewWorld(t, st)
	w.Company("Acme Corp", 1) // total_results 4

	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	events := make(chan map[string]any, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(secret, r.Header, body, time.Now()); err != nil {
			t.Errorf("webhook signature: %v", err)
		}
		var e map[string]any
		json.Unmarshal(body, &e)
		events <- e
	}))
	defer receiver.Close()

	dir := t.TempDir()
	base, stop, logs := start(t, map[string]string{
		"DATABASE_URL": filepath.Join(dir, "patentsvc.db"), "BCRYPT_COST": "4",
		"SERPAPI_API_KEY": "serp-key", "SERPAPI_BASE_URL": w.Serp.BaseURL(),
		"LLM_API_KEY": "llm-key", "LLM_BASE_URL": w.LLM.BaseURL(),
		"PDF_ALLOWED_HOSTS": "127.0.0.1", "STORAGE_DIR": filepath.Join(dir, "patents"),
		"SCHEDULE_INTERVAL_HOURS": "0.001", "CHANGE_THRESHOLD_PERCENT": "25",
		"WEBHOOK_URLS": receiver.URL + "/hooks", "WEBHOOK_SECRET": secret,
	})
	creds := map[string]string{"email": "ada@example.com", "password": "correct horse battery"}
	call(t, "POST", base+"/auth/register", "", creds)
	_, tok := call(t, "POST", base+"/auth/login", "", creds)
	access := tok["access_token"].(string)
	if code, h := call(t, "GET", base+"/health", "", nil); h["scheduler"] != "running" {
		t.Fatalf("health = %d %v", code, h)
	}
	if code, body := call(t, "POST", base+"/admin/tracked", access, map[string]string{"company_name": "Acme Corp"}); code != 201 {
		t.Fatalf("track = %d %v", code, body)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		if !wait.Until(30*time.Second, cond) {
			t.Fatalf("%s did not happen within 30s\n%s", what, logs)
		}
	}
	tracked := func() map[string]any {
		var list []map[string]any
		req, _ := http.NewRequest("GET", base+"/admin/tracked", nil)
		req.Header.Set("Authorization", "Bearer "+access)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(&list)
		return list[0]
	}
	waitFor("the baseline run", func() bool { return tracked()["last_analysis_at"] != nil })
	if got := tracked()["last_patent_count"]; got != 4.0 {
		t.Fatalf("baseline count = %v, want the search's total_results 4", got)
	}
	w.Company("Acme Corp", 3) // total_results 6: +50%
	var alert map[string]any
	waitFor("the alert webhook", func() bool {
		select {
		case e := <-events:
			if e["event"] == "alert.patent_count_change" {
				alert = e
				return true
			}
		default:
		}
		return false
	})
	data := alert["data"].(map[string]any)
	if data["message"] != "Patent count for Acme Corp increased by 50.0% (from 4 to 6)" || alert["id"] == "" {
		t.Errorf("alert event = %v", alert)
	}
	req, _ := http.NewRequest("GET", base+"/admin/alerts", nil)
	req.Header.Set("Authorization", "Bearer "+access)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var alerts []map[string]any
	json.NewDecoder(resp.Body).Decode(&alerts)
	resp.Body.Close()
	// The run also raised a new_patents alert (its 3 patents are new):
	// the count alert is among the stored ones.
	found := false
	for _, a := range alerts {
		found = found || (a["alert_type"] == "patent_count_change" && a["message"] == data["message"])
	}
	if !found {
		t.Errorf("stored alerts = %v, want the count alert among them", alerts)
	}
	if err := stop(); err != nil {
		t.Fatalf("run = %v", err)
	}
	if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), "/hooks") {
		t.Error("logs contain the webhook secret or the webhook URL's path")
	}
}
