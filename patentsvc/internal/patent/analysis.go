package patent

import (
	"strconv"
	"time"
)

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
	// Read is true when the patent's PDF was read for the analysis; when
	// it was not, Error says why ("document not read: more than 500
	// pages"), and the analysis used the search's snippet instead.
	Read  bool
	Error *string
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
	Searched bool
	// Publications are every patent the search returned
	// (SearchResult.Publications), compared by tracked companies' runs;
	// not part of the response, nor of a job's stored result.
	Publications []Publication `json:"-"`
	// Portfolio is the search answer's portfolio facts; nil when it held
	// none, or the search failed.
	Portfolio *Portfolio
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
	// RequestedBy is the id (as text) of the user whose request stored
	// the analysis, "" when none did (scheduled runs). Analyses are shared
	// whoever asked: it records, it does not restrict (decisions.md).
	RequestedBy string
	// Portfolio and Patents are a portfolio analysis's facts and the
	// patents it analysed (nil for single-patent analyses, and for those
	// stored before they were kept).
	Portfolio *Portfolio
	Patents   []PatentRef
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

// Job is an asynchronous batch. It belongs to the user who submitted it.
type Job struct {
	ID string
	// UserID is the submitter; 0 for jobs stored before jobs had owners.
	// It outlives the user's deletion (user ids are never reused).
	UserID     int64
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
	// StartedAt is when a worker took the job up (nil while pending).
	StartedAt *time.Time
	// UnitID is the work queue's unit the job runs under (JobStart.UnitID),
	// 0 while pending.
	UnitID int64
	// TraceParent is the W3C traceparent of the request that submitted
	// the job, "" when that request was not traced; the job's run links
	// its root span to it (decisions.md, "Tracing (issue 13)").
	TraceParent string
}

// VisibleTo reports whether u may see the job: admins see every job, a
// user only their own. A job another user cannot see is, to them, a job
// that does not exist (404, never 403: decisions.md).
func (j Job) VisibleTo(u User) bool {
	return u.Role == RoleAdmin || (j.UserID != 0 && j.UserID == u.ID)
}

// JobFilter selects the jobs a listing returns.
type JobFilter struct {
	// Status is one of the job statuses, or "" for all.
	Status string
	// UserID keeps only this user's jobs; 0 keeps every user's.
	UserID int64
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
	// PDFVerdict is why the stored PDF is not read (it broke one of the
	// limits on reading a document: "document not read: more than 500
	// pages"), under PDFLimits, the limits it was read with; "" when it
	// was read, or not yet. Under the same limits the PDF is not read
	// again (decisions.md).
	PDFVerdict string
	PDFLimits  string
}

// AnalyzeOptions change one analysis.
type AnalyzeOptions struct {
	// Model is an allowed model id, or empty for the default.
	Model string
	// Fresh bypasses the search and LLM caches (scheduled runs); answers
	// are still stored.
	Fresh bool
	// RequestedBy is recorded in the stored analysis
	// (AnalysisRecord.RequestedBy): RequesterID of the user asking, ""
	// for scheduled runs.
	RequestedBy string
}

// RequesterID is a user id as AnalysisRecord.RequestedBy records it: the
// decimal id, or "" for 0 (no user).
func RequesterID(userID int64) string {
	if userID == 0 {
		return ""
	}
	return strconv.FormatInt(userID, 10)
}

// PatentAnalysis is the outcome of analysing one patent.
type PatentAnalysis struct {
	PatentID    string
	CompanyName string
	Analysis    string
	Model       string
	Cached      bool
}
