package patent

import (
	"fmt"
	"math"
	"time"
)

// TrackedCompany is a company re-analysed on a schedule.
type TrackedCompany struct {
	ID              int64
	CompanyName     string
	LastPatentCount int
	LastAnalysisAt  *time.Time // nil until the first analysis
	NextRunAt       time.Time
	CreatedAt       time.Time
	// ConsecutiveFailures counts the scheduled runs that failed in a row
	// since the last one that succeeded; the retry waits grow with it.
	ConsecutiveFailures int
}

// AlreadyTrackedError is the error of tracking a company that is tracked
// already, under the same name in any letter case; Tracked is that
// company's current state. It matches ErrConflict under errors.Is.
type AlreadyTrackedError struct {
	Tracked TrackedCompany
}

func (e *AlreadyTrackedError) Error() string {
	return fmt.Sprintf("tracked company %s: %v", e.Tracked.CompanyName, ErrConflict)
}

// Unwrap makes the error a kind of ErrConflict.
func (e *AlreadyTrackedError) Unwrap() error { return ErrConflict }

// AlertTypePatentCountChange is the alert of a large change in a tracked
// company's patent count (AlertTypeNewPatents is the other type).
const AlertTypePatentCountChange = "patent_count_change"

// Alert records a large change in a tracked company's patent count, or
// the new patents a scheduled run found.
type Alert struct {
	ID          int64
	CompanyName string
	AlertType   string
	Message     string
	OldValue    float64
	NewValue    float64
	CreatedAt   time.Time
	// Patents are a new_patents alert's new patents (at most
	// MaxAlertPatents); empty for other types.
	Patents []Publication
}

// CountChangeAlert applies the alert rule to a tracked company's patent
// count moving from old to new: an alert only when old is greater than 0
// and the change is at least threshold percent of old. The message says
// whether the count increased or decreased, by how much (one decimal) and
// both counts, e.g. "Patent count for Acme increased by 40.0% (from 10 to
// 14)".
func CountChangeAlert(company string, old, new int, threshold float64) (Alert, bool) {
	if old <= 0 || new == old {
		return Alert{}, false
	}
	change := float64(new-old) / float64(old) * 100
	abs := change
	if abs < 0 {
		abs = -abs
	}
	// Compare at the precision shown, so a message never reads "by 20.0%"
	// for a change that did not pass a 20% threshold.
	if math.Round(abs*10)/10 < threshold {
		return Alert{}, false
	}
	dir := "increased"
	if change < 0 {
		dir = "decreased"
	}
	return Alert{
		CompanyName: company,
		AlertType:   AlertTypePatentCountChange,
		Message:     fmt.Sprintf("Patent count for %s %s by %.1f%% (from %d to %d)", company, dir, abs, old, new),
		OldValue:    float64(old),
		NewValue:    float64(new),
	}, true
}

// TrackingRun is one scheduled run of a tracked company, as the company's
// history keeps it (decisions.md, "The analyst's report": tracking_runs).
type TrackingRun struct {
	RunAt time.Time
	// PatentCount is the search's recent-patent count; nil when the
	// search failed (the run has no count).
	PatentCount *int
	// Success is false for a failed run: its search failed, or its
	// analysis did after the search.
	Success bool
	// Alert tells whether the run raised an alert.
	Alert bool
	// NewPatents and DroppedPatents are the ids of the patents the run
	// found new, or no longer found (PatentChanges); empty for a run whose
	// search failed and for a company's first run (its baseline).
	NewPatents     []string
	DroppedPatents []string
}

// RunOutcome is what a scheduled run whose search answered records, in
// one transaction (the store's RecordRun).
type RunOutcome struct {
	// Count is the search's recent-patent count (TotalResults).
	Count int
	At    time.Time
	// Failures is the count of failed runs in a row ending with this one,
	// 0 when it succeeded; Next is when the company is due again.
	Failures int
	Next     time.Time
	// Seen are the publication numbers this run's search returned, kept
	// for the next runs' DiffPublications; Changes is what it found
	// changed (empty for the baseline run).
	Seen    []string
	Changes PatentChanges
	// Baseline: this run starts the company's record of what runs saw
	// (SeenPatents.Since is set to At).
	Baseline bool
	// Alerts are the alerts the run raised (none, or a patent_count_change
	// and a new_patents alert), stored with their webhook deliveries.
	Alerts []Alert
}

// SeenPatents is what a tracked company's earlier runs saw of the
// publication numbers a run asks about: since when runs keep them (nil:
// none yet, so this run may be the baseline), those of the numbers asked
// about that an earlier run saw (Known), and the numbers of the latest run
// whose search answered (Last).
type SeenPatents struct {
	// Company is the tracked company as it stands when they are read.
	Company TrackedCompany
	Since   *time.Time
	Known   map[string]bool
	Last    []string
}
