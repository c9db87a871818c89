package analysis_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// BenchmarkBatch20Workers5 runs a batch of 20 companies with max_workers=5
// against fakes that take 500 ms for every external call (the search, each
// PDF download, the model). Each company has two patents, one a whole
// 14-17 page document, so the time includes real PDF extraction. The
// figure of merit is the batch's wall time over the ideal
// ceil(20/5) x one company's time, both measured in the same run.
func BenchmarkBatch20Workers5(b *testing.B) {
	const (
		companies = 20
		workers   = 5
		latency   = 500 * time.Millisecond
	)
	for b.Loop() {
		st := storetest.Open(b, store.SQLite, time.Now)
		w := analysistest.NewWorld(b, st)
		w.Serp.SetLatency(latency)
		w.LLM.SetLatency(latency)
		w.PDFs.SetLatency(latency)
		var names []patent.CompanyName
		for i := range companies + 1 {
			name := fmt.Sprintf("Company %02d", i)
			w.Company(name, 2)
			names = append(names, patent.CompanyName(name))
		}
		an := w.Analyzer(nil)

		t0 := time.Now()
		if r := an.AnalyzeCompany(b.Context(), names[companies], patent.AnalyzeOptions{}); !r.Success {
			b.Fatalf("single company failed: %v", *r.Error)
		}
		single := time.Since(t0)

		t0 = time.Now()
		res := an.AnalyzeBatch(b.Context(), names[:companies], workers, patent.AnalyzeOptions{}, nil)
		wall := time.Since(t0)
		if res.Summary.Successful != companies {
			b.Fatalf("batch: %d of %d succeeded", res.Summary.Successful, companies)
		}
		ideal := time.Duration(math.Ceil(float64(companies)/workers)) * single
		b.ReportMetric(single.Seconds(), "company-s")
		b.ReportMetric(wall.Seconds(), "batch-s")
		b.ReportMetric(ideal.Seconds(), "ideal-s")
		b.ReportMetric(wall.Seconds()/ideal.Seconds(), "x-ideal")
	}
}
