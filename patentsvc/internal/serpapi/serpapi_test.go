package serpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/serpapi"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
	"github.com/gatewayapis/testkit/syncbuf"
)

// testKey is the API key the tests use; no error or log line may hold it.
const testKey = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"

// since is a lookback start with a time of day, to show only its date is
// sent.
var since = time.Date(2025, 7, 1, 15, 30, 0, 0, time.UTC)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newClient returns a client with short back-off waits (5 to 50ms), so
// that only the tests of the waits wait for real.
func newClient(baseURL string, timeout time.Duration, retries int) *serpapi.Client {
	c := serpapi.NewClient(baseURL, testKey, timeout, retries, discardLogger())
	serpapi.SetRetryWaits(c, 5*time.Millisecond, 50*time.Millisecond)
	return c
}

// newRealClient returns a client with the package's back-off waits.
func newRealClient(baseURL string, timeout time.Duration, retries int) *serpapi.Client {
	return serpapi.NewClient(baseURL, testKey, timeout, retries, discardLogger())
}

// newServer starts an httptest server for odd upstream behaviours.
func newServer(tb testing.TB, h http.HandlerFunc) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

// hostOf returns the host:port of a test server URL.
func hostOf(tb testing.TB, rawURL string) string {
	tb.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatalf("url.Parse(%q): %v", rawURL, err)
	}
	return u.Host
}

// closedURL returns the URL of a server that is no longer listening.
func closedURL(tb testing.TB) string {
	tb.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

// hangUp is an upstream that closes every connection without answering.
func hangUp(tb testing.TB) (srv *httptest.Server, calls *atomic.Int32) {
	tb.Helper()
	calls = new(atomic.Int32)
	srv = newServer(tb, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			tb.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	})
	return srv, calls
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// answer is a 200 search answer holding results, with total_results
// unless total is negative.
func answer(tb testing.TB, total int, results ...any) string {
	tb.Helper()
	a := map[string]any{
		"search_metadata":   map[string]any{"id": "6a1b2c3d4e5f60718293a4b5", "status": "Success"},
		"search_parameters": map[string]any{"engine": "google_patents"},
		"organic_results":   results,
	}
	if total >= 0 {
		a["search_information"] = map[string]any{"total_results": total, "total_pages": 1, "page_number": 0}
	}
	return mustJSON(tb, a)
}

// wantResult compares the count and the patents to analyse
// (TestRecordedPortfolio and TestPublications check the rest).
func wantResult(tb testing.TB, op string, got, want patent.SearchResult) {
	tb.Helper()
	got.Publications, got.Portfolio = nil, nil
	if !reflect.DeepEqual(got, want) {
		tb.Errorf("%s = %+v\nwant %+v", op, got, want)
	}
}

var kraft = patent.SearchHit{
	PatentID:        serpapitest.PatentKraft,
	Title:           "Foaming soluble coffee powder containing pressurized gas",
	PublicationDate: "2012-02-07",
	PDFLink:         serpapitest.PDFKraft,
	Snippet:         "An instant coffee powder has dried soluble coffee ...",
	Assignee:        "Kraft Foods Global Brands Llc",
}

var philips = patent.SearchHit{
	PatentID:        serpapitest.PatentPhilips,
	Title:           "Mesh network personal emergency response appliance",
	PublicationDate: "2023-07-11",
	PDFLink:         serpapitest.PDFPhilips,
	Snippet:         "A monitoring system a user activity sensor ...",
	Assignee:        "Koninklijke Philips N.V.",
}

func TestSearchRequest(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		company      string
		since        time.Time
		trailing     bool
		wantAssignee string
		wantAfter    string // "" for no after parameter
	}{
		{"plain name", serpapitest.CompanyKraft, since, false, serpapitest.CompanyKraft, "publication:20250701"},
		{"name with a comma", "Tesla, Inc", since, false, "(Tesla, Inc)", "publication:20250701"},
		{"several commas", "Doe, John, and Sons", since, false, "(Doe, John, and Sons)", "publication:20250701"},
		{"ampersand and period", "AT&T Corp.", since, false, "AT&T Corp.", "publication:20250701"},
		{"padded name", "  Acme Corp ", since, false, "Acme Corp", "publication:20250701"},
		{"date in its own location", "Acme", time.Date(2024, 1, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600)), false, "Acme", "publication:20240101"},
		{"no date bound", "Acme", time.Time{}, false, "Acme", ""},
		{"base url with trailing slash", "Acme", since, true, "Acme", "publication:20250701"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			base := fake.BaseURL()
			if tt.trailing {
				base += "/"
			}
			c := newClient(base, 5*time.Second, 0)
			q := patent.SearchQuery{Company: tt.company, Since: tt.since, Max: 10}
			if _, err := c.Search(t.Context(), q); err != nil {
				t.Fatalf("Search(%+v) error = %v, want nil", q, err)
			}
			calls := fake.Calls()
			if len(calls) != 1 {
				t.Fatalf("Search(%+v) made %d calls, want 1", q, len(calls))
			}
			want := url.Values{
				"engine":   {"google_patents"},
				"assignee": {tt.wantAssignee},
				"sort":     {"new"},
				"num":      {"100"},
				"api_key":  {testKey},
			}
			if tt.wantAfter != "" {
				want.Set("after", tt.wantAfter)
			}
			if got := calls[0]; got.Method != http.MethodGet || got.Path != "/search.json" || !reflect.DeepEqual(got.Query, want) {
				t.Errorf("Search(%+v) sent %s %s %v, want GET /search.json %v", q, got.Method, got.Path, got.Query, want)
			}
		})
	}
}

// TestSearchRequestHeaders: the request asks for JSON and names us.
func TestSearchRequestHeaders(t *testing.T) {
	t.Parallel()
	var got http.Header
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		io.WriteString(w, answer(t, 0))
	})
	c := newClient(srv.URL, 5*time.Second, 0)
	if _, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since}); err != nil {
		t.Fatalf("Search error = %v, want nil", err)
	}
	if got.Get("Accept") != "application/json" || !strings.HasPrefix(got.Get("User-Agent"), "patentsvc/") {
		t.Errorf("Search headers Accept %q, User-Agent %q, want application/json and patentsvc/...", got.Get("Accept"), got.Get("User-Agent"))
	}
}

