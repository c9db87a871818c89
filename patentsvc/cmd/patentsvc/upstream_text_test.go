package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/testkit/syncbuf"
)

// upstreamWorld is a running service on one database with fake search,
// model and PDF upstreams, and a signed-in user.
type upstreamWorld struct {
	base, token, dsn string
	serp             *serpapitest.Server
	model            *llmtest.Server
	stop             func() error
	logs             *syncbuf.Buffer
}

// startUpstreamWorld starts the service on dialect's database against
// fresh fakes, with env added to its settings, and signs a user in.
func startUpstreamWorld(t *testing.T, dialect string, env map[string]string) *upstreamWorld {
	t.Helper()
	w := &upstreamWorld{serp: serpapitest.New(t), model: llmtest.New(t), dsn: storetest.DSN(t, dialect)}
	pdfs := analysistest.NewPDFHost(t)
	// One patent whose search answer carries NUL characters in its title
	// (and so in its snippet, which Organic derives from the title): the
	// fake encodes them as \u0000.
	const pn = "US90000001B2"
	date := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
	w.serp.SetResults("Nul Corp", 4, []map[string]any{
		serpapitest.Organic(pn, "Blade\x00 holder\x00", date, pdfs.Add(pn, analysistest.TextPDFs[0])),
	})
	dir := t.TempDir()
	settings := map[string]string{
		"DATABASE_URL": w.dsn, "BCRYPT_COST": "4", "SCHEDULER_ENABLED": "false",
		"SERPAPI_API_KEY": "serp-key", "SERPAPI_BASE_URL": w.serp.BaseURL(),
		"LLM_API_KEY": "llm-key", "LLM_BASE_URL": w.model.BaseURL(),
		"PDF_ALLOWED_HOSTS": "127.0.0.1", "STORAGE_DIR": filepath.Join(dir, "patents"), "PDF_OCR": "off",
	}
	for k, v := range env {
		settings[k] = v
	}
	w.base, w.stop, w.logs = start(t, settings)
	creds := map[string]string{"email": "ada@example.com", "password": "correct horse battery"}
	if code, body := call(t, "POST", w.base+"/auth/register", "", creds); code != 201 {
		t.Fatalf("register = %d %v", code, body)
	}
	code, tok := call(t, "POST", w.base+"/auth/login", "", creds)
	if code != 200 {
		t.Fatalf("login = %d %v", code, tok)
	}
	w.token = tok["access_token"].(string)
	return w
}

// analyze runs GET /analyze/Nul Corp and returns its answer.
func (w *upstreamWorld) analyze(t *testing.T) map[string]any {
	t.Helper()
	code, res := call(t, "GET", w.base+"/analyze/Nul%20Corp", w.token, nil)
	if code != 200 {
		t.Fatalf("analyze = %d %v\n%s", code, res, w.logs)
	}
	return res
}

// listed returns the stored analyses' responses as GET /analyze/batch
// lists them (newest first).
func (w *upstreamWorld) listed(t *testing.T) []string {
	t.Helper()
	code, page := call(t, "GET", w.base+"/analyze/batch?limit=50", w.token, nil)
	if code != 200 {
		t.Fatalf("listing = %d %v", code, page)
	}
	var out []string
	for _, it := range page["items"].([]any) {
		r, _ := it.(map[string]any)["response"].(string)
		out = append(out, r)
	}
	return out
}

