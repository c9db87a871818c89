// Package serpapitest is a fake SerpApi server (Google Patents engine) for
// tests and benchmarks. It answers in SerpApi's real format, built from
// recorded answers (testdata/): search_metadata, search_parameters,
// search_information, organic_results, summary and serpapi_pagination for
// a company with registered results, and the recorded "no results" 200
// (an error string and no organic_results) for any other company. It also
// answers SerpApi's errors (401 without an API key, 400 without a query)
// and scripted faults (status codes, garbage, slow answers).
//
// The summary's cpc group is built from the CPC subclasses registered
// with SetCPC, as SerpApi builds it from each result's classification:
// real organic results carry no classification (SerpApi adds it only with
// clustered=true), so the fake keeps it beside them, not in them.
//
// What it does not do: it does not filter by date (after/before), sort, or
// page. Registered results are served as given, in the given order, cut to
// the request's num (10 to 100, default 10).
package serpapitest

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/fakehttp"
)

//go:embed testdata/*.json
var fixtures embed.FS

// Companies with recorded results, registered on every new Server.
const (
	CompanyKraft   = "Kraft Foods Global Brands Llc" // one result: PatentKraft
	CompanyPhilips = "Koninklijke Philips N.V."      // one result: PatentPhilips
)

// Recorded publication numbers and PDF links.
const (
	PatentKraft   = "US8110241B2"
	PDFKraft      = "https://patentimages.storage.googleapis.com/86/1c/bd/89a41d9faca215/US8110241.pdf"
	PatentPhilips = "US11696682B2"
	PDFPhilips    = "https://patentimages.storage.googleapis.com/b3/ce/2a/b85df572cd035c/US11696682.pdf"
)

// NoResultsMessage is the error string of SerpApi's 200 answer for a search
// that found nothing.
const NoResultsMessage = "Google Patents hasn't returned any results for this query."

// ThroughputBody is a 429 body for an exceeded hourly throughput limit.
// SerpApi's wording for it is not recorded anywhere we found; this one is
// ours, and deliberately does not say "run out of searches".
const ThroughputBody = `{"error":"Your account has exceeded its hourly searches throughput limit. Please try again later."}`

// Default placeholders of Organic; set the keys to override them.
const (
	DefaultInventor = "Alex Example"
	DefaultAssignee = "Example Industries Inc."
)

// Reply is a scripted answer (Script). Status 0 means 200.
type Reply = fakehttp.Reply

// QuotaExhausted is SerpApi's 429 for an account out of searches (recorded
// body).
func QuotaExhausted() Reply {
	return jsonReply(http.StatusTooManyRequests, "error_429_out_of_searches.json")
}

// Throughput is a 429 for an exceeded throughput limit (ThroughputBody).
func Throughput() Reply {
	return Reply{Status: http.StatusTooManyRequests, Body: ThroughputBody, ContentType: jsonType}
}

// InvalidKey is SerpApi's 401 for a wrong API key (recorded body).
func InvalidKey() Reply { return jsonReply(http.StatusUnauthorized, "error_401_invalid_key.json") }

// MissingQuery is SerpApi's 400 for a search without a query (recorded
// body).
func MissingQuery() Reply { return jsonReply(http.StatusBadRequest, "error_400_missing_q.json") }

// Unavailable is SerpApi's 503 (recorded body: search_metadata.status
// "Error" and a "try again later" message).
func Unavailable() Reply { return jsonReply(http.StatusServiceUnavailable, "error_503.json") }

// Call is a request the fake received.
type Call struct {
	Method string
	Path   string
	Query  url.Values  // every query parameter received, api_key included
	Header http.Header // the request headers (traceparent, for the tracing tests)
	At     time.Time
}

type search struct {
	total   int
	results []map[string]any
}

