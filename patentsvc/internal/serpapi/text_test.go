package serpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
)

// TestSearchCleansText (decisions.md, "Both services: hostile input
// answered, never a 5xx"): the answer's strings come back without NUL
// characters and as valid UTF-8, each invalid byte as U+FFFD: a title,
// snippet and assignee with \u0000, and raw bytes that are not UTF-8 in a
// body sent as it is.
func TestSearchCleansText(t *testing.T) {
	t.Parallel()
	pdf := serpapitest.PDFURL("US11000001B2")
	r := serpapitest.Organic("US11000001B2", "Blade\x00 holder\x00", "2025-01-02", pdf)
	r["snippet"] = "\x00 A blade\x00 ..."
	r["assignee"] = "Acme\x00 Inc."
	// The fake's JSON carries each NUL as \u0000; the raw bytes go in by
	// hand, as json.Marshal would replace them.
	body := strings.Replace(answer(t, 1, r), `"Acme\u0000 Inc."`, "\"Acme \xff\xfe Inc.\"", 1)
	fake := serpapitest.New(t)
	fake.Script(serpapitest.Reply{Status: 200, Body: body})
	got, err := newClient(fake.BaseURL(), 5*time.Second, 0).Search(t.Context(), patent.SearchQuery{Company: "Acme", Since: since, Max: 10})
	if err != nil {
		t.Fatalf("Search error = %v, want nil", err)
	}
	wantResult(t, "Search(text with NUL and invalid bytes)", got, patent.SearchResult{TotalResults: 1, Patents: []patent.SearchHit{{
		PatentID: "US11000001B2", Title: "Blade holder", PublicationDate: "2025-01-02", PDFLink: pdf,
		Snippet: "A blade ...", Assignee: "Acme \uFFFD\uFFFD Inc.",
	}}})
}
