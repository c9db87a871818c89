package httpapi

import (
	"net/http"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/labstack/echo/v4"
)

// daysParam reads days within [lo, hi], def when absent (422 otherwise).
func daysParam(c echo.Context, lo, hi, def int64) (int, error) {
	v := c.QueryParam("days")
	if v == "" {
		return int(def), nil
	}
	n, err := intParam("days", v, lo, hi)
	return int(n), err
}

type monthCompanyJSON struct {
	Month       string `json:"month"`
	CompanyName string `json:"company_name"`
	Count       int64  `json:"count"`
}

type monthTypeJSON struct {
	Month        string `json:"month"`
	AnalysisType string `json:"analysis_type"`
	Count        int64  `json:"count"`
}

// handleTrends serves GET /analytics/trends?days= (7 to 365, default 90):
// non-cached analyses per calendar month (UTC), by company and by type.
func handleTrends(rep Reports) echo.HandlerFunc {
	return func(c echo.Context) error {
		days, err := daysParam(c, 7, 365, 90)
		if err != nil {
			return err
		}
		byCompany, byType, err := rep.Trends(c.Request().Context(), days)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, struct {
			ByMonth        []monthCompanyJSON `json:"by_month"`
			ByTypeOverTime []monthTypeJSON    `json:"by_type_over_time"`
			PeriodDays     int                `json:"period_days"`
		}{
			ByMonth: mapSlice(byCompany, func(m patent.MonthCount) monthCompanyJSON {
				return monthCompanyJSON{Month: m.Month, CompanyName: m.Key, Count: m.Count}
			}),
			ByTypeOverTime: mapSlice(byType, func(m patent.MonthCount) monthTypeJSON {
				return monthTypeJSON{Month: m.Month, AnalysisType: m.Key, Count: m.Count}
			}),
			PeriodDays: days,
		})
	}
}

type companyCountJSON struct {
	CompanyName string `json:"company_name"`
	Count       int64  `json:"count"`
}

type tokensUsedJSON struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
}

// handleSummary serves GET /analytics/summary?days= (1 to 365, default 30).
func handleSummary(rep Reports) echo.HandlerFunc {
	return func(c echo.Context) error {
		days, err := daysParam(c, 1, 365, 30)
		if err != nil {
			return err
		}
		u, err := rep.Usage(c.Request().Context(), days)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, struct {
			PeriodDays     int                `json:"period_days"`
			TotalAnalyses  int64              `json:"total_analyses"`
			CachedAnalyses int64              `json:"cached_analyses"`
			ByType         map[string]int64   `json:"by_type"`
			ByModel        map[string]int64   `json:"by_model"`
			TopCompanies   []companyCountJSON `json:"top_companies"`
			Tokens         tokensUsedJSON     `json:"tokens"`
		}{
			PeriodDays: days, TotalAnalyses: u.Total, CachedAnalyses: u.Cached, ByType: u.ByType, ByModel: u.ByModel,
			TopCompanies: mapSlice(u.TopCompanies, func(m patent.MonthCount) companyCountJSON {
				return companyCountJSON{CompanyName: m.Key, Count: m.Count}
			}),
			Tokens: tokensUsedJSON{Prompt: u.PromptTokens, Completion: u.CompletionTokens},
		})
	}
}
