package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/httperr"
)

// PDFExportMax is the most analyses one PDF export renders (the newest);
// the summary table still counts them all. The CSV export has no limit.
const PDFExportMax = 1000

// Exporter reads a company's analyses; *store.Store implements it.
type Exporter interface {
	HasAnalyses(ctx context.Context, company string) (bool, error)
	EachAnalysis(ctx context.Context, company string, fn func(patent.AnalysisRecord) error) error
}

// PDFExporter is what the PDF report needs of the store besides the
// analyses: the series of its charts.
type PDFExporter interface {
	Exporter
	// TrackingHistory returns the tracked company and its runs since
	// since, oldest first; patent.ErrNotFound when it is not tracked.
	TrackingHistory(ctx context.Context, name patent.CompanyName, since time.Time) (patent.TrackedCompany, []patent.TrackingRun, error)
	// AnalysesPerMonth counts the company's analyses per month since since.
	AnalysesPerMonth(ctx context.Context, company string, since time.Time) ([]patent.MonthCount, error)
}

// ChartMonths is the period of the PDF report's charts: the last twelve
// months and the current one.
const ChartMonths = 12

// exportCompany validates the path name and answers 404 when the company
// has no stored analysis.
func exportCompany(c echo.Context, ex Exporter) (patent.CompanyName, error) {
	name, err := companyParam(c)
	if err != nil {
		return "", err
	}
	ok, err := ex.HasAnalyses(c.Request().Context(), name.String())
	if err != nil {
		return "", err
	}
	if !ok {
		return "", httperr.New(http.StatusNotFound, fmt.Sprintf("No analysis results found for %s", name))
	}
	return name, nil
}

func attachment(c echo.Context, contentType, filename string) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, contentType)
	h.Set(echo.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	h.Set(echo.HeaderCacheControl, "no-store")
}

// handleExportCSV serves GET /export/{company_name}: every stored
// non-cached analysis, newest first, streamed row by row.
func handleExportCSV(ex Exporter, logger *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		name, err := exportCompany(c, ex)
		if err != nil {
			return err
		}
		attachment(c, "text/csv; charset=utf-8", export.CSVFilename(name.String()))
		c.Response().WriteHeader(http.StatusOK)
		ctx := c.Request().Context()
		n, err := export.CSV(c.Response(), func(yield func(patent.AnalysisRecord) error) error {
			return ex.EachAnalysis(ctx, name.String(), yield)
		})
		if err != nil {
			// The status is sent: all that is left is to cut the body short
			// (the client sees a truncated download) and log why.
			logger.WarnContext(ctx, "csv export cut short", "company", name.String(), "rows", n, "err", err.Error())
		}
		return nil
	}
}

// handleExportPDF serves GET /export/{company_name}/pdf.
func handleExportPDF(ex PDFExporter, opts export.PDFOptions, logger *slog.Logger, now func() time.Time) echo.HandlerFunc {
	return func(c echo.Context) error {
		name, err := exportCompany(c, ex)
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		var (
			records []patent.AnalysisRecord
			summary export.PDFSummary
			types   = map[string]bool{}
			models  = map[string]bool{}
			facts   bool // summary has the portfolio facts
		)
		err = ex.EachAnalysis(ctx, name.String(), func(r patent.AnalysisRecord) error {
			summary.Total++
			types[r.AnalysisType] = true
			if r.Model != "" {
				models[r.Model] = true
			}
			if len(records) < PDFExportMax {
				records = append(records, r)
			}
			// The report opens with the portfolio facts of the newest
			// portfolio analysis that kept them (analyses come newest
			// first; those stored before the facts were kept have none).
			if !facts && r.AnalysisType == patent.AnalysisPortfolio && (r.Portfolio != nil || len(r.Patents) > 0) {
				summary.Portfolio, summary.Patents, summary.PortfolioAt = r.Portfolio, r.Patents, r.Timestamp
				facts = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		summary.Types, summary.Models = sortedKeys(types), sortedKeys(models)
		generated := now().UTC()
		if err := chartSeries(ctx, ex, name, generated, &summary); err != nil {
			return err
		}
		// Rendered whole before anything is sent, so a failure is still a
		// proper error response.
		var buf bytes.Buffer
		if err := export.PDFWithOptions(&buf, opts, name.String(), generated, summary, records, logger); err != nil {
			return fmt.Errorf("render pdf export: %w", err)
		}
		attachment(c, "application/pdf", export.PDFFilename(name.String(), generated))
		return c.Blob(http.StatusOK, "application/pdf", buf.Bytes())
	}
}

// chartSeries reads the PDF report's chart series, over the ChartMonths
// months before generated and the current one, into summary.
func chartSeries(ctx context.Context, ex PDFExporter, name patent.CompanyName, generated time.Time, summary *export.PDFSummary) error {
	start := time.Date(generated.Year(), generated.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -ChartMonths, 0)
	_, runs, err := ex.TrackingHistory(ctx, name, start)
	switch {
	case errors.Is(err, patent.ErrNotFound): // not tracked: no tracking chart
	case err != nil:
		return err
	default:
		summary.Tracked, summary.Runs = true, runs
	}
	summary.Months, err = ex.AnalysesPerMonth(ctx, name.String(), start)
	return err
}
