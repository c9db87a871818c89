package httpapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

func seedExports(t *testing.T, en *env) {
	t.Helper()
	for i, text := range []string{"First, with \"quotes\", commas\nand a newline.", "Second <b> & > text", "Third"} {
		if _, err := en.st.Analyses().CreateAnalysis(context.Background(), patent.AnalysisRecord{CompanyName: "Acme Corp",
			AnalysisType: patent.AnalysisPortfolio, Model: "openai/gpt-4o-mini", Response: text,
			Timestamp: time.Date(2026, 11, 20+i, 9, 0, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
	}
	en.st.Analyses().CreateAnalysis(context.Background(), patent.AnalysisRecord{CompanyName: "Acme Corp", AnalysisType: patent.AnalysisPortfolio, Response: "cached", Cached: true})
}

func TestExportCSV(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	seedExports(t, en)

	rec := en.do(t, request{target: "/export/acme%20CORP", token: tb.AccessToken})
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("Content-Type = %q", ct)
	}
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename=acme_corp_export.csv` {
		t.Errorf("Content-Disposition = %q", cd)
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "company_name,analysis_type,model,analysis,timestamp" || len(rows) != 4 {
		t.Fatalf("csv = %q", rows)
	}
	if rows[1][3] != "Third" || rows[3][3] != "First, with \"quotes\", commas\nand a newline." || rows[2][3] != "Second <b> & > text" || rows[3][4] != "2026-11-20T09:00:00Z" {
		t.Errorf("rows = %q (want newest first, text as stored)", rows[1:])
	}
	rec = en.do(t, request{target: "/export/Nobody", token: tb.AccessToken})
	wantStatus(t, rec, http.StatusNotFound)
	if !strings.Contains(rec.Body.String(), `"No analysis results found for Nobody"`) {
		t.Errorf("404 body = %s", rec.Body)
	}
	wantStatus(t, en.do(t, request{target: "/export/-bad", token: tb.AccessToken}), http.StatusUnprocessableEntity)
	wantStatus(t, en.do(t, request{target: "/export/Acme%20Corp"}), http.StatusUnauthorized)
}

func TestExportPDF(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	seedExports(t, en)
	rec := en.do(t, request{target: "/export/Acme%20Corp/pdf", token: tb.AccessToken})
	wantStatus(t, rec, http.StatusOK)
	if rec.Header().Get("Content-Type") != "application/pdf" {
		t.Errorf("Content-Type = %q", rec.Header().Get("Content-Type"))
	}
	wantName := "acme_corp-analysis-" + epoch.Format("2006-01-02") + ".pdf"
	if cd := rec.Header().Get("Content-Disposition"); cd != "attachment; filename="+wantName {
		t.Errorf("Content-Disposition = %q, want %s", cd, wantName)
	}
	body := rec.Body.Bytes()
	if !bytes.HasPrefix(body, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %.20q", body)
	}
	pages := pdftest.PageTexts(t, body, "-layout")
	text := strings.Join(strings.Fields(strings.Join(pages, " ")), " ")
	for _, want := range []string{"Acme Corp", "Total Analyses", "Analysis Types", "Models Used", "Third", "Second <b> & > text", "portfolio"} {
		if !strings.Contains(text, want) {
			t.Errorf("pdf text lacks %q", want)
		}
	}
	if strings.Contains(text, "&lt;") || strings.Contains(text, "cached") {
		t.Errorf("pdf text shows entities or cached analyses")
	}
	wantStatus(t, en.do(t, request{target: "/export/Nobody/pdf", token: tb.AccessToken}), http.StatusNotFound)
}

// TestExportPDFMarkdownFonts: the report renders the analyses' Markdown
// and draws CJK text in the fallback font the server was given.
func TestExportPDFMarkdownFonts(t *testing.T) {
	font, err := os.ReadFile(filepath.Join("..", "export", "testdata", "fonts", "DroidSansFallback-subset.ttf"))
	if err != nil {
		t.Fatal(err)
	}
	fonts, err := export.NewFonts(font, nil)
	if err != nil {
		t.Fatal(err)
	}
	en := newEnv(t, withPDF(export.PDFOptions{Fonts: fonts}))
	_, tb := en.newUser(t, "ada@example.com")
	if _, err := en.st.Analyses().CreateAnalysis(context.Background(), patent.AnalysisRecord{CompanyName: "BYD", AnalysisType: patent.AnalysisPortfolio,
		Model: "openai/gpt-4o-mini", Response: "## Key themes\n\n- **Assignee**: 比亚迪股份有限公司\n- Batteries", Timestamp: epoch}); err != nil {
		t.Fatal(err)
	}
	rec := en.do(t, request{target: "/export/BYD/pdf", token: tb.AccessToken})
	wantStatus(t, rec, http.StatusOK)
	body := rec.Body.Bytes()
	s := pdftest.PageTexts(t, body, "-layout")[0]
	for _, want := range []string{"Key themes", "Assignee", "比亚迪股份有限公司", "Batteries"} {
		if !strings.Contains(s, want) {
			t.Errorf("pdf text lacks %q; it reads:\n%s", want, s)
		}
	}
	for _, markup := range []string{"##", "**", "\uFFFD"} {
		if strings.Contains(s, markup) {
			t.Errorf("pdf text shows %q; it reads:\n%s", markup, s)
		}
	}
}

func TestAnalytics(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	seedExports(t, en) // November 2026, three days before the env's clock
	rec := en.do(t, request{target: "/analytics/trends", token: tb.AccessToken})
	wantStatus(t, rec, http.StatusOK)
	wantKeys(t, rec.Body.Bytes(), "by_month", "by_type_over_time", "period_days")
	if !strings.Contains(rec.Body.String(), `"period_days":90`) {
		t.Errorf("trends = %s", rec.Body)
	}
	for _, q := range []string{"days=6", "days=366", "days=x"} {
		wantStatus(t, en.do(t, request{target: "/analytics/trends?" + q, token: tb.AccessToken}), http.StatusUnprocessableEntity)
	}
	rec = en.do(t, request{target: "/analytics/summary?days=365", token: tb.AccessToken})
	wantStatus(t, rec, http.StatusOK)
	wantKeys(t, rec.Body.Bytes(), "period_days", "total_analyses", "cached_analyses", "by_type", "by_model", "top_companies", "tokens")
	for _, q := range []string{"days=0", "days=366"} {
		wantStatus(t, en.do(t, request{target: "/analytics/summary?" + q, token: tb.AccessToken}), http.StatusUnprocessableEntity)
	}
	wantStatus(t, en.do(t, request{target: "/analytics/summary"}), http.StatusUnauthorized)
}

// TestExportPDFCharts: the report's charts, fed from the store: an
// untracked company has no tracking chart at all, a tracked one's waits
// for its first run; every company has its analyses per month.
func TestExportPDFCharts(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	seedExports(t, en)
	page := func() string {
		t.Helper()
		return exportPDFText(t, en, tb.AccessToken, "Acme%20Corp")
	}
	text := page()
	if !strings.Contains(text, "Analyses per month") {
		t.Errorf("untracked: the report lacks the chart of analyses per month: %s", text)
	}
	for _, unwanted := range []string{"Tracking", "Patent count per scheduled run", "Not tracked", "No runs yet"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("untracked: the report shows %q: %s", unwanted, text)
		}
	}
	if _, err := storetest.Track(context.Background(), en.st, "Acme Corp", en.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if text := page(); !strings.Contains(text, "Tracking Patent count per scheduled run") || !strings.Contains(text, "No runs yet") {
		t.Errorf("tracked, no run yet: the report reads %s", text)
	}
}

// exportPDFText fetches the company's PDF report through the server and
// returns its text, all pages, white space collapsed.
func exportPDFText(t *testing.T, en *env, token, company string) string {
	t.Helper()
	rec := en.do(t, request{target: "/export/" + company + "/pdf", token: token})
	wantStatus(t, rec, http.StatusOK)
	body := rec.Body.Bytes()
	pages := pdftest.PageTexts(t, body, "-layout")
	return strings.Join(strings.Fields(strings.Join(pages, " ")), " ")
}

// TestExportPDFPortfolio: the report opens with the portfolio facts of the
// company's newest portfolio analysis that has them, as the store keeps
// them: its patents, CPC shares and publication years; newer analyses
// without facts (single-patent ones, or stored before facts were kept)
// are passed over, and a company with none gets a line saying so.
func TestExportPDFPortfolio(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	ctx := context.Background()
	at := func(day int) time.Time { return time.Date(2026, 11, day, 9, 0, 0, 0, time.UTC) }
	ref := func(id, title string) patent.PatentRef {
		return patent.PatentRef{PatentID: id, Title: title, PublicationDate: "2024-05-07", Read: true,
			PDFLink: "https://patentimages.storage.googleapis.com/aa/bb/cc/0123456789abcd/" + id + ".pdf"}
	}
	for _, rec := range []patent.AnalysisRecord{
		{AnalysisType: patent.AnalysisPortfolio, Response: "Older portfolio.", Timestamp: at(10),
			Portfolio: &patent.Portfolio{CPC: []patent.CPCShare{{Code: "A61B", Share: 1}}}, Patents: []patent.PatentRef{ref("US1111111B2", "Older patent")}},
		{AnalysisType: patent.AnalysisPortfolio, Response: "Newest portfolio with facts.", Timestamp: at(20),
			Portfolio: &patent.Portfolio{
				CPC:    []patent.CPCShare{{Code: "H01M", Share: 0.6}, {Code: "B60L", Share: 0.4}},
				ByYear: []patent.YearCount{{Year: 2023, Count: 1}, {Year: 2024, Count: 2}}, Granted: 2, Applications: 1,
				Countries: []patent.CountryCount{{Country: "US", Active: 2, Inactive: 1}},
			},
			Patents: []patent.PatentRef{ref("US11394072B2", "Battery module with cooling-plate interleaving"), ref("US11762912B2", "Pouch cell")}},
		{AnalysisType: patent.AnalysisPortfolio, Response: "Stored before facts were kept.", Timestamp: at(21)},
		{AnalysisType: patent.AnalysisSinglePatent, PatentID: "US9999999B2", Response: "Single patent.", Timestamp: at(22)},
	} {
		rec.CompanyName, rec.Model = "Acme Corp", "openai/gpt-4o-mini"
		if _, err := en.st.Analyses().CreateAnalysis(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	text := exportPDFText(t, en, tb.AccessToken, "Acme%20Corp")
	rest := text
	for _, want := range []string{"Portfolio", "From the portfolio analysis of 2026-11-20 09:00 UTC.", "Patents analysed 2",
		"Search results 3: 2 granted, 1 application", "Countries US 2 active, 1 inactive",
		"CPC classes", "H01M", "60.0%", "B60L", "40.0%", "Search results per publication year", "2023", "2024",
		"Patents analysed", "US11394072B2", "Battery module with cooling-plate interleaving", "2024-05-07",
		"patentimages.storage.googleapis.com/…/US11394072B2.pdf", "US11762912B2", "Pouch cell",
		"Analyses", "Total Analyses 4", "Analysis 1 of 4: single_patent"} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Errorf("the report lacks %q after what comes before it: %s", want, text)
			continue
		}
		rest = rest[i+len(want):]
	}
	if strings.Contains(text, "US1111111B2") || strings.Contains(text, "A61B") {
		t.Errorf("the report shows the older portfolio's facts: %s", text)
	}

	// A company with single-patent analyses only has no portfolio facts.
	if _, err := en.st.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Solo Inc", AnalysisType: patent.AnalysisSinglePatent,
		PatentID: "US8427103B2", Model: "openai/gpt-4o-mini", Response: "One patent.", Timestamp: at(22)}); err != nil {
		t.Fatal(err)
	}
	text = exportPDFText(t, en, tb.AccessToken, "Solo%20Inc")
	if !strings.Contains(text, "Portfolio No portfolio facts: none of this company's stored portfolio analyses has them.") ||
		strings.Contains(text, "CPC classes") || strings.Contains(text, "Patents analysed") {
		t.Errorf("no portfolio facts: the report reads %s", text)
	}
}
