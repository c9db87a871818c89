package serpapitest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
)

func get(t *testing.T, s *serpapitest.Server, query url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(s.BaseURL() + "/search.json?" + query.Encode())
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("answer %s is not a JSON object: %v", b, err)
	}
	return resp.StatusCode, m
}

func search(company string) url.Values {
	return url.Values{
		"engine": {"google_patents"}, "assignee": {company}, "after": {"publication:20250101"},
		"sort": {"new"}, "num": {"100"}, "api_key": {"k"},
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestOrganicHasRecordedFields: Organic builds every field the recorded
// Kraft result has, but position and rank (the server's), with the forms
// SerpApi uses.
func TestOrganicHasRecordedFields(t *testing.T) {
	rec := serpapitest.RecordedKraft()
	delete(rec, "position")
	delete(rec, "rank")
	pdf := serpapitest.PDFURL("US10906193B2")
	got := serpapitest.Organic("US10906193B2", "Title", "2021-02-02", pdf)
	if !reflect.DeepEqual(keys(got), keys(rec)) {
		t.Errorf("Organic keys = %v, want the recorded %v", keys(got), keys(rec))
	}
	for k, want := range map[string]any{
		"patent_id":          "patent/US10906193B2/en",
		"patent_link":        "https://patents.google.com/patent/US10906193B2/en",
		"serpapi_link":       "https://serpapi.com/search.json?engine=google_patents_details&patent_id=patent%2FUS10906193B2%2Fen",
		"publication_number": "US10906193B2",
		"publication_date":   "2021-02-02",
		"grant_date":         "2021-02-02",
		"filing_date":        "2019-02-02",
		"priority_date":      "2018-02-02",
		"pdf":                pdf,
		"language":           "en",
	} {
		if got[k] != want {
			t.Errorf("Organic()[%q] = %v, want %v", k, got[k], want)
		}
	}
	pattern := regexp.MustCompile(`^https://patentimages\.storage\.googleapis\.com/[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{14}/US10906193\.pdf$`)
	if !pattern.MatchString(pdf) {
		t.Errorf("PDFURL(US10906193B2) = %q, want the patentimages form without the kind code", pdf)
	}
	if p := serpapitest.PDFURL("US20200173898A1"); !strings.HasSuffix(p, "/US20200173898A1.pdf") {
		t.Errorf("PDFURL(application) = %q, want the kind code kept", p)
	}
	app := serpapitest.Organic("US20200173898A1", "T", "2020-06-04", "")
	if _, ok := app["grant_date"]; ok {
		t.Errorf("Organic(application) has a grant_date")
	}
	if _, ok := app["pdf"]; ok {
		t.Errorf(`Organic(pdf "") has a pdf`)
	}
}

func TestFakeSearchAnswer(t *testing.T) {
	s := serpapitest.New(t)
	var results []map[string]any
	for _, pn := range []string{"US10906193B2", "US10906194B2", "EP3000001A1"} {
		results = append(results, serpapitest.Organic(pn, "T "+pn, "2025-03-04", serpapitest.PDFURL(pn)))
	}
	results[2]["assignee"] = "Other AG"
	s.SetResults("Tesla, Inc", 250, results)

	status, ans := get(t, s, search("(Tesla, Inc)"))
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	want := []string{"organic_results", "search_information", "search_metadata", "search_parameters", "serpapi_pagination", "summary"}
	if !reflect.DeepEqual(keys(ans), want) {
		t.Errorf("answer keys = %v, want %v", keys(ans), want)
	}
	meta := ans["search_metadata"].(map[string]any)
	for _, k := range []string{"id", "status", "json_endpoint", "created_at", "processed_at", "google_patents_url", "raw_html_file", "prettify_html_file", "total_time_taken"} {
		if _, ok := meta[k]; !ok {
			t.Errorf("search_metadata lacks %s", k)
		}
	}
	if meta["status"] != "Success" {
		t.Errorf("status = %v, want Success", meta["status"])
	}
	params := ans["search_parameters"].(map[string]any)
	if _, ok := params["api_key"]; ok || params["assignee"] != "(Tesla, Inc)" || params["engine"] != "google_patents" {
		t.Errorf("search_parameters = %v, want the request echoed without api_key", params)
	}
	info := ans["search_information"].(map[string]any)
	if info["total_results"] != 250.0 || info["total_pages"] != 3.0 || info["page_number"] != 0.0 {
		t.Errorf("search_information = %v, want total 250, 3 pages, page 0", info)
	}
	organic := ans["organic_results"].([]any)
	if len(organic) != 3 {
		t.Fatalf("organic_results has %d, want 3", len(organic))
	}
	for i, r := range organic {
		m := r.(map[string]any)
		if m["position"] != float64(i+1) || m["rank"] != float64(i) {
			t.Errorf("result %d position %v rank %v, want %d and %d", i, m["position"], m["rank"], i+1, i)
		}
	}
	assignees := ans["summary"].(map[string]any)["assignee"].([]any)
	if first := assignees[0].(map[string]any); first["key"] != "Total" || first["percentage"] != 100.0 || len(assignees) != 3 {
		t.Errorf("summary.assignee = %v, want Total first then 2 assignees", assignees)
	}
	if second := assignees[1].(map[string]any); second["key"] != serpapitest.DefaultAssignee || second["percentage"] != 66.7 {
		t.Errorf("summary.assignee[1] = %v, want the default assignee at 66.7%%", second)
	}
	next, _ := ans["serpapi_pagination"].(map[string]any)["next"].(string)
	if !strings.Contains(next, "page=1") || strings.Contains(next, "api_key") {
		t.Errorf("serpapi_pagination.next = %q, want page 1 without the key", next)
	}
	if n := s.Calls()[0].Query.Get("api_key"); n != "k" {
		t.Errorf("Calls()[0].Query api_key = %q, want k", n)
	}
}

func TestFakeDefaults(t *testing.T) {
	s := serpapitest.New(t)
	for _, tt := range []struct {
		company string
		pn      string
	}{
		{serpapitest.CompanyKraft, serpapitest.PatentKraft},
		{serpapitest.CompanyPhilips, serpapitest.PatentPhilips},
	} {
		_, ans := get(t, s, search(tt.company))
		organic, _ := ans["organic_results"].([]any)
		if len(organic) != 1 || organic[0].(map[string]any)["publication_number"] != tt.pn {
			t.Errorf("search(%q) organic_results = %v, want %s", tt.company, organic, tt.pn)
		}
	}
	status, ans := get(t, s, search("Nobody Ltd"))
	if status != 200 || ans["error"] != serpapitest.NoResultsMessage || ans["organic_results"] != nil {
		t.Errorf("search(unknown) = %d %v, want 200 with the no-results error and no organic_results", status, ans)
	}
	if ans["search_metadata"].(map[string]any)["status"] != "Success" {
		t.Errorf("search(unknown) status = %v, want Success", ans["search_metadata"])
	}
}

func TestFakeErrors(t *testing.T) {
	s := serpapitest.New(t)
	q := search("Acme")
	q.Del("api_key")
	if status, ans := get(t, s, q); status != 401 || !strings.HasPrefix(ans["error"].(string), "Invalid API key") {
		t.Errorf("no api_key = %d %v, want 401 invalid key", status, ans)
	}
	q = search("Acme")
	q.Del("assignee")
	if status, ans := get(t, s, q); status != 400 || !strings.Contains(ans["error"].(string), "Missing query") {
		t.Errorf("no query = %d %v, want 400 missing query", status, ans)
	}
	s.SetAPIKey("right")
	if status, _ := get(t, s, search("Acme")); status != 401 {
		t.Errorf("wrong key = %d, want 401", status)
	}
	q = search("Acme")
	q.Set("api_key", "right")
	if status, _ := get(t, s, q); status != 200 {
		t.Errorf("right key = %d, want 200", status)
	}
	s.Script(serpapitest.QuotaExhausted())
	if status, ans := get(t, s, q); status != 429 || ans["error"] != "Your account has run out of searches." {
		t.Errorf("scripted quota = %d %v", status, ans)
	}
	if n := s.CallCount(); n != 5 {
		t.Errorf("CallCount() = %d, want 5", n)
	}
}

// TestFakeSummaryCPC: summary.cpc is built from the subclasses registered
// with SetCPC over the results sent, as SerpApi builds it: "Total" first,
// then each subclass's share of the results (a result counts in each of
// its subclasses), largest first, ties by code, one decimal, with the
// range of publication years. The results themselves carry no
// classification.
func TestFakeSummaryCPC(t *testing.T) {
	s := serpapitest.New(t)
	results := []map[string]any{
		serpapitest.Organic("US10000001B2", "A", "2025-03-04", ""),
		serpapitest.Organic("US10000002B2", "B", "2023-05-06", ""),
		serpapitest.Organic("US20240000003A1", "C", "2024-07-08", ""),
		serpapitest.Organic("EP4000004A1", "D", "2022-09-10", ""),
		serpapitest.Organic("US10000005B2", "E", "2021-01-02", ""),
		serpapitest.Organic("US10000006B2", "F", "2020-01-02", ""),
	}
	s.SetResults("Acme", len(results), results)
	s.SetCPC("US10000001B2", "H04L", "G06F")
	s.SetCPC("us10000002b2", " h04l ", "H04L", "") // case, spaces, a repeat and an empty code
	s.SetCPC("US20240000003A1", "Y02E")
	s.SetCPC("US10000005B2", "A47J")
	s.SetCPC("US10000005B2")         // cleared
	s.SetCPC("US99999999B2", "B60L") // not sent: counts nowhere

	_, ans := get(t, s, search("Acme"))
	type entry struct {
		Key        string
		Percentage float64
		Range      string
	}
	var got []entry
	for _, e := range ans["summary"].(map[string]any)["cpc"].([]any) {
		m := e.(map[string]any)
		freq := m["frequency"].([]any)[0].(map[string]any)
		got = append(got, entry{m["key"].(string), m["percentage"].(float64), freq["year_range"].(string)})
	}
	want := []entry{
		{"Total", 100, "2020-2025"},
		{"H04L", 33.3, "2023-2025"},
		{"G06F", 16.7, "2025-2025"},
		{"Y02E", 16.7, "2024-2024"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary.cpc = %+v, want %+v", got, want)
	}
	for _, r := range ans["organic_results"].([]any) {
		for k := range r.(map[string]any) {
			if strings.Contains(strings.ToLower(k), "cpc") || strings.Contains(k, "classification") {
				t.Errorf("organic result carries %q; real results have no classification", k)
			}
		}
	}

	// Only the results sent count: with num=10, the 11th is not sent.
	var many []map[string]any
	for i := range 11 {
		many = append(many, serpapitest.Organic(fmt.Sprintf("US1100000%dB2", i+10), "T", "2025-01-01", ""))
	}
	s.SetResults("Many", len(many), many)
	s.SetCPC(many[10]["publication_number"].(string), "H04W")
	q := search("Many")
	q.Set("num", "10")
	_, ans = get(t, s, q)
	if cpc := ans["summary"].(map[string]any)["cpc"].([]any); len(cpc) != 1 || cpc[0].(map[string]any)["key"] != "Total" {
		t.Errorf("summary.cpc = %v, want Total only (the classified result is not sent)", cpc)
	}
}
