package serpapi

import (
	"errors"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
)

// FuzzParseAnswer feeds arbitrary bodies to the answer parser: it must
// never panic, fail only with ErrUpstream (never ErrQuota) and no data, and
// every patent it keeps must follow the filtering rules, its strings
// trimmed, valid UTF-8 and free of NUL.
func FuzzParseAnswer(f *testing.F) {
	paths, err := filepath.Glob("serpapitest/testdata/*.json")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fixtures in serpapitest/testdata (err %v)", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, int8(10))
	}
	for _, s := range []string{
		"",
		" ",
		"{}",
		"[]",
		"null",
		"<html><body>maintenance</body></html>",
		`{"organic_results":[]}`,
		`{"organic_results":null}`,
		`{"organic_results":{}}`,
		`{"organic_results":[null,1,"x",[],{}]}`,
		`{"search_metadata":"x","organic_results":[{"publication_number":"US1B2","pdf":"https://h/a.pdf"}]}`,
		`{"search_metadata":{"status":"Error"}}`,
		`{"search_metadata":{"status":"error"},"organic_results":[{"publication_number":"US1B2","pdf":"https://h/a.pdf"}]}`,
		`{"search_metadata":{"status":7},"error":7}`,
		`{"error":"Google Patents hasn't returned any results for this query."}`,
		`{"error":"Your account has run out of searches."}`,
		`{"search_information":{"organic_results_state":"Bad request."}}`,
		`{"search_information":{"total_results":-1},"organic_results":[{}]}`,
		`{"search_information":{"total_results":"1e400"},"organic_results":[{}]}`,
		`{"search_information":{"total_results":1e400},"organic_results":[{}]}`,
		`{"search_information":{"total_results":"NaN"},"organic_results":[{}]}`,
		`{"search_information":{"total_results":"0x10"},"organic_results":[{}]}`,
		`{"search_information":{"total_results":"9223372036854775808"},"organic_results":[{}]}`,
		`{"organic_results":[{"publication_number":"US1B2","pdf":"https://h/a.pdf"},{"publication_number":"US1B2","pdf":"https://h/b.pdf"}]}`,
		`{"organic_results":[{"publication_number":"US1B2","pdf":"https://u:p@h/a.pdf"}]}`,
		`{"organic_results":[{"publication_number":"US1B2","pdf":"https://h/a.pdf?x.pdf"}]}`,
		`{"organic_results":[{"publication_number":"US1B2","pdf":"https://h/%2e%70%64%66"}]}`,
		`{"organic_results":[{"publication_number":"US1B2","pdf":"https://[::1/a.pdf"}]}`,
		`{"organic_results":[{"publication_number":"US1B2","pdf":"https:///a.pdf"}]}`,
		`{"organic_results":[{"publication_number":"US\u00c91B2","pdf":"https://h/a.pdf"}]}`,
		"{\"organic_results\":[{\"publication_number\":\"US1B2\",\"title\":\"\xff\xfe\",\"pdf\":\"https://h/a.pdf\"}]}",
		`{"organic_results":[{"publication_number":"US1B2","title":"a\u0000b","snippet":"\u0000","assignee":"\ud800","pdf":"https://h/a.pdf"}]}`,
		`{"organic_results":[{"publication_number":"US1B2\n","pdf":" https://h/a.pdf "}]}`,
		`{"organic_results":[{"publication_number":"US1B2","grant_date":"2020-01-01","publication_date":"2020-01-01","country_status":{"US":"ACTIVE","EP":"NOT_ACTIVE","":"ACTIVE"}},{"publication_number":"EP2A1"}],"summary":{"cpc":[{"key":"Total","percentage":100},{"key":"H04L","percentage":66.7},{"key":"G06F","percentage":"x"},{"key":"A47J","percentage":1e309}]}}`,
	} {
		f.Add([]byte(s), int8(0))
		f.Add([]byte(s), int8(1))
	}

	f.Fuzz(func(t *testing.T, body []byte, limit int8) {
		res, err := parseAnswer(body, int(limit), strconv.Quote)
		if err != nil {
			if !errors.Is(err, ErrUpstream) || errors.Is(err, ErrQuota) {
				t.Errorf("parseAnswer(%q) error = %v, want ErrUpstream and not ErrQuota", body, err)
			}
			if res.TotalResults != 0 || res.Patents != nil {
				t.Errorf("parseAnswer(%q) = %+v with error %v, want the zero Result", body, res, err)
			}
			return
		}
		if res.Patents == nil {
			t.Errorf("parseAnswer(%q) Patents = nil, want non-nil", body)
		}
		if res.TotalResults < 0 {
			t.Errorf("parseAnswer(%q) TotalResults = %d, want >= 0", body, res.TotalResults)
		}
		if limit > 0 && len(res.Patents) > int(limit) {
			t.Errorf("parseAnswer(%q, %d) kept %d patents, want at most %d", body, limit, len(res.Patents), limit)
		}
		seen := map[string]bool{}
		for i, p := range res.Patents {
			if !regexp.MustCompile(`^[A-Z]{2}[A-Z0-9]{1,20}$`).MatchString(p.PatentID) {
				t.Errorf("patent %d: PatentID %q breaks the pattern", i, p.PatentID)
			}
			if seen[p.PatentID] {
				t.Errorf("patent %d: PatentID %q repeated", i, p.PatentID)
			}
			seen[p.PatentID] = true
			lower := strings.ToLower(p.PDFLink)
			if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") || !pdfLink(p.PDFLink) {
				t.Errorf("patent %d: PDFLink %q is not an http(s) PDF link", i, p.PDFLink)
			}
			for name, s := range map[string]string{"Title": p.Title, "PublicationDate": p.PublicationDate, "Snippet": p.Snippet, "Assignee": p.Assignee, "PDFLink": p.PDFLink} {
				if s != strings.TrimSpace(s) {
					t.Errorf("patent %d: %s = %q, want trimmed", i, name, s)
				}
				if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
					t.Errorf("patent %d: %s = %q, want valid UTF-8 without NUL", i, name, s)
				}
			}
		}
		checkFacts(t, body, res)
	})
}

