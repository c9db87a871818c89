package patent

import "time"

// TrackedCompany is a company re-analysed on a schedule.
type TrackedCompany struct {
	ID              int64
	CompanyName     string
	LastPatentCount int
	LastAnalysisAt  *time.Time // nil until the first analysis
	CreatedAt       time.Time
}

// AlertTypePatentCountChange is the one alert type produced.
const AlertTypePatentCountChange = "patent_count_change"

// Alert records a large change in a tracked company's patent count.
type Alert struct {
	ID          int64
	CompanyName string
	AlertType   string
	Message     string
	OldValue    float64
	NewValue    float64
	CreatedAt   time.Time
}