// Server is the fake. Its zero behaviour: CompanyKraft and CompanyPhilips
// have their recorded result, every other company gets the "no results"
// answer, and any non-empty api_key is accepted.
//
// The Recorder's methods script replies (Script), slow every answer
// (SetLatency), and count the calls (CallCount) or wait for them
// (WaitCalls).
type Server struct {
	*httptest.Server
	fakehttp.Recorder[Call]

	mu       sync.Mutex
	apiKey   string
	searches map[string]search   // by lower-cased company
	cpc      map[string][]string // subclasses by upper-cased publication number
	seq      int
}

// New starts a fake SerpApi server, closed when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := Start()
	tb.Cleanup(s.Close)
	return s
}

// Start starts a fake SerpApi server outside a test (a benchmark's server
// process, say); the caller closes it.
func Start() *Server {
	s := &Server{searches: map[string]search{}, cpc: map[string][]string{}}
	s.SetResults(CompanyKraft, 1, []map[string]any{RecordedKraft()})
	s.SetResults(CompanyPhilips, 1, []map[string]any{RecordedPhilips()})
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the value for SERPAPI_BASE_URL.
func (s *Server) BaseURL() string { return s.URL }

// SetAPIKey makes the fake accept only key (401 otherwise). With "" (the
// default) any non-empty key is accepted.
func (s *Server) SetAPIKey(key string) {
	s.mu.Lock()
	s.apiKey = key
	s.mu.Unlock()
}

// SetResults registers what a search for company returns from now on: the
// organic results (each a JSON object such as Organic builds; copied, and
// numbered with position and rank when they have none) and total as
// search_information.total_results. A negative total leaves total_results
// out of the answer. Companies match case-insensitively, and the assignee
// parameter is matched without one layer of enclosing parentheses or
// double quotes.
func (s *Server) SetResults(company string, total int, results []map[string]any) {
	copied := make([]map[string]any, len(results))
	for i, r := range results {
		copied[i] = deepCopy(r)
	}
	s.mu.Lock()
	s.searches[strings.ToLower(strings.TrimSpace(company))] = search{total: total, results: copied}
	s.mu.Unlock()
}

// SetCPC registers the CPC subclasses (H04L, A47J) of the result with
// publicationNumber, for the summary's cpc group of every answer that
// sends that result: "Total" first, then each subclass with the share of
// the sent results classified in it (a result counts once in each of its
// subclasses), largest first, ties by code, and the range of their
// publication years. Codes are trimmed and upper-cased, empty and repeated
// ones dropped; no subclasses clear the result's. Publication numbers
// match case-insensitively. A result without registered subclasses counts
// in "Total" only.
func (s *Server) SetCPC(publicationNumber string, subclasses ...string) {
	var codes []string
	for _, c := range subclasses {
		c = strings.ToUpper(strings.TrimSpace(c))
		if c != "" && !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	pn := strings.ToUpper(strings.TrimSpace(publicationNumber))
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(codes) == 0 {
		delete(s.cpc, pn)
		return
	}
	s.cpc[pn] = codes
}

// Calls returns the requests received so far.
func (s *Server) Calls() []Call {
	out := s.Recorder.Calls()
	for i := range out {
		out[i].Query = cloneValues(out[i].Query)
	}
	return out
}

// RecordedSearch is SerpApi's recorded answer to q=(Coffee) (two organic
// results: PatentKraft and the Nestlé RU2766609C2), byte for byte as in
// testdata/search_coffee.json.
func RecordedSearch() []byte { return fixture("search_coffee.json") }

// RecordedKraft is the recorded organic result for PatentKraft (a copy).
func RecordedKraft() map[string]any {
	var ans struct {
		OrganicResults []map[string]any `json:"organic_results"`
	}
	if err := json.Unmarshal(RecordedSearch(), &ans); err != nil || len(ans.OrganicResults) == 0 {
		panic(fmt.Sprintf("serpapitest: bad fixture search_coffee.json: %v", err))
	}
	return ans.OrganicResults[0]
}

// RecordedPhilips is the recorded organic result for PatentPhilips (a copy).
func RecordedPhilips() map[string]any {
	var r map[string]any
	if err := json.Unmarshal(fixture("organic_philips.json"), &r); err != nil {
		panic(fmt.Sprintf("serpapitest: bad fixture organic_philips.json: %v", err))
	}
	return r
}

// Organic returns a complete organic result in SerpApi's format, with every
// field the recorded results carry: the identity fields from the arguments
// (publicationNumber like US10906193B2, date as YYYY-MM-DD publication
// date), links derived from publicationNumber as SerpApi forms them, and
// placeholders for the rest (DefaultInventor, DefaultAssignee, priority and
// filing dates 3 and 2 years before date, grant_date equal to date for kind
// codes B and C). pdfURL "" leaves pdf out. position and rank are left to
// the server, which numbers results as it sends them.
func Organic(publicationNumber, title, date, pdfURL string) map[string]any {
	pn := publicationNumber
	cc := pn
	if len(cc) > 2 {
		cc = cc[:2]
	}
	kind := kindCode(pn)
	doc := strings.TrimSuffix(pn, kind)
	day := strings.ReplaceAll(date, "-", "")
	id := "patent/" + pn + "/en"
	drawing := doc + "-" + day + "-D00000.png"
	r := map[string]any{
		"patent_id":          id,
		"patent_link":        "https://patents.google.com/" + id,
		"serpapi_link":       "https://serpapi.com/search.json?engine=google_patents_details&patent_id=" + url.QueryEscape(id),
		"title":              title,
		"snippet":            "The invention relates to " + strings.ToLower(title) + " ...",
		"priority_date":      yearsBefore(date, 3),
		"filing_date":        yearsBefore(date, 2),
		"publication_date":   date,
		"inventor":           DefaultInventor,
		"assignee":           DefaultAssignee,
		"publication_number": pn,
		"language":           "en",
		"thumbnail":          imageURL("thumbnail:"+pn, drawing),
		"figures": []any{map[string]any{
			"thumbnail": imageURL("figure-thumbnail:"+pn, drawing),
			"full":      imageURL("figure-full:"+pn, drawing),
		}},
		"country_status": map[string]any{cc: "ACTIVE"},
	}
	if strings.HasPrefix(kind, "B") || strings.HasPrefix(kind, "C") {
		r["grant_date"] = date
	}
	if pdfURL != "" {
		r["pdf"] = pdfURL
	}
	return r
}

// PDFURL returns a PDF link of the form Google Patents uses
// (https://patentimages.storage.googleapis.com/{2hex}/{2hex}/{2hex}/{14hex}/{NAME}.pdf,
// US grants without their kind code), stable for a publication number.
func PDFURL(publicationNumber string) string {
	name := publicationNumber
	if kind := kindCode(name); strings.HasPrefix(name, "US") && strings.HasPrefix(kind, "B") {
		name = strings.TrimSuffix(name, kind)
	}
	return imageURL("pdf:"+publicationNumber, name+".pdf")
}

// kindCode returns the kind code at the end of a publication number: a
// letter and an optional digit after the document number (B2, A1, E).
func kindCode(pn string) string {
	i := len(pn)
	if i > 0 && pn[i-1] >= '0' && pn[i-1] <= '9' {
		i--
	}
	if i > 2 && pn[i-1] >= 'A' && pn[i-1] <= 'Z' && pn[i-2] >= '0' && pn[i-2] <= '9' {
		return pn[i-1:]
	}
	return ""
}

func imageURL(seed, name string) string {
	h := sha256.Sum256([]byte(seed))
	x := hex.EncodeToString(h[:])
	return "https://patentimages.storage.googleapis.com/" + x[0:2] + "/" + x[2:4] + "/" + x[4:6] + "/" + x[6:20] + "/" + name
}

func yearsBefore(date string, years int) string {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return date
	}
	return t.AddDate(-years, 0, 0).Format(time.DateOnly)
}

const jsonType = "application/json; charset=utf-8"

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	s.mu.Lock()
	wantKey := s.apiKey
	s.seq++
	seq := s.seq
	s.mu.Unlock()

	reply, ok := s.Receive(r, Call{Method: r.Method, Path: r.URL.Path, Query: cloneValues(query), Header: r.Header.Clone(), At: time.Now()})
	if !ok {
		return
	}
	if reply != nil {
		reply.Write(w)
		return
	}

	if r.Method != http.MethodGet || (r.URL.Path != "/search.json" && r.URL.Path != "/search") {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "<!DOCTYPE html><html><body><h1>404 Not Found</h1></body></html>")
		return
	}
	if key := query.Get("api_key"); key == "" || (wantKey != "" && key != wantKey) {
		InvalidKey().Write(w)
		return
	}
	if engine := query.Get("engine"); engine != "google_patents" {
		w.Header().Set("Content-Type", jsonType)
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "Unsupported `" + engine + "` search engine."})
		return
	}
	assignee := query.Get("assignee")
	if assignee == "" && query.Get("q") == "" {
		MissingQuery().Write(w)
		return
	}

	s.mu.Lock()
	found, ok := s.searches[strings.ToLower(unwrap(assignee))]
	s.mu.Unlock()

	ans := map[string]any{
		"search_metadata":   s.metadata(seq, query),
		"search_parameters": parameters(query),
	}
	if !ok || len(found.results) == 0 {
		var none map[string]any
		if err := json.Unmarshal(fixture("no_results.json"), &none); err != nil {
			panic(fmt.Sprintf("serpapitest: bad fixture no_results.json: %v", err))
		}
		ans["search_metadata"].(map[string]any)["status"] = none["search_metadata"].(map[string]any)["status"]
		ans["error"] = none["error"]
		if ok && found.total >= 0 {
			ans["search_information"] = map[string]any{"total_results": found.total, "total_pages": 0, "page_number": 0}
		}
		writeJSON(w, ans)
		return
	}

	num := 10
	if n, err := strconv.Atoi(query.Get("num")); err == nil {
		num = min(max(n, 10), 100)
	}
	page := found.results[:min(num, len(found.results))]
	organic := make([]any, len(page))
	for i, res := range page {
		res = deepCopy(res)
		if _, has := res["position"]; !has {
			res["position"] = i + 1
		}
		if _, has := res["rank"]; !has {
			res["rank"] = i
		}
		organic[i] = res
	}
	info := map[string]any{"page_number": 0}
	more := len(found.results) > len(page)
	if found.total >= 0 {
		info["total_results"] = found.total
		info["total_pages"] = min((found.total+num-1)/num, 100)
		more = more || found.total > len(page)
	}
	ans["search_information"] = info
	ans["organic_results"] = organic
	s.mu.Lock()
	cpc := maps.Clone(s.cpc)
	s.mu.Unlock()
	ans["summary"] = summary(organic, cpc)
	pagination := map[string]any{"current": 0}
	if more {
		next := url.Values{}
		for k, vs := range query {
			if k != "api_key" {
				next[k] = vs
			}
		}
		next.Set("page", "1")
		pagination["next"] = s.URL + "/search.json?" + next.Encode()
	}
	ans["serpapi_pagination"] = pagination
	writeJSON(w, ans)
}