// checkFacts holds a parsed answer's publications and portfolio to their
// rules: every publication's id is valid and unique, each patent is one
// of them, and the portfolio counts exactly the publications, with at
// most 10 CPC shares in 0..1 and at most 50 countries.
func checkFacts(t *testing.T, body []byte, res patent.SearchResult) {
	pubs := map[string]bool{}
	for _, p := range res.Publications {
		if len(p.Title) > maxTitleBytes || len(p.PDFLink) > maxLinkBytes || len(p.PublicationDate) > maxDateBytes || !utf8.ValidString(p.Title) {
			t.Errorf("parseAnswer(%q): publication %+v past its bounds", body, p)
		}
		if _, err := patent.ParsePatentID(p.PatentID); err != nil || pubs[p.PatentID] {
			t.Errorf("parseAnswer(%q): publication %q invalid or repeated", body, p.PatentID)
		}
		pubs[p.PatentID] = true
	}
	for _, p := range res.Patents {
		if !pubs[p.PatentID] {
			t.Errorf("parseAnswer(%q): patent %s is not among the publications", body, p.PatentID)
		}
	}
	pf := res.Portfolio
	if pf == nil {
		if len(res.Publications) > 0 {
			t.Errorf("parseAnswer(%q): %d publications and no portfolio", body, len(res.Publications))
		}
		return
	}
	if pf.Total() != len(res.Publications) || len(pf.CPC) > patent.MaxPortfolioCPC || len(pf.Countries) > patent.MaxPortfolioCountries {
		t.Errorf("parseAnswer(%q): portfolio %+v for %d publications", body, pf, len(res.Publications))
	}
	if len(res.Publications) > pageSize || len(pf.ByYear) > pageSize {
		t.Errorf("parseAnswer(%q): %d publications, %d years, want at most one page", body, len(res.Publications), len(pf.ByYear))
	}
	for _, c := range pf.CPC {
		if c.Share < 0 || c.Share > 1 || c.Code == "" || len(c.Code) > maxCPCKeyBytes {
			t.Errorf("parseAnswer(%q): CPC share %+v", body, c)
		}
	}
}

func TestParseRecordedFixture(t *testing.T) {
	res, err := parseAnswer(serpapitest.RecordedSearch(), 0, strconv.Quote)
	if err != nil || res.TotalResults != 125048 || len(res.Patents) != 2 {
		t.Fatalf("parseAnswer(recorded) = %+v, %v, want 2 patents of 125048", res, err)
	}
}

func TestRedact(t *testing.T) {
	c := NewClient("https://serpapi.com", "secret-key-123", time.Second, 0, nil)
	for _, in := range []string{
		`Get "https://serpapi.com/search.json?api_key=secret-key-123": EOF`,
		"bad key secret-key-123",
		"see http://127.0.0.1:9/x?api_key=secret-key-123 now",
	} {
		got := c.errText(errors.New(in))
		if strings.Contains(got, "secret-key-123") || strings.Contains(got, "://") {
			t.Errorf("redact(%q) = %q, want no key or URL", in, got)
		}
	}
	if got := c.quote(strings.Repeat("é", 300)); len(got) > 210 {
		t.Errorf("quote(600 bytes) = %d bytes, want it cut near 200", len(got))
	}
}
