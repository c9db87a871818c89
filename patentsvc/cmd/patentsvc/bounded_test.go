package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestHostileDocumentsBounded runs the service as a process of its own and
// has one user's job analyse companies whose patents are hostile PDFs
// (decisions.md: every way a PDF can cost is bounded), while another
// user's job analyses an ordinary company. The hostile job ends within its
// budget, every hostile patent is reported read: false with the bound it
// broke or what the engine found (no text, not a PDF), the other job
// completes meanwhile, and the process's peak resident memory (VmHWM)
// stays under 300 MB: the engine's memory is in its own processes.
func TestHostileDocumentsBounded(t *testing.T) {
	dsn := "sqlite:" + storetest.DSN(t, store.SQLite)
	// The engine's memory ceiling is lowered (32 MiB beyond the
	// programs' own 64) so that the pages of 40 MiB of text operators
	// pass it in a second or two rather than the 14 s poppler takes to
	// fill the default's, and OCR is off (a document without text would
	// have its first and last 25 pages OCR'd, the time limit's work; the
	// engine's bounds on OCR are internal/pdf's TestExtractLimits): the
	// budget below is one round of documents, and a process reads
	// GOMAXPROCS of them at a time.
	const extractTimeout = 10 * time.Second
	c := newCluster(t, store.SQLite, dsn, map[string]string{
		"SCHEDULER_ENABLED": "false", "PDF_EXTRACT_TIMEOUT": extractTimeout.String(), "PDF_MAX_DECODED_MB": "32",
		"PDF_OCR": "off", "LOG_LEVEL": "INFO",
	})
	type doc struct {
		data []byte
		want string // the patent's error holds it: the bound it broke
	}
	// The shared-stream documents' page trees say one page, and poppler
	// believes them: each is one page of 40 MiB of text operators.
	const overMemory, tooManyPages, noText = "reading it takes more than 32 MiB of memory", "more than 500 pages", "no text layer"
	hostile := map[string][]doc{
		"Hostile One": {{pdftest.SharedContent(5000, 40<<20), overMemory}, {pdftest.Bomb(400 << 20), noText},
			{pdftest.TextBomb(400 << 20), overMemory}, {pdftest.SelfTree(), noText}},
		"Hostile Two": {{pdftest.Pages(10000), tooManyPages}, {pdftest.HugeImage(20000, 20000), noText},
			{pdftest.ObjectStreams(400, 1<<20), noText}, {pdftest.XrefSize(2_000_000_000), "not a readable PDF"}},
		"Hostile Six": {{pdftest.SharedContent(400, 40<<20), overMemory}, {pdftest.CMapCount(50_000_000), noText},
			{pdftest.ObjectStreamCount(1 << 62), noText}, {pdftest.PageDAG(40), noText}},
	}
	for name, docs := range hostile {
		var data [][]byte
		for _, d := range docs {
			data = append(data, d.data)
		}
		c.world.CompanyDocs(name, data...)
	}
	c.world.Company("Calm Co", 3)
	r := c.start("patentsvc")
	toks := users(t, r, "mallory@example.com", "ada@example.com")
	mallory, ada := toks[1], toks[2]

	submit := func(tok string, names ...string) string {
		code, j := call(t, "POST", r.base+"/analyze/batch/async", tok, map[string]any{"companies": names, "max_workers": 3})
		if code != http.StatusAccepted {
			t.Fatalf("submit %v = %d %v", names, code, j)
		}
		return j["job_id"].(string)
	}
	start := time.Now()
	bad := submit(mallory, "Hostile One", "Hostile Two", "Hostile Six")
	good := submit(ada, "Calm Co")

	// The budget: one round of PDF_WORKERS documents per company, each
	// within PDF_EXTRACT_TIMEOUT, the companies side by side; and a few
	// seconds for the rest.
	budget := extractTimeout + 5*time.Second
	var goodDone, badDone time.Duration
	waitFor(t, 2*budget, "both jobs ended", func() bool {
		if goodDone == 0 && jobStatus(t, r, ada, good) == "completed" {
			goodDone = time.Since(start)
		}
		if s := jobStatus(t, r, mallory, bad); badDone == 0 && (s == "completed" || s == "failed") {
			badDone = time.Since(start)
		}
		return goodDone > 0 && badDone > 0
	})
	t.Logf("the ordinary job completed after %v, the hostile one ended after %v; peak RSS %d MiB",
		goodDone.Round(time.Millisecond), badDone.Round(time.Millisecond), r.peakRSS()>>20)
	if badDone > budget {
		t.Errorf("the hostile job ended after %v, past its budget of %v", badDone, budget)
	}
	if goodDone > budget {
		t.Errorf("the ordinary job took %v beside the hostile one", goodDone)
	}
	if rss := r.peakRSS(); rss == 0 || rss > 300<<20 {
		t.Errorf("peak RSS %d MiB, want under 300 MiB (0: /proc unreadable)", rss>>20)
	}

	code, j := call(t, "GET", r.base+"/jobs/"+bad, mallory, nil)
	if code != http.StatusOK || j["status"] != "completed" {
		t.Fatalf("hostile job = %d %v, want completed (each company analysed without its unreadable patents)", code, j)
	}
	result, _ := j["result"].(map[string]any)
	results, _ := result["results"].([]any)
	for _, res := range results {
		company := res.(map[string]any)
		patents, _ := company["patents"].([]any)
		if company["success"] != true || len(patents) != len(hostile[company["company_name"].(string)]) {
			t.Errorf("%v: success %v with %d patents, want a success over all of them", company["company_name"], company["success"], len(patents))
		}
		docs := hostile[company["company_name"].(string)]
		for i, p := range patents {
			entry := p.(map[string]any)
			why, _ := entry["error"].(string)
			if want := docs[min(i, len(docs)-1)].want; want == "" {
				if entry["read"] != true { // a map that lies about its size is ignored, the page read
					t.Errorf("%v %v: read %v, error %q; want it read", company["company_name"], entry["patent_id"], entry["read"], why)
				}
			} else if entry["read"] != false || !strings.Contains(why, want) {
				t.Errorf("%v %v: read %v, error %q; want not read, for %q", company["company_name"], entry["patent_id"], entry["read"], why, want)
			}
			t.Logf("%v %v: %v", company["company_name"], entry["patent_id"], entry["error"])
		}
	}
	r.stop(t)
}