// metadata is a search_metadata object for the seq-th search.
func (s *Server) metadata(seq int, query url.Values) map[string]any {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s#%d", query.Encode(), seq)))
	id := hex.EncodeToString(h[:12])
	dir := hex.EncodeToString(h[12:20])
	inner := url.Values{}
	for k, vs := range query {
		if k != "api_key" && k != "engine" && k != "num" {
			inner[k] = vs
		}
	}
	now := time.Now().UTC().Format("2006-01-02 15:04:05 UTC")
	return map[string]any{
		"id":                 id,
		"status":             "Success",
		"json_endpoint":      "https://serpapi.com/searches/" + dir + "/" + id + ".json",
		"created_at":         now,
		"processed_at":       now,
		"google_patents_url": "https://patents.google.com/xhr/query?url=" + url.QueryEscape(inner.Encode()),
		"raw_html_file":      "https://serpapi.com/searches/" + dir + "/" + id + ".html",
		"prettify_html_file": "https://serpapi.com/searches/" + dir + "/" + id + ".prettify",
		"total_time_taken":   1.09,
	}
}

// parameters echoes the request's parameters as SerpApi does, without the
// API key.
func parameters(query url.Values) map[string]any {
	p := map[string]any{}
	for k := range query {
		if k != "api_key" {
			p[k] = query.Get(k)
		}
	}
	return p
}