func TestSearchRecorded(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		company string
		reply   *serpapitest.Reply
		want    patent.SearchResult
	}{
		{"kraft via the fake", serpapitest.CompanyKraft, nil, patent.SearchResult{TotalResults: 1, Patents: []patent.SearchHit{kraft}}},
		{"kraft any case", strings.ToUpper(serpapitest.CompanyKraft), nil, patent.SearchResult{TotalResults: 1, Patents: []patent.SearchHit{kraft}}},
		{"philips via the fake", serpapitest.CompanyPhilips, nil, patent.SearchResult{TotalResults: 1, Patents: []patent.SearchHit{philips}}},
		{
			name:    "recorded coffee answer verbatim",
			company: "Coffee",
			reply:   &serpapitest.Reply{Status: 200, Body: string(serpapitest.RecordedSearch())},
			want: patent.SearchResult{TotalResults: 125048, Patents: []patent.SearchHit{
				kraft,
				{
					PatentID: "RU2766609C2",
					PDFLink:  "https://patentimages.storage.googleapis.com/ab/3c/bb/d5d4b21616f08c/RU2766609C2.pdf",
					Assignee: "Сосьете Де Продюи Нестле С.А.",
				},
			}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			if tt.reply != nil {
				fake.Script(*tt.reply)
			}
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			q := patent.SearchQuery{Company: tt.company, Since: since, Max: 10}
			got, err := c.Search(t.Context(), q)
			if err != nil {
				t.Fatalf("Search(%+v) error = %v, want nil", q, err)
			}
			wantResult(t, fmt.Sprintf("Search(%+v)", q), got, tt.want)
		})
	}
}

// TestSearchPhilipsVerbatim: the recorded Philips result inside an answer
// built here (not by the fake) maps field by field.
func TestSearchPhilipsVerbatim(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, answer(t, 412, serpapitest.RecordedPhilips()))
	})
	c := newClient(srv.URL, 5*time.Second, 0)
	got, err := c.Search(t.Context(), patent.SearchQuery{Company: serpapitest.CompanyPhilips, Since: since, Max: 10})
	if err != nil {
		t.Fatalf("Search error = %v, want nil", err)
	}
	wantResult(t, "Search(philips)", got, patent.SearchResult{TotalResults: 412, Patents: []patent.SearchHit{philips}})
}

func TestSearchFiltering(t *testing.T) {
	t.Parallel()
	const date = "2025-09-02"
	ok := func(pn string) map[string]any {
		return serpapitest.Organic(pn, "Title of "+pn, date, serpapitest.PDFURL(pn))
	}
	with := func(r map[string]any, key string, v any) map[string]any {
		if v == nil {
			delete(r, key)
		} else {
			r[key] = v
		}
		return r
	}
	results := []map[string]any{
		ok("US11000001B2"),
		with(ok("US11000002B2"), "pdf", nil), // no pdf
		with(ok("US11000003B2"), "pdf", ""),  // empty pdf
		with(ok("US11000004B2"), "pdf", "https://patentimages.storage.googleapis.com/"),                       // the old placeholder
		with(ok("US11000005B2"), "pdf", "https://patentimages.storage.googleapis.com/aa/bb/US11000005.png"),   // not a PDF
		with(ok("US11000006B2"), "pdf", "ftp://patentimages.storage.googleapis.com/aa/US11000006.pdf"),        // not http(s)
		with(ok("US11000007B2"), "pdf", "/aa/bb/US11000007.pdf"),                                              // relative
		with(ok("US11000008B2"), "pdf", 42),                                                                   // not a string
		with(ok("US11000009B2"), "pdf", "https://user:pw@patentimages.storage.googleapis.com/US11000009.pdf"), // user info
		with(ok("US11000010B2"), "pdf", "https://patentimages.storage.googleapis.com/x.pdf.html"),             // .pdf not at the end
		with(ok("EP4000001A1"), "pdf", "HTTPS://patentimages.storage.googleapis.com/cc/dd/EP4000001A1.PDF?download=1#page=2"),
		with(ok("us11000011b2"), "publication_number", "us11000011b2"),                       // lower case
		with(ok("US-11000012"), "publication_number", "US-11000012"),                         // hyphen
		with(ok("U1"), "publication_number", "U1"),                                           // too short
		with(ok("US1"), "publication_number", "US 1"),                                        // space inside
		with(ok("US123456789012345678901"), "publication_number", "US123456789012345678901"), // 23 characters
		with(ok("US11000013B2"), "publication_number", nil),                                  // missing
		with(ok("US11000014B2"), "publication_number", 11000014),                             // not a string
		ok("US11000001B2"), // repeat
		ok("CN118000001A"),
		with(ok("WO2025000001A1"), "publication_number", " WO2025000001A1 "), // padded: trimmed
		ok("US12345678901234567890"),                                         // 22 characters: the longest allowed
		ok("JP2025000001A"),
	}
	want := []string{"US11000001B2", "EP4000001A1", "CN118000001A", "WO2025000001A1", "US12345678901234567890", "JP2025000001A"}
	for _, tt := range []struct {
		name string
		max  int
		want []string
	}{
		{"no limit", 0, want},
		{"negative is no limit", -3, want},
		{"max 1", 1, want[:1]},
		{"max 3", 3, want[:3]},
		{"max equal to the kept", len(want), want},
		{"max above the kept", 10, want},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			fake.SetResults("Acme", 5000, results)
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			q := patent.SearchQuery{Company: "Acme", Since: since, Max: tt.max}
			got, err := c.Search(t.Context(), q)
			if err != nil {
				t.Fatalf("Search(%+v) error = %v, want nil", q, err)
			}
			var ids []string
			for _, p := range got.Patents {
				ids = append(ids, p.PatentID)
			}
			if !reflect.DeepEqual(ids, tt.want) {
				t.Errorf("Search(%+v) patents = %q, want %q", q, ids, tt.want)
			}
			if got.TotalResults != 5000 {
				t.Errorf("Search(%+v) TotalResults = %d, want 5000", q, got.TotalResults)
			}
			for _, p := range got.Patents {
				if p.PatentID == "EP4000001A1" && p.PDFLink != "HTTPS://patentimages.storage.googleapis.com/cc/dd/EP4000001A1.PDF?download=1#page=2" {
					t.Errorf("Search(%+v) PDFLink = %q, want the link as sent", q, p.PDFLink)
				}
				if p.Title != "Title of "+p.PatentID && p.PatentID != "WO2025000001A1" {
					t.Errorf("Search(%+v) %s Title = %q", q, p.PatentID, p.Title)
				}
				if p.PublicationDate != date || p.Assignee != serpapitest.DefaultAssignee || p.Snippet == "" {
					t.Errorf("Search(%+v) %s = %+v, want date, assignee and snippet mapped", q, p.PatentID, p)
				}
			}
		})
	}
}

