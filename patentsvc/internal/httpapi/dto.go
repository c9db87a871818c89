package httpapi

import (
	"math"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type userJSON struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

func fromUser(u patent.User) userJSON {
	return userJSON{ID: u.ID, Email: u.Email, Role: string(u.Role), CreatedAt: u.CreatedAt}
}

type trackedJSON struct {
	ID              int64      `json:"id"`
	CompanyName     string     `json:"company_name"`
	LastPatentCount int        `json:"last_patent_count"`
	LastAnalysisAt  *time.Time `json:"last_analysis_at"`
	CreatedAt       time.Time  `json:"created_at"`
}

func fromTracked(t patent.TrackedCompany) trackedJSON {
	return trackedJSON{ID: t.ID, CompanyName: t.CompanyName, LastPatentCount: t.LastPatentCount,
		LastAnalysisAt: t.LastAnalysisAt, CreatedAt: t.CreatedAt}
}

type alertJSON struct {
	ID          int64             `json:"id"`
	CompanyName string            `json:"company_name"`
	AlertType   string            `json:"alert_type"`
	Message     string            `json:"message"`
	OldValue    float64           `json:"old_value"`
	NewValue    float64           `json:"new_value"`
	CreatedAt   time.Time         `json:"created_at"`
	Patents     []publicationJSON `json:"patents"`
}

func fromAlert(a patent.Alert) alertJSON {
	return alertJSON{ID: a.ID, CompanyName: a.CompanyName, AlertType: a.AlertType, Message: a.Message,
		OldValue: a.OldValue, NewValue: a.NewValue, CreatedAt: a.CreatedAt, Patents: mapSlice(a.Patents, fromPublication)}
}

// publicationJSON is NewPatent: a patent a search returned, as alerts and
// the changes digest list it.
type publicationJSON struct {
	PatentID        string `json:"patent_id"`
	Title           string `json:"title"`
	PublicationDate string `json:"publication_date"`
	PDFLink         string `json:"pdf_link"`
}

func fromPublication(p patent.Publication) publicationJSON { return publicationJSON(p) }

type cpcShareJSON struct {
	Code  string  `json:"code"`
	Share float64 `json:"share"`
}

type yearCountJSON struct {
	Year  int `json:"year"`
	Count int `json:"count"`
}

type countryCountJSON struct {
	Country  string `json:"country"`
	Active   int    `json:"active"`
	Inactive int    `json:"inactive"`
}

// portfolioJSON is Portfolio.
type portfolioJSON struct {
	CPC          []cpcShareJSON     `json:"cpc"`
	ByYear       []yearCountJSON    `json:"by_year"`
	Countries    []countryCountJSON `json:"countries"`
	Granted      int                `json:"granted"`
	Applications int                `json:"applications"`
}

// fromPortfolio is p on the wire; null for nil.
func fromPortfolio(p *patent.Portfolio) *portfolioJSON {
	if p == nil {
		return nil
	}
	return &portfolioJSON{
		CPC:       mapSlice(p.CPC, func(c patent.CPCShare) cpcShareJSON { return cpcShareJSON(c) }),
		ByYear:    mapSlice(p.ByYear, func(y patent.YearCount) yearCountJSON { return yearCountJSON(y) }),
		Countries: mapSlice(p.Countries, func(c patent.CountryCount) countryCountJSON { return countryCountJSON(c) }),
		Granted:   p.Granted, Applications: p.Applications,
	}
}

type messageJSON struct {
	Message string `json:"message"`
}

// mapSlice converts a slice of domain values to their wire form, never nil
// (an empty list is [] on the wire, not null).
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

type patentRefJSON struct {
	PatentID        string  `json:"patent_id"`
	Title           string  `json:"title"`
	PublicationDate string  `json:"publication_date"`
	PDFLink         string  `json:"pdf_link"`
	Read            bool    `json:"read"`
	Error           *string `json:"error"`
}

// companyAnalysisJSON is CompanyAnalysisResponse.
type companyAnalysisJSON struct {
	CompanyName string          `json:"company_name"`
	Analysis    *string         `json:"analysis"`
	PatentCount int             `json:"patent_count"`
	Patents     []patentRefJSON `json:"patents"`
	Success     bool            `json:"success"`
	Error       *string         `json:"error"`
	Model       *string         `json:"model"`
	Cached      bool            `json:"cached"`
	Timestamp   time.Time       `json:"timestamp"`
	// Portfolio: the search answer's facts; null when it had none.
	Portfolio *portfolioJSON `json:"portfolio"`
}

func fromCompanyAnalysis(a patent.CompanyAnalysis) companyAnalysisJSON {
	return companyAnalysisJSON{CompanyName: a.CompanyName, Analysis: a.Analysis, PatentCount: a.PatentCount,
		Patents: mapSlice(a.Patents, func(p patent.PatentRef) patentRefJSON {
			return patentRefJSON{PatentID: p.PatentID, Title: p.Title, PublicationDate: p.PublicationDate, PDFLink: p.PDFLink,
				Read: p.Read, Error: p.Error}
		}),
		Success: a.Success, Error: a.Error, Model: a.Model, Cached: a.Cached, Timestamp: a.Timestamp,
		Portfolio: fromPortfolio(a.Portfolio)}
}

type batchSummaryJSON struct {
	Total           int     `json:"total"`
	Successful      int     `json:"successful"`
	Failed          int     `json:"failed"`
	TotalPatents    int     `json:"total_patents"`
	DurationSeconds float64 `json:"duration_seconds"`
}

// batchJSON is BatchAnalysisResponse.
type batchJSON struct {
	Timestamp time.Time             `json:"timestamp"`
	Results   []companyAnalysisJSON `json:"results"`
	Summary   batchSummaryJSON      `json:"summary"`
	Model     string                `json:"model"`
}

func fromBatch(b patent.BatchResult) batchJSON {
	s := b.Summary
	return batchJSON{Timestamp: b.Timestamp, Results: mapSlice(b.Results, fromCompanyAnalysis), Model: b.Model,
		Summary: batchSummaryJSON{Total: s.Total, Successful: s.Successful, Failed: s.Failed, TotalPatents: s.TotalPatents,
			DurationSeconds: math.Round(s.DurationSeconds*1000) / 1000}}
}

// jobJSON is JobStatus.
type jobJSON struct {
	JobID     string     `json:"job_id"`
	Status    string     `json:"status"`
	Total     int        `json:"total"`
	Completed int        `json:"completed"`
	Progress  float64    `json:"progress"`
	Result    *batchJSON `json:"result"`
	Error     *string    `json:"error"`
	Model     string     `json:"model"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

func fromJob(j patent.Job) jobJSON {
	out := jobJSON{JobID: j.ID, Status: j.Status, Total: j.Total, Completed: j.Completed,
		Progress: math.Round(j.Progress()*10000) / 10000, Error: j.Error, Model: j.Model, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt}
	if j.Result != nil {
		b := fromBatch(*j.Result)
		out.Result = &b
	}
	return out
}

// analysisRecordJSON is AnalysisRecord.
type analysisRecordJSON struct {
	ID           int64     `json:"id"`
	CompanyName  *string   `json:"company_name"`
	AnalysisType *string   `json:"analysis_type"`
	Model        *string   `json:"model"`
	Response     *string   `json:"response"`
	Timestamp    time.Time `json:"timestamp"`
	// RequestedBy is the id of the user whose request stored it; null for
	// scheduled runs.
	RequestedBy *string `json:"requested_by"`
}

func fromAnalysisRecord(r patent.AnalysisRecord) analysisRecordJSON {
	return analysisRecordJSON{ID: r.ID, CompanyName: nullable(r.CompanyName), AnalysisType: nullable(r.AnalysisType),
		Model: nullable(r.Model), Response: nullable(r.Response), Timestamp: r.Timestamp, RequestedBy: nullable(r.RequestedBy)}
}

type patentAnalysisJSON struct {
	PatentID    string `json:"patent_id"`
	CompanyName string `json:"company_name"`
	Analysis    string `json:"analysis"`
}

// pageJSON is PaginatedAnalysisResponse / PaginatedJobsResponse.
type pageJSON[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}
