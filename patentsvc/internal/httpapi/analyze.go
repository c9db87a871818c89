package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/httperr"
)

// Batch limits (the spec's).
const (
	batchMaxCompanies = 20
	batchMaxWorkers   = 5
	batchDefWorkers   = 3
	pageLimitDefault  = 50
	pageLimitMax      = 200
)

// Analyses runs analyses and lists the stored ones; *analysis.Analyzer
// implements it. AnalyzeBatch's progress is analysis.Progress, an alias of
// the same interface literal.
type Analyses interface {
	AnalyzeCompany(ctx context.Context, name patent.CompanyName, opts patent.AnalyzeOptions) patent.CompanyAnalysis
	AnalyzePatent(ctx context.Context, id string, company patent.CompanyName, opts patent.AnalyzeOptions) (patent.PatentAnalysis, error)
	AnalyzeBatch(ctx context.Context, names []patent.CompanyName, workers int, opts patent.AnalyzeOptions, progress interface{ Done(completed int) }) patent.BatchResult
	// Analyses returns a page of the stored analyses (of one company when
	// company is not empty), newest first, and the next page's cursor.
	Analyses(ctx context.Context, company string, limit int, after string) ([]patent.AnalysisRecord, string, error)
}

// Jobs accepts asynchronous batches; *jobs.Runner implements it.
type Jobs interface {
	Submit(ctx context.Context, userID int64, companies []patent.CompanyName, workers int, model string) (patent.Job, error)
	// Job returns a job the viewer may see; another user's job is
	// patent.ErrNotFound, as an unknown id.
	Job(ctx context.Context, viewer patent.User, id string) (patent.Job, error)
	// Jobs lists the jobs the viewer may list (patent.ErrForbidden for
	// another user's, asked by a user).
	Jobs(ctx context.Context, viewer patent.User, f patent.JobFilter, limit int, after string) ([]patent.Job, string, error)
}

// requireAnalyzer answers 503 while the analyzer lacks its keys.
func requireAnalyzer(missing []string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if len(missing) == 0 {
			return next
		}
		return func(c echo.Context) error {
			return httperr.Newf(http.StatusServiceUnavailable, "Analyzer not initialised: %s not set", strings.Join(missing, " and "))
		}
	}
}

// modelParam resolves an optional model id (400 listing the supported ids
// when unknown).
func modelParam(requested, def string) (string, error) {
	m, err := patent.ResolveModel(requested, def)
	if err != nil {
		return "", httperr.Wrap(err, http.StatusBadRequest, err.Error())
	}
	return m, nil
}

// requestOptions are the options of an analysis the caller asked for: with
// model, and stored as requested by the caller (decisions.md).
func requestOptions(c echo.Context, model string) patent.AnalyzeOptions {
	return patent.AnalyzeOptions{Model: model, RequestedBy: patent.RequesterID(currentUser(c).ID)}
}

// handleAnalyzeCompany serves GET /analyze/{company_name}?model=.
func handleAnalyzeCompany(an Analyses, def string) echo.HandlerFunc {
	return func(c echo.Context) error {
		name, err := companyParam(c)
		if err != nil {
			return err
		}
		model, err := modelParam(c.QueryParam("model"), def)
		if err != nil {
			return err
		}
		res := an.AnalyzeCompany(c.Request().Context(), name, requestOptions(c, model))
		return c.JSON(http.StatusOK, fromCompanyAnalysis(res))
	}
}

// handleAnalyzePatent serves GET /analyze/patent/{patent_id}?company_name=.
func handleAnalyzePatent(an Analyses, def string) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := patent.ParsePatentID(c.Param("patent_id"))
		if err != nil {
			return invalid("patent_id", err)
		}
		raw := c.QueryParam("company_name")
		if raw == "" {
			return invalid("company_name", patent.Invalidf("company_name is required"))
		}
		company, err := patent.ParseCompanyName(raw)
		if err != nil {
			return invalid("company_name", err)
		}
		model, err := modelParam(c.QueryParam("model"), def)
		if err != nil {
			return err
		}
		res, err := an.AnalyzePatent(c.Request().Context(), id, company, requestOptions(c, model))
		switch {
		case errors.Is(err, patent.ErrPDFOverLimit): // its text: "document not read: more than 500 pages"
			return httperr.Wrap(err, http.StatusUnprocessableEntity, fmt.Sprintf("Patent PDF for %s: %s", id, err.Error()))
		case errors.Is(err, patent.ErrPDFNotFound):
			return httperr.Wrap(err, http.StatusNotFound, fmt.Sprintf("Patent PDF for %s not found or could not be downloaded", id))
		case errors.Is(err, patent.ErrPDFUnreadable):
			return httperr.Wrap(err, http.StatusUnprocessableEntity, fmt.Sprintf("Patent PDF for %s has no readable text (a scanned document%s)", id, notOCRed(err)))
		case err != nil:
			return err
		}
		return c.JSON(http.StatusOK, patentAnalysisJSON{PatentID: res.PatentID, CompanyName: res.CompanyName, Analysis: res.Analysis})
	}
}