// TestSearchOddResults: elements of organic_results that are not objects
// are skipped, string fields of other types read as empty.
func TestSearchOddResults(t *testing.T) {
	t.Parallel()
	good := serpapitest.Organic("US11000001B2", "Good", "2025-01-02", serpapitest.PDFURL("US11000001B2"))
	odd := serpapitest.Organic("US11000002B2", "", "2025-01-03", serpapitest.PDFURL("US11000002B2"))
	odd["title"] = []any{"a"}
	odd["snippet"] = nil
	odd["assignee"] = map[string]any{"name": "x"}
	odd["publication_date"] = 20250103
	body := answer(t, -1, 7, "x", nil, []any{}, good, odd)
	fake := serpapitest.New(t)
	fake.Script(serpapitest.Reply{Status: 200, Body: body})
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	got, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since, Max: 10})
	if err != nil {
		t.Fatalf("Search error = %v, want nil", err)
	}
	want := patent.SearchResult{TotalResults: 6, Patents: []patent.SearchHit{
		{PatentID: "US11000001B2", Title: "Good", PublicationDate: "2025-01-02", PDFLink: serpapitest.PDFURL("US11000001B2"),
			Snippet: "The invention relates to good ...", Assignee: serpapitest.DefaultAssignee},
		{PatentID: "US11000002B2", PDFLink: serpapitest.PDFURL("US11000002B2")},
	}}
	wantResult(t, "Search(odd results)", got, want)
}

// TestSearchFirstPageOnly: the fake, like SerpApi, sends at most num (100)
// results; Max beyond them is not reached.
func TestSearchFirstPageOnly(t *testing.T) {
	t.Parallel()
	var results []map[string]any
	for i := range 150 {
		pn := fmt.Sprintf("US%dB2", 12000000+i)
		results = append(results, serpapitest.Organic(pn, "Patent "+pn, "2025-10-01", serpapitest.PDFURL(pn)))
	}
	fake := serpapitest.New(t)
	fake.SetResults("Acme", 150, results)
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	got, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since, Max: 1000})
	if err != nil {
		t.Fatalf("Search error = %v, want nil", err)
	}
	if len(got.Patents) != 100 || got.TotalResults != 150 || got.Patents[99].PatentID != "US12000099B2" {
		t.Errorf("Search = %d patents, total %d, want 100 patents (one page), total 150", len(got.Patents), got.TotalResults)
	}
	if n := fake.CallCount(); n != 1 {
		t.Errorf("Search made %d calls, want 1", n)
	}
}

func TestSearchNoResults(t *testing.T) {
	t.Parallel()
	empty := patent.SearchResult{TotalResults: 0, Patents: []patent.SearchHit{}}
	for _, tt := range []struct {
		name  string
		setup func(*serpapitest.Server)
		want  patent.SearchResult
	}{
		{"unknown company gets the recorded no-results answer", func(*serpapitest.Server) {}, empty},
		{"company registered without results", func(s *serpapitest.Server) { s.SetResults("Acme", 0, nil) }, empty},
		{"message in other case", func(s *serpapitest.Server) {
			s.Script(serpapitest.Reply{Status: 200, Body: `{"search_metadata":{"status":"Success"},"error":"GOOGLE PATENTS HASN'T RETURNED ANY RESULTS FOR THIS QUERY."}`})
		}, empty},
		{"null organic results", func(s *serpapitest.Server) {
			s.Script(serpapitest.Reply{Status: 200, Body: `{"search_metadata":{"status":"Success"},"organic_results":null,"error":"Google Patents hasn't returned any results for this query."}`})
		}, empty},
		{"empty organic results without error", func(s *serpapitest.Server) {
			s.Script(serpapitest.Reply{Status: 200, Body: `{"search_metadata":{"status":"Success"},"search_information":{"total_results":0},"organic_results":[]}`})
		}, empty},
		{"no results but a total", func(s *serpapitest.Server) {
			s.Script(serpapitest.Reply{Status: 200, Body: `{"search_metadata":{"status":"Success"},"search_information":{"total_results":3},"error":"Google Patents hasn't returned any results for this query."}`})
		}, patent.SearchResult{TotalResults: 3, Patents: []patent.SearchHit{}}},
		{"results without pdfs", func(s *serpapitest.Server) {
			s.SetResults("Acme", 2, []map[string]any{
				serpapitest.Organic("US11000001B2", "A", "2025-01-01", ""),
				serpapitest.Organic("US11000002B2", "B", "2025-01-01", ""),
			})
		}, patent.SearchResult{TotalResults: 2, Patents: []patent.SearchHit{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			tt.setup(fake)
			c := newClient(fake.BaseURL(), 5*time.Second, 2)
			q := patent.SearchQuery{Company: "Acme", Since: since, Max: 10}
			got, err := c.Search(t.Context(), q)
			if err != nil {
				t.Fatalf("Search(%+v) error = %v, want nil (an empty result)", q, err)
			}
			if got.Patents == nil {
				t.Errorf("Search(%+v) Patents = nil, want an empty, non-nil slice", q)
			}
			wantResult(t, fmt.Sprintf("Search(%+v)", q), got, tt.want)
			if n := fake.CallCount(); n != 1 {
				t.Errorf("Search(%+v) made %d calls, want 1", q, n)
			}
		})
	}
}

func TestSearchTotalResults(t *testing.T) {
	t.Parallel()
	three := []any{
		serpapitest.Organic("US11000001B2", "A", "2025-01-01", serpapitest.PDFURL("US11000001B2")),
		serpapitest.Organic("US11000002B2", "B", "2025-01-01", ""),
		serpapitest.Organic("US11000003B2", "C", "2025-01-01", serpapitest.PDFURL("US11000003B2")),
	}
	withTotal := func(v any) string {
		var a map[string]any
		if err := json.Unmarshal([]byte(answer(t, 0, three...)), &a); err != nil {
			t.Fatal(err)
		}
		a["search_information"].(map[string]any)["total_results"] = v
		return mustJSON(t, a)
	}
	for _, tt := range []struct {
		name string
		body string
		want int
	}{
		{"number", answer(t, 57, three...), 57},
		{"zero with results", answer(t, 0, three...), 0},
		{"absent: number of results", answer(t, -1, three...), 3},
		{"numeric string", withTotal("1,234"), 1234},
		{"float with no fraction", withTotal(125048.0), 125048},
		{"null: fallback", withTotal(nil), 3},
		{"negative: fallback", withTotal(-5), 3},
		{"fraction: fallback", withTotal(1.5), 3},
		{"text: fallback", withTotal("many"), 3},
		{"object: fallback", withTotal(map[string]any{"n": 1}), 3},
		{"huge: fallback", withTotal(1e300), 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			fake.Script(serpapitest.Reply{Status: 200, Body: tt.body})
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			got, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since, Max: 10})
			if err != nil {
				t.Fatalf("Search error = %v, want nil", err)
			}
			if got.TotalResults != tt.want || len(got.Patents) != 2 {
				t.Errorf("Search = total %d, %d patents, want total %d, 2 patents", got.TotalResults, len(got.Patents), tt.want)
			}
		})
	}
	t.Run("fake total absent", func(t *testing.T) {
		t.Parallel()
		fake := serpapitest.New(t)
		fake.SetResults("Acme", -1, []map[string]any{three[0].(map[string]any), three[1].(map[string]any)})
		c := newClient(fake.BaseURL(), 5*time.Second, 0)
		got, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since, Max: 10})
		if err != nil || got.TotalResults != 2 {
			t.Errorf("Search = total %d, error %v, want total 2 (the results sent), nil", got.TotalResults, err)
		}
	})
}

