package patent

// MonthCount is one row of a trend: analyses in a calendar month (UTC,
// "YYYY-MM") for a key (a company or an analysis type).
type MonthCount struct {
	Month string
	Key   string
	Count int64
}

// Usage is the analytics summary of a period.
type Usage struct {
	Total            int64
	Cached           int64
	ByType           map[string]int64
	ByModel          map[string]int64
	TopCompanies     []MonthCount // Month unused; Key is the company
	PromptTokens     int64
	CompletionTokens int64
}
