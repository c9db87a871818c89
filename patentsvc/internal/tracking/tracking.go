// Package tracking is the core of the tracked companies as admins see
// them: which companies are tracked, starting and stopping their tracking,
// their history, their alerts and the patents their runs found new or
// dropped. Package schedule runs the tracked companies' scheduled runs;
// this package queues a newly tracked company's first one.
//
// # Caveats
//
//   - A newly tracked company's first run is due at once and is queued in
//     the transaction that tracks it (decisions.md: the first run of a
//     newly tracked company at once), for whichever replica takes it up
//     first; its span links to the request's (the trace parent travels in
//     the run's unit).
//   - Names are compared in any letter case: tracking "acme corp" while
//     "Acme Corp" is tracked is a *patent.AlreadyTrackedError carrying the
//     company's current state.
package tracking

import (
	"context"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/observe"
)

// Store is the tracked companies, their runs and their alerts;
// store.Tracking implements it.
type Store interface {
	// ListTracked returns the tracked companies in the order they were
	// added.
	ListTracked(ctx context.Context) ([]patent.TrackedCompany, error)
	// CreateTracked starts tracking a company, due at first's DueAt, and
	// queues first, its first scheduled run, in the same transaction (the
	// store fills in the company's id and the run's reserved alert ids).
	// A company of the same name in any letter case is a
	// *patent.AlreadyTrackedError.
	CreateTracked(ctx context.Context, name patent.CompanyName, first patent.ScheduledRun) (patent.TrackedCompany, error)
	// DeleteTracked stops tracking a company and cancels its queued run;
	// patent.ErrNotFound when it is not tracked.
	DeleteTracked(ctx context.Context, name patent.CompanyName) error
	// TrackingHistory returns the tracked company and its runs since
	// since, oldest first; patent.ErrNotFound when it is not tracked.
	TrackingHistory(ctx context.Context, name patent.CompanyName, since time.Time) (patent.TrackedCompany, []patent.TrackingRun, error)
	// ListAlerts returns up to limit alerts, newest first.
	ListAlerts(ctx context.Context, limit int) ([]patent.Alert, error)
	// ListChanges returns a page of the runs since since that found new or
	// dropped patents, newest first, and the next page's cursor.
	ListChanges(ctx context.Context, since time.Time, limit int, after string) ([]patent.PatentChangeRun, string, error)
}

// Service is the tracking core. It is safe for concurrent use.
type Service struct {
	store Store
	now   func() time.Time
}

// New returns the tracking core over st.
func New(st Store, now func() time.Time) *Service {
	return &Service{store: st, now: now}
}

// Tracked returns the tracked companies in the order they were added.
func (s *Service) Tracked(ctx context.Context) ([]patent.TrackedCompany, error) {
	return s.store.ListTracked(ctx)
}

// Track starts tracking a company; its first run is due at once and
// queued with it. A company tracked already (in any letter case) is a
// *patent.AlreadyTrackedError, a kind of patent.ErrConflict.
func (s *Service) Track(ctx context.Context, name patent.CompanyName) (patent.TrackedCompany, error) {
	first := patent.ScheduledRun{DueAt: s.now().UTC(), CompanyName: name.String(), TraceParent: observe.TraceParent(ctx)}
	return s.store.CreateTracked(ctx, name, first)
}

// Untrack stops tracking a company and cancels its queued run (a run in
// progress records nothing); patent.ErrNotFound when it is not tracked.
func (s *Service) Untrack(ctx context.Context, name patent.CompanyName) error {
	return s.store.DeleteTracked(ctx, name)
}

// History returns the tracked company and its runs over the last days
// days, oldest first; patent.ErrNotFound when it is not tracked.
func (s *Service) History(ctx context.Context, name patent.CompanyName, days int) (patent.TrackedCompany, []patent.TrackingRun, error) {
	return s.store.TrackingHistory(ctx, name, s.now().AddDate(0, 0, -days))
}

// Alerts returns up to limit alerts, newest first.
func (s *Service) Alerts(ctx context.Context, limit int) ([]patent.Alert, error) {
	return s.store.ListAlerts(ctx, limit)
}

// ChangesWindow is how far back the changes digest looks when the caller
// names no start.
const ChangesWindow = 7 * 24 * time.Hour

// Changes returns a page of the runs at or after since (the zero time:
// ChangesWindow ago) that found new or dropped patents, newest first, and
// the next page's cursor ("" on the last).
func (s *Service) Changes(ctx context.Context, since time.Time, limit int, after string) ([]patent.PatentChangeRun, string, error) {
	if since.IsZero() {
		since = s.now().Add(-ChangesWindow)
	}
	return s.store.ListChanges(ctx, since, limit, after)
}