// notOCRed returns "; " and why a scanned PDF was not read by OCR
// (decisions.md, PDF_OCR), or "" when err does not say.
func notOCRed(err error) string {
	var no *patent.NotOCRedError
	if errors.As(err, &no) && no.Reason != "" {
		return "; " + no.Reason
	}
	return ""
}

type batchRequest struct {
	Companies  []any  `json:"companies"`
	MaxWorkers *int   `json:"max_workers"`
	Model      string `json:"model"`
}

// parse validates a batch body: 1 to 20 valid company names, max_workers 1
// to 5 (default 3); every broken field is reported in one 422.
func (r batchRequest) parse(def string) ([]patent.CompanyName, int, string, error) {
	var fields []httperr.FieldError
	if len(r.Companies) < 1 || len(r.Companies) > batchMaxCompanies {
		fields = append(fields, httperr.FieldError{Field: "companies", Message: fmt.Sprintf("companies must hold 1 to %d company names", batchMaxCompanies)})
	}
	names := make([]patent.CompanyName, 0, len(r.Companies))
	for i, v := range r.Companies {
		s, ok := v.(string)
		if !ok {
			fields = append(fields, httperr.FieldError{Field: fmt.Sprintf("companies[%d]", i), Message: "must be a string"})
			continue
		}
		n, err := patent.ParseCompanyName(s)
		if err != nil {
			fields = append(fields, httperr.FieldError{Field: fmt.Sprintf("companies[%d]", i), Message: err.Error()})
			continue
		}
		names = append(names, n)
	}
	workers := batchDefWorkers
	if r.MaxWorkers != nil {
		workers = *r.MaxWorkers
		if workers < 1 || workers > batchMaxWorkers {
			fields = append(fields, httperr.FieldError{Field: "max_workers", Message: fmt.Sprintf("max_workers must be 1 to %d", batchMaxWorkers)})
		}
	}
	if len(fields) > 0 {
		return nil, 0, "", httperr.New(http.StatusUnprocessableEntity, fields[0].Message).WithFields(fields...)
	}
	model, err := modelParam(r.Model, def)
	if err != nil {
		return nil, 0, "", err
	}
	return names, workers, model, nil
}

// bindBatch reads and checks the body of both batch endpoints.
func bindBatch(c echo.Context, def string) (names []patent.CompanyName, workers int, model string, err error) {
	var req batchRequest
	if err := decodeJSON(c, &req); err != nil {
		return nil, 0, "", err
	}
	return req.parse(def)
}

// handleBatch serves POST /analyze/batch: the companies analysed on a
// bounded worker pool, each failure in its own result.
func handleBatch(an Analyses, def string) echo.HandlerFunc {
	return func(c echo.Context) error {
		names, workers, model, err := bindBatch(c, def)
		if err != nil {
			return err
		}
		res := an.AnalyzeBatch(c.Request().Context(), names, workers, requestOptions(c, model), nil)
		return c.JSON(http.StatusOK, fromBatch(res))
	}
}

// handleBatchAsync serves POST /analyze/batch/async: 202 with the pending
// job.
func handleBatchAsync(jobs Jobs, def string) echo.HandlerFunc {
	return func(c echo.Context) error {
		names, workers, model, err := bindBatch(c, def)
		if err != nil {
			return err
		}
		j, err := jobs.Submit(c.Request().Context(), currentUser(c).ID, names, workers, model)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, fromJob(j))
	}
}

// pageParams reads limit (1 to 200, default 50) and cursor.
func pageParams(c echo.Context) (int, string, error) {
	limit := int64(pageLimitDefault)
	if v := c.QueryParam("limit"); v != "" {
		var err error
		if limit, err = intParam("limit", v, 1, pageLimitMax); err != nil {
			return 0, "", err
		}
	}
	return int(limit), c.QueryParam("cursor"), nil
}

// handleListAnalyses serves GET /analyze/batch: stored non-cached analyses,
// newest first, keyset-paged.
func handleListAnalyses(an Analyses) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit, cursor, err := pageParams(c)
		if err != nil {
			return err
		}
		items, next, err := an.Analyses(c.Request().Context(), c.QueryParam("company_name"), limit, cursor)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, pageJSON[analysisRecordJSON]{Items: mapSlice(items, fromAnalysisRecord), NextCursor: nullable(next)})
	}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
