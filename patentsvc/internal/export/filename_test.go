package export_test

import (
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/export"
)

func TestFilenames(t *testing.T) {
	// 23:30 in New York is already the next day in UTC.
	ny := time.FixedZone("EST", -5*3600)
	at := time.Date(2025, 1, 31, 23, 30, 0, 0, ny)
	for _, tt := range []struct {
		name, company, csv, pdf string
	}{
		{"spec example", "Acme Corp", "acme_corp_export.csv", "acme_corp-analysis-2025-02-01.pdf"},
		{"one word", "Tesla", "tesla_export.csv", "tesla-analysis-2025-02-01.pdf"},
		{"ampersand and period kept", "AT&T Inc.", "at&t_inc._export.csv", "at&t_inc.-analysis-2025-02-01.pdf"},
		{"hyphen and digits kept", "3M-Health Care", "3m-health_care_export.csv", "3m-health_care-analysis-2025-02-01.pdf"},
		{"every space replaced", "A  B", "a__b_export.csv", "a__b-analysis-2025-02-01.pdf"},
		{"unsafe characters replaced", "Evil\"/Co\r\nX", "evil__co__x_export.csv", "evil__co__x-analysis-2025-02-01.pdf"},
		{"non-ASCII replaced", "Zürich AG", "z_rich_ag_export.csv", "z_rich_ag-analysis-2025-02-01.pdf"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := export.CSVFilename(tt.company); got != tt.csv {
				t.Errorf("CSVFilename(%q) = %q, want %q", tt.company, got, tt.csv)
			}
			if got := export.PDFFilename(tt.company, at); got != tt.pdf {
				t.Errorf("PDFFilename(%q, %v) = %q, want %q", tt.company, at, got, tt.pdf)
			}
		})
	}
}