// TestJobsFairPerUser: one user submits until refused (JOBS_MAX_PER_USER,
// 429 with Retry-After); a second user's single job then starts at the
// next free slot: it completes before the first user's backlog drains by
// more than one job (decisions.md: the next job to start is the oldest of
// the user with the fewest running).
func TestJobsFairPerUser(t *testing.T) {
	path := storetest.DSN(t, store.SQLite)
	c := newCluster(t, store.SQLite, "sqlite:"+path, map[string]string{"SCHEDULER_ENABLED": "false", "LOG_LEVEL": "INFO"})
	// A search takes a second: the first user's jobs, of two companies
	// analysed one after the other, about two; the second user's, of one,
	// about one.
	c.world.Serp.SetLatency(time.Second)
	c.world.Company("Busy Co", 1)
	c.world.Company("Busy Labs", 1)
	c.world.Company("Quiet Co", 1)
	r := c.start("patentsvc")
	toks := users(t, r, "busy@example.com", "quiet@example.com")
	busy, quiet := toks[1], toks[2]

	var backlog []string
	for i := 0; ; i++ {
		code, j := call(t, "POST", r.base+"/analyze/batch/async", busy, map[string]any{"companies": []string{"Busy Co", "Busy Labs"}, "max_workers": 1})
		if code == http.StatusTooManyRequests {
			if i != 10 || j["detail"] != "Too many unfinished jobs: 10 per user" {
				t.Fatalf("refused after %d jobs: %v; want after 10, with the limit", i, j)
			}
			break
		}
		if code != http.StatusAccepted || i > 10 {
			t.Fatalf("job %d = %d %v", i+1, code, j)
		}
		backlog = append(backlog, j["job_id"].(string))
	}
	resp := rawPost(t, r.base+"/analyze/batch/async", busy, `{"companies":["Busy Co"]}`)
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || err != nil || secs < 1 {
		t.Errorf("one more = %d, Retry-After %q; want 429 with whole seconds", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	code, j := call(t, "POST", r.base+"/analyze/batch/async", quiet, map[string]any{"companies": []string{"Quiet Co"}})
	if code != http.StatusAccepted {
		t.Fatalf("the second user's job = %d %v", code, j)
	}
	mine := j["job_id"].(string)
	waitFor(t, time.Minute, "the second user's job completed", func() bool { return jobStatus(t, r, quiet, mine) == "completed" })

	// From the database: the first user's jobs that started after the
	// second user's was submitted and before it started (while it ran, the
	// other slot rightly keeps running the first user's backlog: on a busy
	// machine the second user's job runs long enough for several).
	st := storetest.OpenAt(t, store.SQLite, path, time.Now)
	q, err := st.Jobs().Job(t.Context(), mine)
	if err != nil {
		t.Fatal(err)
	}
	overtook := 0
	for _, id := range backlog {
		b, err := st.Jobs().Job(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if b.StartedAt != nil && q.StartedAt != nil && b.StartedAt.After(q.CreatedAt) && b.StartedAt.Before(*q.StartedAt) {
			overtook++
		}
	}
	t.Logf("%d of the first user's jobs started while the second user's waited", overtook)
	if q.StartedAt == nil || overtook > 1 {
		t.Errorf("%d of the first user's backlog started between the second user's submission and its start (%v), want at most 1", overtook, q.StartedAt)
	}
	r.stop(t)
}

// rawPost posts body and returns the response (its body drained).
func rawPost(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
