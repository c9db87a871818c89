package patent

import (
	"fmt"
	"strconv"
	"time"
)

// Units of queued work (decisions.md, "patentsvc: work every replica
// shares, bounded and fair"). Each is stored in the work queue in the
// transaction that creates the work (a tracked company, a job, a webhook
// delivery), and any replica's worker runs it. They are small values in
// the domain's terms: what the work is about, never how the queue keeps
// it. Their JSON form is the unit's arguments as the queue stores them;
// the fields tagged river:"unique" make a unit's identity (a unit with
// the same kind and identity is not queued twice while one is alive).

// The kinds of unit, as the queue stores them (river_job.kind).
const (
	KindScheduledRun = "scheduled_run"
	KindJobStart     = "job_start"
	KindDelivery     = "webhook_delivery"
)

// The queues the units wait in (river_job.queue), one a kind: each
// replica works each queue with a number of workers of its own.
const (
	QueueScheduledRuns = "scheduled"
	QueueJobStarts     = "jobs"
	QueueDeliveries    = "webhooks"
)

// Unit is a unit of queued work: a ScheduledRun, a JobStart or a
// DeliveryAttempt. Kind names its kind, Queue the queue it waits in.
type Unit interface {
	Kind() string
	Queue() string
	isUnit()
}

// ScheduledRun is the scheduled run of tracked company TrackedID that was
// due at DueAt. A company has one due time at a time (its next_run_at); a
// run records its outcome only while that is still DueAt, so a due time
// is recorded once however often its unit runs.
type ScheduledRun struct {
	TrackedID int64     `json:"tracked_id" river:"unique"`
	DueAt     time.Time `json:"due_at" river:"unique"`
	// TraceParent is the W3C traceparent of the request that tracked the
	// company, for its first run ("" for the others): the run's root span
	// links to it.
	TraceParent string `json:"trace_parent,omitempty"`
	// CompanyName is the company's name when the run was queued: the run
	// analyses it before it reads anything else. Empty in a unit queued
	// before it was carried (the run reads the company first).
	CompanyName string `json:"company_name,omitempty"`
	// AlertIDs are the ids reserved, when the run was queued, for the
	// alerts it may raise (one per alert type), so that the run composes
	// its alerts and their webhook deliveries before it stores them, in one
	// call. A due time is recorded once, so each id is used at most once;
	// the ids of alerts not raised are never used.
	AlertIDs []int64 `json:"alert_ids,omitempty"`
	// Attempt is the run of the unit this is, 1 for the first; set by the
	// worker, not stored.
	Attempt int `json:"-"`
}

// AlertsPerRun is the most alerts a scheduled run raises (a
// patent_count_change and a new_patents alert): the ids reserved for it.
const AlertsPerRun = 2

// JobStart starts a pending asynchronous job: not necessarily JobID (the
// job whose submission queued it) but the fairest pending one when a
// worker takes the unit up (the oldest job of the user with the fewest
// running). Every submitted job queues one JobStart, so there are as many
// of them as pending jobs.
type JobStart struct {
	JobID string `json:"job_id"`
	// UnitID is the queue's id of this unit, set when it is handed to a
	// worker: the job the unit starts is held under it.
	UnitID int64 `json:"-"`
}

// DeliveryAttempt makes the next due attempt of webhook delivery
// DeliveryID.
type DeliveryAttempt struct {
	DeliveryID string `json:"delivery_id" river:"unique"`
}

// Kind is KindScheduledRun.
func (ScheduledRun) Kind() string { return KindScheduledRun }

// Kind is KindJobStart.
func (JobStart) Kind() string { return KindJobStart }

// Kind is KindDelivery.
func (DeliveryAttempt) Kind() string { return KindDelivery }

// Queue is QueueScheduledRuns.
func (ScheduledRun) Queue() string { return QueueScheduledRuns }

// Queue is QueueJobStarts.
func (JobStart) Queue() string { return QueueJobStarts }

// Queue is QueueDeliveries.
func (DeliveryAttempt) Queue() string { return QueueDeliveries }

func (ScheduledRun) isUnit()    {}
func (JobStart) isUnit()        {}
func (DeliveryAttempt) isUnit() {}

// LostJob is a running job whose work stopped without ending it: the
// replica running it died or lost its database session (RunnerStopped),
// or the queue gave its unit up (its runs failed, or an operator or the
// replica's own lost session cancelled it). Either way it fails, with its
// job.completed deliveries (decisions.md, "patentsvc: a dead replica's work
// resumes in seconds").
type LostJob struct {
	Job           Job
	RunnerStopped bool
}

// LaterError is what a unit's work returns to be run again After from now,
// without counting a failed attempt: a webhook delivery whose next attempt
// is due later.
type LaterError struct{ After time.Duration }

func (e *LaterError) Error() string { return "run again in " + e.After.String() }

// Later returns a *LaterError for d (at least 0).
func Later(d time.Duration) error { return &LaterError{After: max(d, 0)} }

// TooManyJobsError refuses a job of a user who has Limit unfinished ones
// (decisions.md: JOBS_MAX_PER_USER). RetryAfter is when a slot is expected
// to free. It is a kind of ErrTooManyJobs.
type TooManyJobsError struct {
	Limit      int
	RetryAfter time.Duration
}

func (e *TooManyJobsError) Error() string {
	return "Too many unfinished jobs: " + strconv.Itoa(e.Limit) + " per user"
}

func (e *TooManyJobsError) Is(target error) bool { return target == ErrTooManyJobs }

// RetryAfterSeconds is RetryAfter in whole seconds, at least 1.
func (e *TooManyJobsError) RetryAfterSeconds() int {
	s := int((e.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}

// String names the unit, for logs.
func (u ScheduledRun) String() string {
	return fmt.Sprintf("scheduled run of tracked company %d due %s", u.TrackedID, u.DueAt.UTC().Format(time.RFC3339))
}
