package patent

import "time"

// ReportMaxAnalyses is the most analyses one PDF report renders (the
// newest); its summary still counts them all. The CSV export has no
// limit.
const ReportMaxAnalyses = 1000

// ReportChartMonths is the period of the PDF report's charts: the last
// twelve whole months and the current one.
const ReportChartMonths = 12

// Report is a company's PDF report as the reports core composes it: the
// summary over all its analyses and the newest ReportMaxAnalyses of them,
// newest first, as of Generated.
type Report struct {
	Company   string
	Generated time.Time
	Summary   ReportSummary
	Analyses  []AnalysisRecord
}

// ReportSummary is what a company's PDF report shows besides the
// analyses: its portfolio facts, its tracking and the summary of its
// analyses, computed over all of them (the report renders at most
// ReportMaxAnalyses).
type ReportSummary struct {
	// Total is the number of analyses ("Total Analyses").
	Total int
	// Types are the distinct analysis types, sorted ("Analysis Types").
	Types []string
	// Models are the distinct models, sorted ("Models Used").
	Models []string
	// Tracked tells whether the company is tracked, which alone gives the
	// report its tracking part; Runs are its scheduled runs over the
	// chart's period, oldest first (the patent count chart, alerts
	// marked).
	Tracked bool
	Runs    []TrackingRun
	// Months are the company's analyses per month over the chart's period,
	// oldest first (the analyses chart).
	Months []MonthCount
	// Portfolio and Patents are the portfolio facts and the patents
	// analysed of the company's newest portfolio analysis that has them,
	// stored at PortfolioAt; nil, empty and zero when none has (the report
	// then says so in one line). The report lists at most MaxReportPatents
	// of the patents.
	Portfolio   *Portfolio
	Patents     []PatentRef
	PortfolioAt time.Time
}