// openDB opens the database at dsn directly, to read what the service
// stored after it stopped.
func openDB(t *testing.T, dialect, dsn string) *sql.DB {
	t.Helper()
	st := storetest.OpenAt(t, dialect, dsn, time.Now)
	db, err := st.SQL()
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// column returns the non-null values of a text column of table.
func column(t *testing.T, db *sql.DB, table, col string) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SELECT "+col+" FROM "+table)
	if err != nil {
		t.Fatalf("read %s.%s: %v", table, col, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s *string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s != nil {
			out = append(out, *s)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkClean fails when s, stored text, has a NUL or is not valid UTF-8.
func checkClean(t *testing.T, what, s string) {
	t.Helper()
	if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
		t.Errorf("%s = %q, want no NUL and valid UTF-8", what, s)
	}
}

// TestRunStoresCleanUpstreamText (issue 24; decisions.md, "Both services:
// hostile input answered, never a 5xx"): the model answers text with NUL
// characters (JSON \u0000) and with raw bytes that are not UTF-8 (which
// Go's JSON decoder turns into U+FFFD, one per byte, before the client
// sees them; the lone surrogate \ud800 too), and names the model with a
// NUL; the search answer's title carries NUL characters. On PostgreSQL
// and SQLite alike the analysis succeeds, the answer is stored cleaned
// (read back through GET /analyze/batch), the LLM cache holds the same
// text, so a second identical request makes no model call, and the stored
// patent's title and the search cache carry no NUL.
func TestRunStoresCleanUpstreamText(t *testing.T) {
	content := "## Analysis\\u0000 of Nul Corp\\u0000\\n\\nBlade \xff\xfe holders \\ud800 everywhere.\\u0000"
	body := `{"id":"gen-1","object":"chat.completion","created":1767225600,"model":"openai/gpt-4o-mini\u0000",` +
		`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"` + content + `"}}],` +
		`"usage":{"prompt_tokens":900,"completion_tokens":40,"total_tokens":940}}`
	const want = "## Analysis of Nul Corp\n\nBlade \uFFFD\uFFFD holders \uFFFD everywhere."
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			w := startUpstreamWorld(t, d, nil)
			w.model.Script(llmtest.Reply{Body: body})

			res := w.analyze(t)
			if res["success"] != true || res["analysis"] != want || res["cached"] != false || res["model"] != "openai/gpt-4o-mini" {
				w.stop() // for the whole log
				t.Fatalf("first analysis = success %v, error %v, cached %v, model %q, analysis %q; want success, not cached, %q by openai/gpt-4o-mini\n%s",
					res["success"], res["error"], res["cached"], res["model"], res["analysis"], want, w.logs)
			}
			if p := res["patents"].([]any); len(p) != 1 || p[0].(map[string]any)["title"] != "Blade holder" {
				t.Errorf("patents = %v, want the one patent titled %q", p, "Blade holder")
			}
			again := w.analyze(t)
			if again["success"] != true || again["analysis"] != want || again["cached"] != true {
				t.Errorf("second analysis = success %v, error %v, cached %v, analysis %q; want %q from the LLM cache",
					again["success"], again["error"], again["cached"], again["analysis"], want)
			}
			if n := w.model.CallCount(); n != 1 {
				t.Errorf("model called %d times, want 1 (the second answer from the LLM cache)", n)
			}
			if got := w.listed(t); len(got) != 1 || got[0] != want {
				t.Errorf("stored analyses = %q, want [%q]", got, want)
			}
			if err := w.stop(); err != nil {
				t.Fatalf("run = %v\n%s", err, w.logs)
			}
			for _, msg := range []string{"storing analysis failed", "llm cache write failed", "storing patent failed", "search cache write failed"} {
				if strings.Contains(w.logs.String(), msg) {
					t.Errorf("logged %q:\n%s", msg, w.logs)
				}
			}

			db := openDB(t, d, w.dsn)
			if got := column(t, db, "llm_cache", "response"); len(got) != 1 || got[0] != want {
				t.Errorf("llm_cache responses = %q, want [%q]", got, want)
			}
			for _, c := range [][2]string{{"llm_cache", "answered_model"}, {"analyses", "model"}} {
				for _, m := range column(t, db, c[0], c[1]) {
					if m != "openai/gpt-4o-mini" {
						t.Errorf("%s.%s = %q, want %q", c[0], c[1], m, "openai/gpt-4o-mini")
					}
				}
			}
			titles := column(t, db, "patents", "title")
			if len(titles) != 1 || titles[0] != "Blade holder" {
				t.Errorf("stored patent titles = %q, want [%q]", titles, "Blade holder")
			}
			for _, s := range column(t, db, "patents", "summary") {
				checkClean(t, "patents.summary", s)
			}
			for _, s := range column(t, db, "search_cache", "response") {
				if strings.Contains(s, `\u0000`) {
					t.Errorf("search cache = %s, want no NUL", s)
				}
			}
		})
	}
}

// TestRunCapsStoredAnswer: with LLM_MAX_ANSWER_KB=1 a model answer of
// 4,800 bytes, of one-, two- and three-byte characters, is stored cut at a
// character boundary, at most 1024 bytes, ending with [answer truncated];
// the LLM cache holds the same cut text.
func TestRunCapsStoredAnswer(t *testing.T) {
	long := strings.Repeat("Résumé 特許 ", 300)
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			w := startUpstreamWorld(t, d, map[string]string{"LLM_MAX_ANSWER_KB": "1"})
			w.model.Script(llmtest.Reply{Body: llmtest.Completion("openai/gpt-4o-mini", long, 900, 1500)})
			res := w.analyze(t)
			got, _ := res["analysis"].(string)
			if res["success"] != true || len(got) > 1024 || !strings.HasSuffix(got, "[answer truncated]") || !utf8.ValidString(got) ||
				!strings.HasPrefix(long, strings.TrimSuffix(strings.TrimSuffix(got, "[answer truncated]"), "\n\n")) {
				t.Fatalf("analysis = success %v, error %v, %d bytes %q; want a prefix of the answer cut within 1024 bytes, ending [answer truncated]",
					res["success"], res["error"], len(got), got)
			}
			if listed := w.listed(t); len(listed) != 1 || listed[0] != got {
				t.Errorf("stored analyses = %q, want [%q]", listed, got)
			}
			if err := w.stop(); err != nil {
				t.Fatalf("run = %v\n%s", err, w.logs)
			}
			if cached := column(t, openDB(t, d, w.dsn), "llm_cache", "response"); len(cached) != 1 || cached[0] != got {
				t.Errorf("llm_cache responses = %d rows (%q), want the cut answer", len(cached), cached)
			}
		})
	}
}
