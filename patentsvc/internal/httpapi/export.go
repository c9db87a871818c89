package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/httperr"
)

// Reports tells about stored analyses; *reports.Service implements it.
type Reports interface {
	// Exportable is nil when the company has an analysis to export, and a
	// kind of patent.ErrNotFound saying so when it has none.
	Exportable(ctx context.Context, name patent.CompanyName) error
	EachAnalysis(ctx context.Context, name patent.CompanyName, fn func(patent.AnalysisRecord) error) error
	// Report composes the company's PDF report (patent.ErrNotFound as
	// Exportable).
	Report(ctx context.Context, name patent.CompanyName) (patent.Report, error)
	Trends(ctx context.Context, days int) (byCompany, byType []patent.MonthCount, err error)
	Usage(ctx context.Context, days int) (patent.Usage, error)
	// Compare compares the companies' latest stored portfolio facts (a
	// kind of patent.ErrNotFound naming the first company without them).
	Compare(ctx context.Context, names []patent.CompanyName) (patent.Comparison, error)
}

// exportCompany reads the company_name parameter; a company without
// analyses is a 404 saying so.
func exportCompany(c echo.Context, rep Reports) (patent.CompanyName, error) {
	name, err := companyParam(c)
	if err != nil {
		return "", err
	}
	if err := rep.Exportable(c.Request().Context(), name); err != nil {
		return "", notFound(err)
	}
	return name, nil
}

// notFound answers a kind of patent.ErrNotFound with its own text (the
// core's message for the client), 404.
func notFound(err error) error {
	if errors.Is(err, patent.ErrNotFound) {
		return httperr.Wrap(err, http.StatusNotFound, err.Error())
	}
	return err
}

func attachment(c echo.Context, contentType, filename string) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, contentType)
	h.Set(echo.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	h.Set(echo.HeaderCacheControl, "no-store")
}

// handleExportCSV serves GET /export/{company_name}: every stored
// non-cached analysis, newest first, streamed row by row.
func handleExportCSV(rep Reports, logger *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		name, err := exportCompany(c, rep)
		if err != nil {
			return err
		}
		attachment(c, "text/csv; charset=utf-8", export.CSVFilename(name.String()))
		c.Response().WriteHeader(http.StatusOK)
		ctx := c.Request().Context()
		n, err := export.CSV(c.Response(), func(yield func(patent.AnalysisRecord) error) error {
			return rep.EachAnalysis(ctx, name, yield)
		})
		if err != nil {
			// The status is sent: all that is left is to cut the body short
			// (the client sees a truncated download) and log why.
			logger.WarnContext(ctx, "csv export cut short", "company", name.String(), "rows", n, "err", err.Error())
		}
		return nil
	}
}

// handleExportPDF serves GET /export/{company_name}/pdf: the report the
// reports core composes, rendered whole before anything is sent, so a
// failure is still a proper error response.
func handleExportPDF(rep Reports, opts export.PDFOptions, logger *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		name, err := companyParam(c)
		if err != nil {
			return err
		}
		r, err := rep.Report(c.Request().Context(), name)
		if err != nil {
			return notFound(err)
		}
		var buf bytes.Buffer
		if err := export.PDFWithOptions(&buf, opts, r.Company, r.Generated, r.Summary, r.Analyses, logger); err != nil {
			return fmt.Errorf("render pdf export: %w", err)
		}
		attachment(c, "application/pdf", export.PDFFilename(r.Company, r.Generated))
		return c.Blob(http.StatusOK, "application/pdf", buf.Bytes())
	}
}
