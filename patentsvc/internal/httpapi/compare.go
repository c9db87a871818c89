package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/export"
	"github.com/gatewayapis/patentsvc/internal/patent"
)

// comparisonJSON is GET /compare's body (decisions.md, "patentsvc: how
// portfolios compare").
type comparisonJSON struct {
	Companies   []comparedJSON    `json:"companies"`
	Pairs       []pairJSON        `json:"pairs"`
	Distinctive []distinctiveJSON `json:"distinctive"`
	Timestamp   time.Time         `json:"timestamp"`
}

type comparedJSON struct {
	CompanyName  string             `json:"company_name"`
	AnalysedAt   time.Time          `json:"analysed_at"`
	PatentCount  int                `json:"patent_count"`
	Granted      int                `json:"granted"`
	Applications int                `json:"applications"`
	CPC          []cpcShareJSON     `json:"cpc"`
	ByYear       []yearCountJSON    `json:"by_year"`
	Countries    []countryCountJSON `json:"countries"`
}

type pairJSON struct {
	A          string           `json:"a"`
	B          string           `json:"b"`
	Similarity float64          `json:"similarity"`
	Shared     []sharedCodeJSON `json:"shared"`
}

type sharedCodeJSON struct {
	Code   string  `json:"code"`
	ShareA float64 `json:"share_a"`
	ShareB float64 `json:"share_b"`
}

type distinctiveJSON struct {
	CompanyName string         `json:"company_name"`
	Codes       []cpcShareJSON `json:"codes"`
}

func fromComparison(c patent.Comparison) comparisonJSON {
	return comparisonJSON{
		Companies: mapSlice(c.Companies, func(x patent.ComparedCompany) comparedJSON {
			p := fromPortfolio(&x.Portfolio)
			return comparedJSON{CompanyName: x.Name, AnalysedAt: x.AnalysedAt, PatentCount: x.PatentCount,
				Granted: p.Granted, Applications: p.Applications, CPC: p.CPC, ByYear: p.ByYear, Countries: p.Countries}
		}),
		Pairs: mapSlice(c.Pairs, func(p patent.ComparedPair) pairJSON {
			return pairJSON{A: p.A, B: p.B, Similarity: p.Similarity,
				Shared: mapSlice(p.Shared, func(s patent.SharedCode) sharedCodeJSON { return sharedCodeJSON(s) })}
		}),
		Distinctive: mapSlice(c.Distinctive, func(d patent.DistinctiveCodes) distinctiveJSON {
			return distinctiveJSON{CompanyName: d.Company, Codes: mapSlice(d.Codes, func(s patent.CPCShare) cpcShareJSON { return cpcShareJSON(s) })}
		}),
		Timestamp: c.Generated,
	}
}

// comparison reads the company parameters (2 to 5, 422 otherwise) and
// compares them (404 for the first without stored portfolio facts).
func comparison(c echo.Context, rep Reports) (patent.Comparison, error) {
	names, err := patent.ParseCompared(c.QueryParams()["company"])
	if err != nil {
		return patent.Comparison{}, invalid("company", err)
	}
	out, err := rep.Compare(c.Request().Context(), names)
	if err != nil {
		return patent.Comparison{}, notFound(err)
	}
	return out, nil
}

// handleCompare serves GET /compare?company=...&company=...: stored facts
// only, no search and no model call.
func handleCompare(rep Reports) echo.HandlerFunc {
	return func(c echo.Context) error {
		out, err := comparison(c, rep)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, fromComparison(out))
	}
}

// handleComparePDF serves GET /compare/pdf: the same comparison as a PDF
// report, rendered whole before anything is sent.
func handleComparePDF(rep Reports, opts export.PDFOptions) echo.HandlerFunc {
	return func(c echo.Context) error {
		out, err := comparison(c, rep)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := export.ComparisonPDF(&buf, opts, out); err != nil {
			return fmt.Errorf("render comparison pdf: %w", err)
		}
		attachment(c, "application/pdf", export.ComparisonFilename(out))
		return c.Blob(http.StatusOK, "application/pdf", buf.Bytes())
	}
}
