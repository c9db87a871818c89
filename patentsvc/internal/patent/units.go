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
// the domain's terms: what the work is about, never how the queue keeps it.

// Unit is a unit of queued work: a ScheduledRun, a JobStart or a
// DeliveryAttempt.
type Unit interface{ isUnit() }

// ScheduledRun is the scheduled run of tracked company TrackedID that was
// due at DueAt. A company has one due time at a time (its next_run_at); a
// run records its outcome only while that is still DueAt, so a due time
// is recorded once however often its unit runs.
type ScheduledRun struct {
	TrackedID int64
	DueAt     time.Time
	// TraceParent is the W3C traceparent of the request that tracked the
	// company, for its first run ("" for the others): the run's root span
	// links to it.
	TraceParent string
}

// JobStart starts a pending asynchronous job: not necessarily JobID (the
// job whose submission queued it) but the fairest pending one when a
// worker takes the unit up (the oldest job of the user with the fewest
// running). Every submitted job queues one JobStart, so there are as many
// of them as pending jobs.
type JobStart struct {
	JobID string
	// UnitID is the queue's id of this unit, set when it is handed to a
	// worker: the job the unit starts is held under it, so that the unit,
	// run again after its process died, takes the same job up again.
	UnitID int64
}

// DeliveryAttempt makes the next due attempt of webhook delivery
// DeliveryID.
type DeliveryAttempt struct {
	DeliveryID string
}

// Queued is a unit as the queue stored it: its id, and whether it was
// queued already (Duplicate: a scheduled run of the same company and due
// time, or a delivery's attempts still alive), in which case UnitID is
// the one queued before.
type Queued struct {
	UnitID    int64
	Duplicate bool
}

func (ScheduledRun) isUnit()    {}
func (JobStart) isUnit()        {}
func (DeliveryAttempt) isUnit() {}

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