func TestSearchRetries(t *testing.T) {
	t.Parallel()
	unavailable := serpapitest.Unavailable()
	quota := serpapitest.QuotaExhausted()
	throughput := serpapitest.Throughput()
	status := func(code int) serpapitest.Reply { return serpapitest.Reply{Status: code, Body: "<html>error</html>"} }
	for _, tt := range []struct {
		name      string
		replies   []serpapitest.Reply
		wantErr   bool
		wantQuota bool
		wantText  string // in the error
		wantCalls int
	}{
		{"503 then 200", []serpapitest.Reply{unavailable}, false, false, "", 2},
		{"500 502 then 200", []serpapitest.Reply{status(500), status(502)}, false, false, "", 3},
		{"504 then 200", []serpapitest.Reply{status(504)}, false, false, "", 2},
		{"three 503s", []serpapitest.Reply{unavailable, unavailable, unavailable}, true, false, "status 503", 3},
		{"503 message quoted", []serpapitest.Reply{unavailable, unavailable, unavailable}, true, false, "try again later", 3},
		{"501 not retried", []serpapitest.Reply{status(501)}, true, false, "status 501", 1},
		{"429 throughput then 200", []serpapitest.Reply{throughput}, false, false, "", 2},
		{"429 without a body then 200", []serpapitest.Reply{{Status: 429}}, false, false, "", 2},
		{"three 429 throughput", []serpapitest.Reply{throughput, throughput, throughput}, true, false, "status 429", 3},
		{"429 quota not retried", []serpapitest.Reply{quota}, true, true, "run out of searches", 1},
		{"429 quota any case", []serpapitest.Reply{{Status: 429, Body: `{"error":"Your account has RUN OUT OF SEARCHES."}`}}, true, true, "status 429", 1},
		{"429 throughput then quota", []serpapitest.Reply{throughput, quota}, true, true, "quota exhausted", 2},
		{"503 then quota", []serpapitest.Reply{unavailable, quota}, true, true, "quota exhausted", 2},
		{"401 not retried", []serpapitest.Reply{serpapitest.InvalidKey()}, true, false, "Invalid API key", 1},
		{"400 not retried", []serpapitest.Reply{serpapitest.MissingQuery()}, true, false, "status 400", 1},
		{"403 not retried", []serpapitest.Reply{{Status: 403, Body: `{"error":"Your account has been deleted."}`}}, true, false, "status 403", 1},
		{"404 not retried", []serpapitest.Reply{status(404)}, true, false, "status 404", 1},
		{"410 not retried", []serpapitest.Reply{status(410)}, true, false, "status 410", 1},
		{"503 then 401", []serpapitest.Reply{unavailable, serpapitest.InvalidKey()}, true, false, "status 401", 2},
		{"redirect not followed", []serpapitest.Reply{{Status: 302, Header: http.Header{"Location": {"/search.json"}}}}, true, false, "status 302", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			fake.Script(tt.replies...)
			c := newClient(fake.BaseURL(), 5*time.Second, 2)
			got, err := c.Search(t.Context(), patent.SearchQuery{Company: serpapitest.CompanyKraft, Since: since, Max: 10})
			if n := fake.CallCount(); n != tt.wantCalls {
				t.Errorf("Search made %d calls, want %d", n, tt.wantCalls)
			}
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Search error = %v, want nil", err)
				}
				wantResult(t, "Search", got, patent.SearchResult{TotalResults: 1, Patents: []patent.SearchHit{kraft}})
				return
			}
			if !errors.Is(err, serpapi.ErrUpstream) {
				t.Fatalf("Search error = %v, want ErrUpstream", err)
			}
			if errors.Is(err, serpapi.ErrQuota) != tt.wantQuota {
				t.Errorf("Search error = %v, errors.Is(ErrQuota) = %t, want %t", err, !tt.wantQuota, tt.wantQuota)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("Search error = %q, want it to contain %q", err, tt.wantText)
			}
			if !reflect.DeepEqual(got, patent.SearchResult{}) {
				t.Errorf("Search returned %+v with an error, want the zero Result", got)
			}
		})
	}
}

