package patent

import "time"

// Analysis types (decisions.md, "Analysis storage").
const (
	AnalysisPortfolio    = "portfolio"
	AnalysisSinglePatent = "single_patent"
)

// NoPatentsError is the in-band error of a company without a recent patent
// that has a PDF (decisions.md).
const NoPatentsError = "no recent patents with a PDF found"

// PatentRef is a patent as an analysis lists it.
type PatentRef struct {
	PatentID        string
	Title           string
	PublicationDate string
	PDFLink         string
}

// CompanyAnalysis is the outcome of analysing one company. Failures are
// in-band: Success false with Error set.
type CompanyAnalysis struct {
	CompanyName string
	Analysis    *string
	PatentCount int
	// TotalResults is the search's count of recent patents (all of them,
	// with or without a PDF): the count tracked companies compare. It is
	// meaningful only when Searched is true.
	TotalResults int
	// Searched is true when the search answered (even if the analysis
	// failed later).
	Searched  bool
	Patents   []PatentRef
	Success   bool
	Error     *string
	Model     *string
	Cached    bool
	Timestamp time.Time
}

// BatchSummary sums up a batch.
type BatchSummary struct {
	Total           int
	Successful      int
	Failed          int
	TotalPatents    int
	DurationSeconds float64
}

// BatchResult is the outcome of a batch, synchronous or as a job.
type BatchResult struct {
	Timestamp time.Time
	Results   []CompanyAnalysis
	Summary   BatchSummary
	Model     string
}

// AnalysisRecord is a stored analysis.
type AnalysisRecord struct {
	ID               int64
	CompanyName      string
	AnalysisType     string
	PatentID         string
	Model            string
	Response         string
	Cached           bool
	PromptTokens     int
	CompletionTokens int
	Timestamp        time.Time
}

// Job statuses.
const (
	JobPending   = "pending"
	JobRunning   = "running"
	JobCompleted = "completed"
	JobFailed    = "failed"
)

// ParseJobStatus accepts the four statuses.
func ParseJobStatus(s string) (string, error) {
	switch s {
	case JobPending, JobRunning, JobCompleted, JobFailed:
		return s, nil
	}
	return "", Invalidf("status must be pending, running, completed or failed")
}

// Job is an asynchronous batch.
type Job struct {
	ID         string
	Status     string
	Total      int
	Completed  int
	Companies  []string
	MaxWorkers int
	Model      string
	Result     *BatchResult
	Error      *string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Progress is the share of companies done, 0 to 1.
func (j Job) Progress() float64 {
	if j.Total == 0 {
		return 0
	}
	return float64(j.Completed) / float64(j.Total)
}

// StoredPatent is what the database keeps of a patent.
type StoredPatent struct {
	PatentID        string
	CompanyName     string
	Title           string
	PublicationDate string
	PDFLink         string
	Summary         string
	PDFPath         string
}

// AnalyzeOptions change one analysis.
type AnalyzeOptions struct {
	// Model is an allowed model id, or empty for the default.
	Model string
	// Fresh bypasses the search and LLM caches (scheduled runs); answers
	// are still stored.
	Fresh bool
}

// PatentAnalysis is the outcome of analysing one patent.
type PatentAnalysis struct {
	PatentID    string
	CompanyName string
	Analysis    string
	Model       string
	Cached      bool
}