// summary builds the summary object (assignee, inventor and cpc groups,
// "Total" first) over the results sent. A result counts in the assignee
// and inventor named by its fields and in the CPC subclasses that cpc
// holds for its publication number.
func summary(results []any, cpc map[string][]string) map[string]any {
	group := func(keysOf func(m map[string]any) []string, tiesByKey bool) []any {
		type bucket struct {
			key      string
			n        int
			min, max string
		}
		var order []*bucket
		byKey := map[string]*bucket{}
		all := &bucket{key: "Total"}
		add := func(b *bucket, year string) {
			b.n++
			if year != "" && (b.min == "" || year < b.min) {
				b.min = year
			}
			if year != "" && year > b.max {
				b.max = year
			}
		}
		for _, r := range results {
			m := r.(map[string]any)
			year := ""
			if d, _ := m["publication_date"].(string); len(d) >= 4 {
				year = d[:4]
			}
			add(all, year)
			for _, v := range keysOf(m) {
				b := byKey[v]
				if b == nil {
					b = &bucket{key: v}
					byKey[v] = b
					order = append(order, b)
				}
				add(b, year)
			}
		}
		sort.SliceStable(order, func(i, j int) bool {
			if order[i].n != order[j].n || !tiesByKey {
				return order[i].n > order[j].n
			}
			return order[i].key < order[j].key
		})
		out := []any{}
		for _, b := range append([]*bucket{all}, order...) {
			pct := math.Round(1000*float64(b.n)/float64(all.n)) / 10
			span := b.min + "-" + b.max
			if b.min == "" {
				span = "unknown"
			}
			out = append(out, map[string]any{
				"key":        b.key,
				"percentage": pct,
				"frequency":  []any{map[string]any{"year_range": span, "percentage": pct}},
			})
		}
		return out
	}
	field := func(name string) func(m map[string]any) []string {
		return func(m map[string]any) []string {
			if v, _ := m[name].(string); v != "" {
				return []string{v}
			}
			return nil
		}
	}
	subclasses := func(m map[string]any) []string {
		pn, _ := m["publication_number"].(string)
		return cpc[strings.ToUpper(strings.TrimSpace(pn))]
	}
	return map[string]any{
		"assignee": group(field("assignee"), false),
		"inventor": group(field("inventor"), false),
		"cpc":      group(subclasses, true),
	}
}

// unwrap removes one layer of enclosing parentheses or double quotes.
func unwrap(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '(' && s[len(s)-1] == ')' || s[0] == '"' && s[len(s)-1] == '"') {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

func jsonReply(status int, name string) Reply {
	return Reply{Status: status, Body: string(fixture(name)), ContentType: jsonType}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", jsonType)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func fixture(name string) []byte {
	b, err := fixtures.ReadFile("testdata/" + name)
	if err != nil {
		panic(fmt.Sprintf("serpapitest: missing fixture %s: %v", name, err))
	}
	return b
}

func deepCopy(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("serpapitest: result is not JSON: %v", err))
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("serpapitest: result is not a JSON object: %v", err))
	}
	if out == nil {
		out = map[string]any{}
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