// TestSearchBadAnswers: 200 answers that are not a usable search result
// fail with ErrUpstream after one attempt.
func TestSearchBadAnswers(t *testing.T) {
	t.Parallel()
	recorded := string(serpapitest.RecordedSearch())
	for _, tt := range []struct {
		name string
		body string
	}{
		{"html page", "<!DOCTYPE html><html><body><h1>Maintenance</h1></body></html>"},
		{"garbage", "\x00\xff\xfe garbage \x01"},
		{"plain text", "Service Unavailable"},
		{"empty body", ""},
		{"white space", " \r\n\t"},
		{"truncated json", recorded[:len(recorded)/2]},
		{"trailing garbage", recorded + "}}"},
		{"json array", `[{"publication_number":"US8110241B2"}]`},
		{"json null", `null`},
		{"json string", `"organic_results"`},
		{"empty object", `{}`},
		{"unrelated object", `{"message":"ok"}`},
		{"organic results not a list", `{"search_metadata":{"status":"Success"},"organic_results":{"0":{}}}`},
		{"status error", `{"search_metadata":{"status":"Error"},"error":"We couldn't get valid results for this search. Please try again later."}`},
		{"status error with results", answerWithStatus(t, "Error")},
		{"other error without results", `{"search_metadata":{"status":"Success"},"error":"Unsupported value for the assignee parameter."}`},
		{"bad request state", `{"search_metadata":{"status":"Success"},"search_information":{"organic_results_state":"Bad request."},"organic_results":[]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			fake.Script(serpapitest.Reply{Status: 200, Body: tt.body})
			c := newClient(fake.BaseURL(), 5*time.Second, 2)
			got, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since, Max: 10})
			if !errors.Is(err, serpapi.ErrUpstream) || errors.Is(err, serpapi.ErrQuota) {
				t.Errorf("Search error = %v, want ErrUpstream and not ErrQuota", err)
			}
			if !reflect.DeepEqual(got, patent.SearchResult{}) {
				t.Errorf("Search returned %+v with an error, want the zero Result", got)
			}
			if n := fake.CallCount(); n != 1 {
				t.Errorf("Search made %d calls, want 1", n)
			}
		})
	}
}

func answerWithStatus(tb testing.TB, status string) string {
	var a map[string]any
	if err := json.Unmarshal(serpapitest.RecordedSearch(), &a); err != nil {
		tb.Fatal(err)
	}
	a["search_metadata"].(map[string]any)["status"] = status
	return mustJSON(tb, a)
}

// TestSearchErrorWithResults: an error string next to results does not
// hide the results.
func TestSearchErrorWithResults(t *testing.T) {
	t.Parallel()
	var a map[string]any
	if err := json.Unmarshal(serpapitest.RecordedSearch(), &a); err != nil {
		t.Fatal(err)
	}
	a["error"] = "Some notice."
	fake := serpapitest.New(t)
	fake.Script(serpapitest.Reply{Status: 200, Body: mustJSON(t, a)})
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	got, err := c.Search(t.Context(), patent.SearchQuery{Company: "Coffee", Since: since, Max: 1})
	if err != nil {
		t.Fatalf("Search error = %v, want nil", err)
	}
	wantResult(t, "Search", got, patent.SearchResult{TotalResults: 125048, Patents: []patent.SearchHit{kraft}})
}

func TestSearchBodyLimit(t *testing.T) {
	t.Parallel()
	const limit = 8 << 20
	base := answer(t, 1, serpapitest.RecordedKraft())
	for _, tt := range []struct {
		name    string
		size    int
		wantErr bool
	}{
		{"at the limit", limit, false},
		{"one byte over", limit + 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			fake.Script(serpapitest.Reply{Status: 200, Body: base + strings.Repeat(" ", tt.size-len(base))})
			c := newClient(fake.BaseURL(), 10*time.Second, 0)
			_, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since, Max: 10})
			if tt.wantErr != (err != nil) {
				t.Errorf("Search with a %d-byte answer error = %v, want error %t", tt.size, err, tt.wantErr)
			}
			if tt.wantErr && !errors.Is(err, serpapi.ErrUpstream) {
				t.Errorf("Search error = %v, want ErrUpstream", err)
			}
		})
	}
}

// TestRetryWaits checks lower bounds of the waits between attempts only.
func TestRetryWaits(t *testing.T) {
	t.Parallel()
	throttled := serpapitest.Throughput()
	throttled.Header = http.Header{"Retry-After": {"1"}}
	unavailable := serpapitest.Unavailable()
	unavailable.Header = http.Header{"Retry-After": {"1"}}
	for _, tt := range []struct {
		name    string
		reply   serpapitest.Reply
		minWait time.Duration
	}{
		// Back-off starts at 250ms with equal jitter: at least 125ms.
		{"back-off", serpapitest.Unavailable(), 120 * time.Millisecond},
		{"retry-after on 429", throttled, 950 * time.Millisecond},
		{"retry-after on 503", unavailable, 950 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			fake.Script(tt.reply)
			c := newRealClient(fake.BaseURL(), 5*time.Second, 1)
			if _, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since}); err != nil {
				t.Fatalf("Search error = %v, want nil", err)
			}
			calls := fake.Calls()
			if len(calls) != 2 {
				t.Fatalf("Search made %d calls, want 2", len(calls))
			}
			if gap := calls[1].At.Sub(calls[0].At); gap < tt.minWait {
				t.Errorf("Search retried after %v, want at least %v", gap, tt.minWait)
			}
			if !reflect.DeepEqual(calls[0].Query, calls[1].Query) {
				t.Errorf("retry sent %v, first attempt %v, want the same", calls[1].Query, calls[0].Query)
			}
		})
	}
}

func TestRetryNetworkErrors(t *testing.T) {
	t.Parallel()
	t.Run("connection closed", func(t *testing.T) {
		t.Parallel()
		srv, calls := hangUp(t)
		c := newClient(srv.URL, 5*time.Second, 2)
		if _, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since}); !errors.Is(err, serpapi.ErrUpstream) {
			t.Errorf("Search error = %v, want ErrUpstream", err)
		}
		if n := calls.Load(); n != 3 {
			t.Errorf("Search made %d attempts, want 3", n)
		}
	})
	t.Run("connection closed then answer", func(t *testing.T) {
		t.Parallel()
		fake := serpapitest.New(t)
		var calls atomic.Int32
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
					conn.Close()
				}
				return
			}
			fake.Config.Handler.ServeHTTP(w, r)
		})
		c := newClient(srv.URL, 5*time.Second, 1)
		got, err := c.Search(t.Context(), patent.SearchQuery{Company: serpapitest.CompanyKraft, Since: since})
		if err != nil || len(got.Patents) != 1 {
			t.Errorf("Search = %+v, %v, want Kraft's patent after a retry", got, err)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("Search made %d attempts, want 2", n)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		c := newClient(closedURL(t), 5*time.Second, 1)
		if _, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since}); !errors.Is(err, serpapi.ErrUpstream) {
			t.Errorf("Search error = %v, want ErrUpstream", err)
		}
	})
}

// TestRetryBrokenBody: a connection that breaks or stalls while the answer
// is read is a network error or timeout like any other, and is retried.
func TestRetryBrokenBody(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		first func(w http.ResponseWriter, r *http.Request)
	}{
		{"connection closed mid-body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "5000")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"search_metadata":{"status":"Success"},"organic_results":[`)
		}},
		{"body stalls past the timeout", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"search_metadata":{"status":"Success"},"organic_results":[`)
			http.NewResponseController(w).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}},
		{"429 body stalls past the timeout", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":"Your account has run`)
			http.NewResponseController(w).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := serpapitest.New(t)
			var calls atomic.Int32
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					tt.first(w, r)
					return
				}
				fake.Config.Handler.ServeHTTP(w, r)
			})
			c := newClient(srv.URL, 500*time.Millisecond, 1)
			got, err := c.Search(t.Context(), patent.SearchQuery{Company: serpapitest.CompanyKraft, Since: since})
			if err != nil || len(got.Patents) != 1 {
				t.Errorf("Search = %+v, %v, want Kraft's patent after a retry", got, err)
			}
			if n := calls.Load(); n != 2 {
				t.Errorf("Search made %d attempts, want 2", n)
			}
		})
	}
	t.Run("retries spent", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5000")
			io.WriteString(w, `{"organic_results":[`)
		})
		c := newClient(srv.URL, 500*time.Millisecond, 1)
		if _, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since}); !errors.Is(err, serpapi.ErrUpstream) {
			t.Errorf("Search error = %v, want ErrUpstream", err)
		}
	})
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	t.Run("slow answer", func(t *testing.T) {
		t.Parallel()
		fake := serpapitest.New(t)
		fake.SetLatency(500 * time.Millisecond)
		c := newClient(fake.BaseURL(), 100*time.Millisecond, 0)
		_, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since})
		if !errors.Is(err, serpapi.ErrUpstream) {
			t.Fatalf("Search error = %v, want ErrUpstream", err)
		}
		if !strings.Contains(err.Error(), "timeout") {
			t.Errorf("Search error = %q, want it to say timeout", err)
		}
	})
	t.Run("slow answers retried", func(t *testing.T) {
		t.Parallel()
		fake := serpapitest.New(t)
		fake.SetLatency(500 * time.Millisecond)
		c := newClient(fake.BaseURL(), 100*time.Millisecond, 1)
		if _, err := c.Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since}); !errors.Is(err, serpapi.ErrUpstream) {
			t.Errorf("Search error = %v, want ErrUpstream", err)
		}
		if n := fake.CallCount(); n != 2 {
			t.Errorf("Search made %d calls, want 2", n)
		}
	})
	t.Run("slow answer then fast", func(t *testing.T) {
		t.Parallel()
		fake := serpapitest.New(t)
		fake.Script(serpapitest.Reply{Status: 200, Body: answer(t, 0), Delay: 2 * time.Second})
		c := newClient(fake.BaseURL(), 300*time.Millisecond, 1)
		got, err := c.Search(t.Context(), patent.SearchQuery{Company: serpapitest.CompanyKraft, Since: since})
		if err != nil || len(got.Patents) != 1 {
			t.Errorf("Search = %+v, %v, want Kraft's patent after a retry", got, err)
		}
	})
	t.Run("caller deadline", func(t *testing.T) {
		t.Parallel()
		fake := serpapitest.New(t)
		fake.SetLatency(5 * time.Second)
		c := newClient(fake.BaseURL(), 30*time.Second, 3)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := c.Search(ctx, patent.SearchQuery{Company: "Acme", Since: since})
		if !errors.Is(err, serpapi.ErrUpstream) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("Search error = %v, want ErrUpstream and DeadlineExceeded, saying timeout", err)
		}
	})
}

