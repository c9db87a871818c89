package store_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// seedAnalytics stores the same analyses in any store: three months, two
// companies, both types, cached rows, rows just outside the window.
func seedAnalytics(t *testing.T, s *store.Store) {
	t.Helper()
	at := func(m time.Month, d, h int) time.Time { return time.Date(2026, m, d, h, 30, 0, 0, time.UTC) }
	for i, r := range []patent.AnalysisRecord{
		{CompanyName: "Acme Corp", AnalysisType: patent.AnalysisPortfolio, Model: "openai/gpt-4o-mini", PromptTokens: 100, CompletionTokens: 10, Timestamp: at(9, 1, 0)},
		{CompanyName: "Acme Corp", AnalysisType: patent.AnalysisSinglePatent, Model: "openai/gpt-4o-mini", PromptTokens: 50, CompletionTokens: 5, Timestamp: at(9, 30, 23)},
		{CompanyName: "Beta Labs", AnalysisType: patent.AnalysisPortfolio, Model: "mistralai/mistral-nemo", PromptTokens: 70, CompletionTokens: 7, Timestamp: at(10, 1, 0)},
		{CompanyName: "Acme Corp", AnalysisType: patent.AnalysisPortfolio, Model: "mistralai/mistral-nemo", PromptTokens: 80, CompletionTokens: 8, Timestamp: at(10, 31, 23)},
		{CompanyName: "Acme Corp", AnalysisType: patent.AnalysisPortfolio, Model: "openai/gpt-4o-mini", Cached: true, PromptTokens: 100, CompletionTokens: 10, Timestamp: at(10, 15, 0)},
		{CompanyName: "Beta Labs", AnalysisType: patent.AnalysisPortfolio, Model: "openai/gpt-4o-mini", PromptTokens: 90, CompletionTokens: 9, Timestamp: at(11, 20, 12)},
		{CompanyName: "Old Co", AnalysisType: patent.AnalysisPortfolio, Model: "openai/gpt-4o-mini", PromptTokens: 1, CompletionTokens: 1, Timestamp: at(8, 1, 0)},
	} {
		if _, err := s.Analyses().CreateAnalysis(ctx, r); err != nil {
			t.Fatalf("analysis %d: %v", i, err)
		}
	}
}

func TestAnalyticsSameOnBothDialects(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	since := time.Date(2026, 8, 15, 0, 0, 0, 0, time.UTC)
	type result struct {
		ByCompany, ByType []patent.MonthCount
		Usage             patent.Usage
	}
	var results []result
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			s := storetest.Open(t, d, func() time.Time { return now })
			seedAnalytics(t, s)
			byCompany, byType, err := s.Analyses().Trends(ctx, since)
			if err != nil {
				t.Fatal(err)
			}
			u, err := s.Analyses().UsageSince(ctx, since)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, result{byCompany, byType, u})

			want := []patent.MonthCount{
				{Month: "2026-09", Key: "Acme Corp", Count: 2},
				{Month: "2026-10", Key: "Acme Corp", Count: 1}, {Month: "2026-10", Key: "Beta Labs", Count: 1},
				{Month: "2026-11", Key: "Beta Labs", Count: 1},
			}
			if !reflect.DeepEqual(byCompany, want) {
				t.Errorf("by company = %v, want %v", byCompany, want)
			}
			wantType := []patent.MonthCount{
				{Month: "2026-09", Key: "portfolio", Count: 1}, {Month: "2026-09", Key: "single_patent", Count: 1},
				{Month: "2026-10", Key: "portfolio", Count: 2},
				{Month: "2026-11", Key: "portfolio", Count: 1},
			}
			if !reflect.DeepEqual(byType, wantType) {
				t.Errorf("by type = %v, want %v", byType, wantType)
			}
			if u.Total != 5 || u.Cached != 1 || u.PromptTokens != 390 || u.CompletionTokens != 39 ||
				u.ByType["portfolio"] != 4 || u.ByType["single_patent"] != 1 ||
				u.ByModel["openai/gpt-4o-mini"] != 3 || u.ByModel["mistralai/mistral-nemo"] != 2 ||
				fmt.Sprint(u.TopCompanies) != fmt.Sprint([]patent.MonthCount{{Key: "Acme Corp", Count: 3}, {Key: "Beta Labs", Count: 2}}) {
				t.Errorf("usage = %+v", u)
			}
		})
	}
	if len(results) == 2 && !reflect.DeepEqual(results[0], results[1]) {
		t.Errorf("dialects disagree:\nsqlite   %+v\npostgres %+v", results[0], results[1])
	}
}

func TestEachAnalysis(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		for i := range 5 {
			s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Acme Corp", AnalysisType: patent.AnalysisPortfolio, Response: fmt.Sprint(i)})
		}
		s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "ACME CORP", AnalysisType: patent.AnalysisPortfolio, Response: "upper"})
		s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Acme Corp", AnalysisType: patent.AnalysisPortfolio, Response: "cached", Cached: true})
		s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio, Response: "other"})
		var got []string
		if err := s.Analyses().EachAnalysis(ctx, "acme corp", func(r patent.AnalysisRecord) error { got = append(got, r.Response); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != "[upper 4 3 2 1 0]" {
			t.Errorf("EachAnalysis = %v, want newest first, case-insensitive, cached and other companies left out", got)
		}
		stop := fmt.Errorf("stop")
		n := 0
		if err := s.Analyses().EachAnalysis(ctx, "Acme Corp", func(patent.AnalysisRecord) error { n++; return stop }); err != stop || n != 1 {
			t.Errorf("stopping: err %v after %d rows", err, n)
		}
		for name, want := range map[string]bool{"Acme Corp": true, "acme corp": true, "Acme": true, "Nobody": false} {
			if ok, err := s.Analyses().HasAnalyses(ctx, name); err != nil || ok != want {
				t.Errorf("HasAnalyses(%q) = %v, %v", name, ok, err)
			}
		}
	})
}