func TestMaxCallDuration(t *testing.T) {
	t.Parallel()
	c := newClient("http://127.0.0.1:1", 2*time.Second, 2)
	// 3 attempts of 2s and 2 back-off waits of at most 4s.
	if got, want := c.MaxCallDuration(), 14*time.Second; got != want {
		t.Errorf("MaxCallDuration() = %v, want %v", got, want)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	t.Run("during an attempt", func(t *testing.T) {
		t.Parallel()
		fake := serpapitest.New(t)
		fake.SetLatency(10 * time.Second)
		c := newClient(fake.BaseURL(), 30*time.Second, 3)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Search(ctx, patent.SearchQuery{Company: "Acme", Since: since})
		if !errors.Is(err, serpapi.ErrUpstream) || !errors.Is(err, context.Canceled) {
			t.Errorf("Search error = %v, want ErrUpstream and context.Canceled", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Search returned %v after cancellation, want promptly", d)
		}
		if n := fake.CallCount(); n != 1 {
			t.Errorf("Search made %d calls, want 1 (no retry after cancellation)", n)
		}
	})
	t.Run("during back-off", func(t *testing.T) {
		t.Parallel()
		fake := serpapitest.New(t)
		for range 20 {
			fake.Script(serpapitest.Reply{Status: 503, Header: http.Header{"Retry-After": {"3"}}})
		}
		c := newRealClient(fake.BaseURL(), 5*time.Second, 10)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Search(ctx, patent.SearchQuery{Company: "Acme", Since: since})
		if !errors.Is(err, serpapi.ErrUpstream) || !errors.Is(err, context.Canceled) {
			t.Errorf("Search error = %v, want ErrUpstream and context.Canceled", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Search returned %v after cancellation, want promptly", d)
		}
		if n := fake.CallCount(); n != 1 {
			t.Errorf("Search made %d calls, want 1", n)
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		t.Parallel()
		fake := serpapitest.New(t)
		c := newClient(fake.BaseURL(), 5*time.Second, 3)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := c.Search(ctx, patent.SearchQuery{Company: "Acme", Since: since}); !errors.Is(err, context.Canceled) {
			t.Errorf("Search with a cancelled context error = %v, want context.Canceled", err)
		}
		if n := fake.CallCount(); n != 0 {
			t.Errorf("Search with a cancelled context made %d calls, want 0", n)
		}
	})
}

func TestSearchEmptyCompany(t *testing.T) {
	t.Parallel()
	fake := serpapitest.New(t)
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	for _, company := range []string{"", "   "} {
		if _, err := c.Search(t.Context(), patent.SearchQuery{Company: company, Since: since}); !errors.Is(err, serpapi.ErrUpstream) {
			t.Errorf("Search(%q) error = %v, want ErrUpstream", company, err)
		}
	}
	if n := fake.CallCount(); n != 0 {
		t.Errorf("Search with no company made %d calls, want 0", n)
	}
}

// TestSecretsNotInErrorsOrLogs: no failure's text, and no log line, holds
// the API key, the upstream's address or the request URL.
func TestSecretsNotInErrorsOrLogs(t *testing.T) {
	t.Parallel()
	type upstream struct {
		base    string
		timeout time.Duration
		retries int
	}
	fakeWith := func(t *testing.T, replies ...serpapitest.Reply) upstream {
		fake := serpapitest.New(t)
		fake.Script(replies...)
		return upstream{base: fake.BaseURL(), timeout: 5 * time.Second}
	}
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T) upstream
	}{
		{"401", func(t *testing.T) upstream { return fakeWith(t, serpapitest.InvalidKey()) }},
		{"400", func(t *testing.T) upstream { return fakeWith(t, serpapitest.MissingQuery()) }},
		{"quota", func(t *testing.T) upstream { return fakeWith(t, serpapitest.QuotaExhausted()) }},
		{"throughput retries spent", func(t *testing.T) upstream {
			u := fakeWith(t, serpapitest.Throughput(), serpapitest.Throughput())
			u.retries = 1
			return u
		}},
		{"503 retries spent", func(t *testing.T) upstream {
			u := fakeWith(t, serpapitest.Unavailable(), serpapitest.Unavailable())
			u.retries = 1
			return u
		}},
		{"html", func(t *testing.T) upstream { return fakeWith(t, serpapitest.Reply{Status: 200, Body: "<html></html>"}) }},
		{"upstream message echoes the key and url", func(t *testing.T) upstream {
			var u upstream
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, `{"error":"Invalid API key %s for http://%s%s"}`, r.URL.Query().Get("api_key"), r.Host, r.URL.RequestURI())
			})
			u.base, u.timeout = srv.URL, 5*time.Second
			return u
		}},
		{"200 error echoes the key", func(t *testing.T) upstream {
			var u upstream
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"search_metadata":{"status":"Error"},"error":"bad key %s at %s"}`, r.URL.Query().Get("api_key"), r.Host)
			})
			u.base, u.timeout = srv.URL, 5*time.Second
			return u
		}},
		{"timeout", func(t *testing.T) upstream {
			u := fakeWith(t, serpapitest.Reply{Status: 200, Delay: 500 * time.Millisecond})
			u.timeout = 100 * time.Millisecond
			return u
		}},
		{"connection closed", func(t *testing.T) upstream {
			srv, _ := hangUp(t)
			return upstream{base: srv.URL, timeout: 5 * time.Second, retries: 1}
		}},
		{"connection refused", func(t *testing.T) upstream { return upstream{base: closedURL(t), timeout: 5 * time.Second} }},
		{"cancelled", func(t *testing.T) upstream {
			u := fakeWith(t, serpapitest.Reply{Status: 200, Delay: 10 * time.Second})
			u.timeout = 30 * time.Second
			return u
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := tt.setup(t)
			var logs syncbuf.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c := serpapi.NewClient(u.base, testKey, u.timeout, u.retries, logger)
			ctx := t.Context()
			if tt.name == "cancelled" {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			_, err := c.Search(ctx, patent.SearchQuery{Company: "Acme", Since: since})
			if !errors.Is(err, serpapi.ErrUpstream) {
				t.Fatalf("Search error = %v, want ErrUpstream", err)
			}
			host := hostOf(t, u.base)
			for _, bad := range []string{testKey, host, "api_key", "http://", "https://", "search.json", "127.0.0.1"} {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("Search error = %q, want no %q in it", err, bad)
				}
				if strings.Contains(logs.String(), bad) {
					t.Errorf("logs hold %q:\n%s", bad, logs.String())
				}
			}
		})
	}
}

func TestKey(t *testing.T) {
	t.Parallel()
	c := newClient("https://serpapi.com", time.Second, 0)
	other := serpapi.NewClient("https://serpapi.com", "another-key", time.Second, 0, discardLogger())
	base := patent.SearchQuery{Company: "Acme Corp", Since: since, Max: 10}
	k := c.Key(base)
	if len(k) != 64 || strings.Trim(k, "0123456789abcdef") != "" {
		t.Fatalf("Key(%+v) = %q, want 64 hex digits", base, k)
	}
	same := []patent.SearchQuery{
		base,
		{Company: "Acme Corp", Since: since.Add(8 * time.Hour), Max: 10}, // same date
		{Company: "Acme Corp", Since: time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC), Max: 10},
		{Company: " Acme Corp ", Since: since, Max: 10}, // sent trimmed
	}
	for _, q := range same {
		if got := c.Key(q); got != k {
			t.Errorf("Key(%+v) = %s, want %s (same parameters sent)", q, got, k)
		}
	}
	if got := other.Key(base); got != k {
		t.Errorf("Key(%+v) with another API key = %s, want %s", base, got, k)
	}
	if got := c.Key(base); got != k {
		t.Errorf("Key(%+v) second call = %s, want %s", base, got, k)
	}
	keys := map[string]string{k: "base"}
	for name, q := range map[string]patent.SearchQuery{
		"company":       {Company: "Acme Corporation", Since: since, Max: 10},
		"company case":  {Company: "ACME CORP", Since: since, Max: 10},
		"comma company": {Company: "Acme, Corp", Since: since, Max: 10},
		"next day":      {Company: "Acme Corp", Since: since.AddDate(0, 0, 1), Max: 10},
		"previous day":  {Company: "Acme Corp", Since: since.AddDate(0, 0, -1), Max: 10},
		"no date":       {Company: "Acme Corp", Max: 10},
		"max":           {Company: "Acme Corp", Since: since, Max: 11},
		"no max":        {Company: "Acme Corp", Since: since},
	} {
		got := c.Key(q)
		if prev, dup := keys[got]; dup {
			t.Errorf("Key(%+v) (%s) = Key of %s, want a different key", q, name, prev)
		}
		keys[got] = name
	}
	if c.Key(patent.SearchQuery{Company: "Acme Corp", Since: since, Max: 0}) != c.Key(patent.SearchQuery{Company: "Acme Corp", Since: since, Max: -1}) {
		t.Errorf("Key with Max 0 and -1 differ, want the same (both: no limit)")
	}
	if strings.Contains(k, testKey) {
		t.Errorf("Key holds the API key")
	}
}

// TestKeyTracksRequest: the key changes with what is sent and only that
// (and Max): queries sending the same parameters share a key.
func TestKeyTracksRequest(t *testing.T) {
	t.Parallel()
	fake := serpapitest.New(t)
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	qs := []patent.SearchQuery{
		{Company: "Acme", Since: since, Max: 5},
		{Company: "Acme", Since: since.Add(time.Hour), Max: 5},
		{Company: "Acme, Inc", Since: since, Max: 5},
		{Company: "Acme", Since: since.AddDate(0, 0, 1), Max: 5},
	}
	for _, q := range qs {
		if _, err := c.Search(t.Context(), q); err != nil {
			t.Fatalf("Search(%+v) error = %v", q, err)
		}
	}
	calls := fake.Calls()
	for i := range qs {
		for j := range qs {
			sameSent := calls[i].Query.Encode() == calls[j].Query.Encode()
			sameKey := c.Key(qs[i]) == c.Key(qs[j])
			if sameSent != sameKey {
				t.Errorf("queries %d and %d: same request %t but same key %t", i, j, sameSent, sameKey)
			}
		}
	}
}

func TestConcurrentSearches(t *testing.T) {
	t.Parallel()
	fake := serpapitest.New(t)
	c := newClient(fake.BaseURL(), 5*time.Second, 1)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			company := serpapitest.CompanyKraft
			if i%2 == 1 {
				company = serpapitest.CompanyPhilips
			}
			_, errs[i] = c.Search(t.Context(), patent.SearchQuery{Company: company, Since: since, Max: 10})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Search #%d error = %v", i, err)
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	fake := serpapitest.New(b)
	var results []map[string]any
	for i := range 100 {
		pn := fmt.Sprintf("US%dB2", 12000000+i)
		results = append(results, serpapitest.Organic(pn, "Patent "+pn, "2025-10-01", serpapitest.PDFURL(pn)))
	}
	fake.SetResults("Acme", 4321, results)
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	q := patent.SearchQuery{Company: "Acme", Since: since, Max: 10}
	for b.Loop() {
		if _, err := c.Search(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRecordedPortfolio: the recorded Coffee answer's facts become its
// portfolio (summary.cpc without "Total", the result's publication year,
// its country_status with UNKNOWN left out, a grant and an application),
// and both results are publications, the one without a date too.
func TestRecordedPortfolio(t *testing.T) {
	t.Parallel()
	fake := serpapitest.New(t)
	fake.Script(serpapitest.Reply{Status: 200, Body: string(serpapitest.RecordedSearch())})
	got, err := newClient(fake.BaseURL(), 5*time.Second, 0).Search(t.Context(), patent.SearchQuery{Company: "Coffee", Since: since, Max: 1})
	if err != nil {
		t.Fatalf("Search error = %v", err)
	}
	want := &patent.Portfolio{
		CPC:       []patent.CPCShare{{Code: "A47J", Share: 0.667}},
		ByYear:    []patent.YearCount{{Year: 2012, Count: 1}},
		Countries: []patent.CountryCount{{Country: "AT", Inactive: 1}, {Country: "EP", Active: 1}, {Country: "US", Active: 1}},
		Granted:   1, Applications: 1,
	}
	if !reflect.DeepEqual(got.Portfolio, want) {
		t.Errorf("Portfolio = %+v, want %+v", got.Portfolio, want)
	}
	ids := []string{}
	for _, p := range got.Publications {
		ids = append(ids, p.PatentID)
	}
	if !reflect.DeepEqual(ids, []string{serpapitest.PatentKraft, "RU2766609C2"}) || len(got.Patents) != 1 {
		t.Errorf("Publications %q and %d patents, want both results as publications and Max 1 patent", ids, len(got.Patents))
	}
}

// TestPublications: every result with a publication number is a
// publication, with or without a usable PDF (then PDFLink ""), once, past
// Max; results without a number are not.
func TestPublications(t *testing.T) {
	t.Parallel()
	results := []map[string]any{
		serpapitest.Organic("US11000001B2", "With PDF", "2025-03-04", serpapitest.PDFURL("US11000001B2")),
		serpapitest.Organic("EP4000001A1", "No PDF", "2025-02-01", ""),
		serpapitest.Organic("CN118000001A", "Generic PDF link", "2024-12-01", "https://patentimages.storage.googleapis.com/"),
		serpapitest.Organic("US11000001B2", "Repeated", "2025-03-04", serpapitest.PDFURL("US11000001B2")),
		serpapitest.Organic("not a number", "Bad id", "2025-01-01", serpapitest.PDFURL("X")),
	}
	fake := serpapitest.New(t)
	fake.SetResults("Acme", 5, results)
	got, err := newClient(fake.BaseURL(), 5*time.Second, 0).Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since, Max: 1})
	if err != nil {
		t.Fatalf("Search error = %v", err)
	}
	want := []patent.Publication{
		{PatentID: "US11000001B2", Title: "With PDF", PublicationDate: "2025-03-04", PDFLink: serpapitest.PDFURL("US11000001B2")},
		{PatentID: "EP4000001A1", Title: "No PDF", PublicationDate: "2025-02-01"},
		{PatentID: "CN118000001A", Title: "Generic PDF link", PublicationDate: "2024-12-01"},
	}
	if !reflect.DeepEqual(got.Publications, want) {
		t.Errorf("Publications = %+v\nwant %+v", got.Publications, want)
	}
	if got.Portfolio == nil || got.Portfolio.Granted != 1 || got.Portfolio.Applications != 2 {
		t.Errorf("Portfolio = %+v, want 1 granted (B2) and 2 applications", got.Portfolio)
	}
}

// TestResultBounds: a hostile result's title is cut to 1000 bytes (at a
// character boundary) and a link past 2048 bytes is no link, so one
// answer cannot make an alert, a history row or the digest huge.
func TestResultBounds(t *testing.T) {
	t.Parallel()
	long := serpapitest.Organic("US11000001B2", strings.Repeat("é", 1<<20), "2025-03-04", "https://h.example/"+strings.Repeat("a", 5000)+".pdf")
	fake := serpapitest.New(t)
	fake.SetResults("Acme", 1, []map[string]any{long})
	got, err := newClient(fake.BaseURL(), 5*time.Second, 0).Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since})
	if err != nil {
		t.Fatal(err)
	}
	p := got.Publications[0]
	if len(p.Title) > 1000 || len(p.Title) < 990 || !utf8.ValidString(p.Title) || p.PDFLink != "" || len(got.Patents) != 0 {
		t.Errorf("publication title %d bytes, link %d bytes, %d patents; want the title cut to 1000, no link, no patent", len(p.Title), len(p.PDFLink), len(got.Patents))
	}
}

// TestOnePageRead: an answer with more results than the page asked for
// (num=100) is cut at 100, and a CPC key too long to be a code is left
// out, so one answer cannot make thousands of publications, years or
// seen patents.
func TestOnePageRead(t *testing.T) {
	t.Parallel()
	var results []map[string]any
	for i := range 5000 {
		results = append(results, serpapitest.Organic(fmt.Sprintf("US%08dB2", 10000000+i), "T", fmt.Sprintf("%04d-01-01", 1800+i%200), ""))
	}
	body := map[string]any{"search_metadata": map[string]any{"status": "Success"}, "organic_results": results,
		"summary": map[string]any{"cpc": []any{map[string]any{"key": strings.Repeat("H", 5000), "percentage": 50.0},
			map[string]any{"key": "H04L", "percentage": 50.0}}}}
	b, _ := json.Marshal(body)
	fake := serpapitest.New(t)
	fake.Script(serpapitest.Reply{Status: 200, Body: string(b)})
	got, err := newClient(fake.BaseURL(), 5*time.Second, 0).Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Publications) != 100 || len(got.Portfolio.ByYear) != 100 || len(got.Portfolio.CPC) != 1 || got.Portfolio.CPC[0].Code != "H04L" {
		t.Errorf("%d publications, %d years, CPC %+v; want 100, 100 and H04L alone", len(got.Publications), len(got.Portfolio.ByYear), got.Portfolio.CPC)
	}
}
