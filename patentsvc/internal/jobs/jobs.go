// Package jobs runs asynchronous batch analyses as units of the work
// queue that every replica drains (decisions.md, "patentsvc: work every
// replica shares, bounded and fair").
//
// # Caveats
//
//   - Submit stores a pending job and queues a JobStart in the same
//     transaction, or refuses (a *patent.TooManyJobsError) when the user
//     has JOBS_MAX_PER_USER unfinished jobs; its RetryAfter is the expected
//     wait for the user's oldest unfinished job to end, from the pace of
//     the jobs that ended on the cluster (expectedWait).
//   - A JobStart does not start the job that queued it but the fairest
//     pending one at the moment a worker takes it up: the oldest job of the
//     user with the fewest running (patent.FairestJob; claim). There are as many
//     job starts as pending jobs, so every job starts; the pick is made
//     when a worker is free, so one user's backlog never holds another
//     user's first job back by more than one job slot. (River orders its
//     units by priority and time only; per-user fairness is the one part
//     of the queueing written here.)
//   - A job runs on whichever replica's worker took its unit up, at most
//     JOBS_MAX_CONCURRENT at once per replica, and for at most
//     JOBS_TIMEOUT: then it ends failed, with the companies finished so far
//     and the others reported as not analysed.
//   - A job whose replica dies (kill -9, a lost node, a session cut from
//     the database) fails as soon as the sweep of a live replica sees that
//     replica's liveness session has ended, within seconds, with its
//     job.completed webhook (decisions.md, "patentsvc: a dead replica's
//     work resumes in seconds"); so does a job whose unit the queue gave
//     up. A shutdown's deadline cuts a job short too, but its unit is run
//     again at once, elsewhere: the job starts over (the companies analysed
//     already come from the caches).
//   - Every end of a job, the sweep's failures included, stores its
//     job.completed webhook deliveries, composed here first, in the one
//     call that records the end.
//   - At the start of a replica that finds no other alive (the store's
//     Session.Alone; always on SQLite), the jobs left pending or running
//     fail, as the spec's start-up rule says (FailUnfinished).
//   - A job belongs to the user who submitted it (Job.UserID), and every
//     analysis it stores records that user as requested_by. Who may read
//     a job is decided at the HTTP edge (Job.VisibleTo).
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// EndGrace is how much longer than JOBS_TIMEOUT the queue lets a job's
// unit run: the job's own deadline passes first, and its end is recorded
// before the queue would cut the unit.
const EndGrace = 5 * time.Second

// finishTimeout bounds the write that records a job's end, which runs
// after the job's own context may have ended.
const finishTimeout = 10 * time.Second

// Retry-After of a refused submission (expectedWait).
const (
	// defaultPace is a company's expected analysis time while no job has
	// ended on the cluster to tell the pace.
	defaultPace = 30 * time.Second
	// paceJobs is how many of the latest jobs that ended tell the pace.
	paceJobs = 50
)

// Reasons a job fails without ending by itself.
const (
	reasonRunnerStopped = "the replica running the job stopped before it ended (its process died or lost its database connection); it is not run again"
	reasonGivenUp       = "the job's work stopped without ending it (its runs failed, or it was cancelled); it is not run again"
	reasonRestart       = "the service restarted before the job ended"
)

// Ledger is the job table as users see it: submissions, listings and the
// pace of the jobs that ended; store.Jobs implements it.
type Ledger interface {
	// CreateJob stores a pending job and queues its JobStart with attempts
	// runs; it refuses with a *patent.TooManyJobsError when the user has
	// maxPerUser unfinished jobs.
	CreateJob(ctx context.Context, j patent.Job, maxPerUser, attempts int) (patent.Job, error)
	// Job returns a job; patent.ErrNotFound for an unknown id.
	Job(ctx context.Context, id string) (patent.Job, error)
	// ListJobs returns a page of the jobs f selects, newest first, and the
	// cursor of the next page ("" at the end).
	ListJobs(ctx context.Context, f patent.JobFilter, limit int, after string) ([]patent.Job, string, error)
	// UnfinishedJobs returns up to limit pending or running jobs of a user
	// (0: of every user), oldest first.
	UnfinishedJobs(ctx context.Context, userID int64, limit int) ([]patent.Job, error)
	// JobPace is the median time per company of the latest n jobs that
	// ran to their end; ok is false when none has.
	JobPace(ctx context.Context, n int) (perCompany time.Duration, ok bool, err error)
}

// Store is the job table as the units that run jobs use it: taking a job
// up, recording its progress and its end, and the sweeps; store.Jobs
// implements it.
type Store interface {
	// UnfinishedJobs returns up to limit pending or running jobs of a user
	// (0: of every user), oldest first.
	UnfinishedJobs(ctx context.Context, userID int64, limit int) ([]patent.Job, error)
	// HeldJob returns the running job unit holds; ok is false when none.
	HeldJob(ctx context.Context, unit int64) (j patent.Job, ok bool, err error)
	// PendingHeads returns each user's oldest pending job, with the number
	// of the user's jobs running.
	PendingHeads(ctx context.Context) ([]patent.JobCandidate, error)
	// StartJob marks a pending job running, held by unit; ok is false when
	// it is no longer pending.
	StartJob(ctx context.Context, id string, unit int64) (j patent.Job, ok bool, err error)
	JobProgress(ctx context.Context, id string, unit int64, completed int) error
	// FinishJob records j's end, held by unit, with its deliveries.
	FinishJob(ctx context.Context, j patent.Job, unit int64, deliveries []patent.Delivery) error
	// FailJob fails j, as read, with reason and its deliveries, unless it
	// moved meanwhile (failed false).
	FailJob(ctx context.Context, j patent.Job, reason string, deliveries []patent.Delivery) (failed bool, err error)
	// LostJobs are the running jobs whose replica died or whose unit ended.
	LostJobs(ctx context.Context) ([]patent.LostJob, error)
	// ReleaseDeadUnits makes the units of its kind that dead replicas were
	// running available again.
	ReleaseDeadUnits(ctx context.Context) (int64, error)
	RefillJobStarts(ctx context.Context, attempts int) (int64, error)
}

// Batcher analyses a batch; *analysis.Analyzer implements it. progress is
// analysis.Progress, an alias of the same interface literal.
type Batcher interface {
	AnalyzeBatch(ctx context.Context, names []patent.CompanyName, workers int, opts patent.AnalyzeOptions, progress interface{ Done(completed int) }) patent.BatchResult
}

// Notifier composes the webhook deliveries of a job that ended, which the
// store keeps in the transaction that records the end (decisions.md: a
// job end and its deliveries commit together); *webhook.Dispatcher
// implements it. Without webhooks it composes none.
type Notifier interface {
	JobDeliveries(j patent.Job) ([]patent.Delivery, error)
}

// Config holds the job settings.
type Config struct {
	// MaxPerUser is JOBS_MAX_PER_USER: a user's unfinished jobs.
	MaxPerUser int
	// Timeout is JOBS_TIMEOUT: the longest a job runs.
	Timeout time.Duration
	// Attempts is JOBS_MAX_ATTEMPTS: the runs of a job's unit whose end
	// could not be recorded (0: the store's default).
	Attempts int
}

// Runner accepts jobs and runs the units that start them. It is safe for
// concurrent use.
type Runner struct {
	cfg    Config
	ledger Ledger
	store  Store
	batch  Batcher
	notify Notifier
	logger *slog.Logger
	now    func() time.Time
}

// NewRunner returns a Runner over the job table, as users see it (ledger)
// and as the units that run jobs use it (st): store.Jobs is both. notify
// may be nil (no webhooks).
func NewRunner(cfg Config, ledger Ledger, st Store, batch Batcher, notify Notifier, logger *slog.Logger, now func() time.Time) *Runner {
	return &Runner{cfg: cfg, ledger: ledger, store: st, batch: batch, notify: notify, logger: logger, now: now}
}

// Job returns job id as viewer may see it: their own, or any job for an
// admin. Another user's job is the same patent.ErrNotFound as an unknown
// id, so that nothing tells a user another's job exists (decisions.md:
// 404, never 403).
func (r *Runner) Job(ctx context.Context, viewer patent.User, id string) (patent.Job, error) {
	j, err := r.ledger.Job(ctx, id)
	if err != nil {
		return patent.Job{}, err
	}
	if !j.VisibleTo(viewer) {
		return patent.Job{}, fmt.Errorf("job %s belongs to another user: %w", id, patent.ErrNotFound)
	}
	return j, nil
}

// Jobs returns a page of the jobs viewer may list that f selects, newest
// first, and the next page's cursor. A user lists their own jobs; an admin
// lists everyone's, or one user's with f.UserID (any id: a deleted user's
// jobs stay listed, an unknown id lists none). A user who asks for another
// user's jobs is refused with a kind of patent.ErrForbidden, since
// silently listing their own instead would look like the other user's.
func (r *Runner) Jobs(ctx context.Context, viewer patent.User, f patent.JobFilter, limit int, after string) ([]patent.Job, string, error) {
	if viewer.Role != patent.RoleAdmin {
		if viewer.ID == 0 {
			// UserID 0 would list every user's jobs.
			return nil, "", errors.New("jobs: listing jobs without an authenticated user")
		}
		if f.UserID != 0 && f.UserID != viewer.ID {
			return nil, "", patent.NewKindError(patent.ErrForbidden, "Admin privileges required to list another user's jobs")
		}
		f.UserID = viewer.ID
	}
	return r.ledger.ListJobs(ctx, f, limit, after)
}

// Submit stores a pending job of user userID for companies and queues its
// start. The job belongs to that user, and the analyses it stores record
// the user as requested_by (decisions.md). It returns a
// *patent.TooManyJobsError, with the wait before a slot is expected to
// free, when the user has JOBS_MAX_PER_USER unfinished jobs.
func (r *Runner) Submit(ctx context.Context, userID int64, companies []patent.CompanyName, workers int, model string) (patent.Job, error) {
	names := make([]string, len(companies))
	for i, c := range companies {
		names[i] = c.String()
	}
	// Version 7 ids grow with time, so the listing's tie-breaker (id,
	// descending) agrees with submission order.
	id, err := uuid.NewV7()
	if err != nil {
		return patent.Job{}, err
	}
	j, err := r.ledger.CreateJob(ctx, patent.Job{ID: id.String(), UserID: userID, Companies: names, MaxWorkers: workers, Model: model,
		TraceParent: traceParent(ctx)}, r.cfg.MaxPerUser, r.cfg.Attempts)
	var full *patent.TooManyJobsError
	if errors.As(err, &full) {
		full.RetryAfter = r.retryAfter(ctx, userID)
	}
	return j, err
}

// retryAfter is the expected wait for userID's oldest unfinished job to
// end (expectedWait), from the pace of the jobs that ended on the cluster.
func (r *Runner) retryAfter(ctx context.Context, userID int64) time.Duration {
	unfinished, err := r.ledger.UnfinishedJobs(ctx, userID, max(r.cfg.MaxPerUser, 1))
	if err != nil {
		unfinished = nil
	}
	pace, ok, err := r.ledger.JobPace(ctx, paceJobs)
	if err != nil || !ok {
		pace = defaultPace
	}
	return expectedWait(unfinished, pace, r.now(), r.cfg.Timeout)
}

// expectedWait is how long the oldest of a user's unfinished jobs (oldest
// first) is expected to take to end (decisions.md: a Retry-After a client
// can obey), a job taking pace per company:
//   - running: what its expected time has left, but never less than its
//     own pace tells (the time per company done so far, for the companies
//     left; a job with none done yet is expected to take as long again as
//     it has run), so a job slower than the pace is not answered "1 s";
//   - pending: its expected time, after the soonest expected end of the
//     user's running jobs (its slot frees then at the latest);
//
// between a second and limit (JOBS_TIMEOUT: no job runs longer).
func expectedWait(unfinished []patent.Job, pace time.Duration, now time.Time, limit time.Duration) time.Duration {
	if len(unfinished) == 0 {
		return time.Second
	}
	oldest := unfinished[0]
	wait := pace * time.Duration(max(oldest.Total, 1))
	if oldest.StartedAt != nil {
		wait = leftOf(oldest, pace, now)
	} else {
		soonest := time.Duration(-1)
		for _, j := range unfinished {
			if j.StartedAt != nil {
				if left := leftOf(j, pace, now); soonest < 0 || left < soonest {
					soonest = left
				}
			}
		}
		wait += max(soonest, 0)
	}
	return min(max(wait, time.Second), max(limit, time.Second))
}

// leftOf is the expected time a running job has left (expectedWait).
func leftOf(j patent.Job, pace time.Duration, now time.Time) time.Duration {
	ran := now.Sub(*j.StartedAt)
	left := pace*time.Duration(max(j.Total, 1)) - ran
	own := ran
	if j.Completed > 0 {
		own = ran / time.Duration(j.Completed) * time.Duration(max(j.Total-j.Completed, 0))
	}
	return max(left, own)
}

// Work runs a JobStart: it takes the fairest pending job up (or the one
// the unit held when its process died), runs it within JOBS_TIMEOUT and
// records its end. It returns an error when the job must run again: its
// end could not be recorded, or the queue's context ended (a shutdown), in
// which case the unit is run again at once on another replica.
func (r *Runner) Work(ctx context.Context, u patent.JobStart) error {
	// JOBS_TIMEOUT runs from the unit's start, waits for the pick included,
	// so that it always ends EndGrace before the unit's own deadline.
	deadline := time.Now().Add(r.cfg.Timeout)
	j, ok, err := r.claim(ctx, u.UnitID)
	if err != nil || !ok {
		return err
	}
	ctx, span := startRun(ctx, j)
	defer span.End()
	log := r.logger.With("job_id", j.ID)
	log.InfoContext(ctx, "job started", "companies", len(j.Companies), "unit", u.UnitID)
	runCtx, cancel := context.WithDeadlineCause(ctx, deadline, errTimedOut(r.cfg.Timeout))
	defer cancel()
	names := make([]patent.CompanyName, len(j.Companies))
	for i, c := range j.Companies {
		names[i] = patent.CompanyName(c) // validated when the job was submitted
	}
	opts := patent.AnalyzeOptions{Model: j.Model, RequestedBy: patent.RequesterID(j.UserID)}
	result := r.batch.AnalyzeBatch(runCtx, names, j.MaxWorkers, opts, jobProgress{ctx: ctx, store: r.store, job: j.ID, unit: u.UnitID, log: log})
	if ctx.Err() != nil {
		// A shutdown: its unit runs again, at once, elsewhere; the end of
		// this replica's session: its unit ends, and the job fails (the
		// sweep's). The cause says which.
		log.InfoContext(ctx, "job cut short", "cause", context.Cause(ctx).Error())
		return fmt.Errorf("job %s: %w", j.ID, context.Cause(ctx))
	}
	j.Status, j.Result, j.Completed = patent.JobCompleted, &result, len(result.Results)
	if runCtx.Err() != nil {
		msg := context.Cause(runCtx).Error()
		j.Status, j.Error = patent.JobFailed, &msg
	}
	return r.finish(ctx, j, u.UnitID, log)
}

// claim takes a job up for unit: the job the unit holds already, if it is
// still running (the unit is run again after its process died or a
// shutdown cut it short), or else the fairest pending job
// (patent.FairestJob), whichever job's submission queued the unit. When
// another replica starts the pick first, it picks again among what is
// left. ok is false when every pending job is taken already.
func (r *Runner) claim(ctx context.Context, unit int64) (patent.Job, bool, error) {
	if j, ok, err := r.store.HeldJob(ctx, unit); err != nil || ok {
		return j, ok, err
	}
	for ctx.Err() == nil {
		heads, err := r.store.PendingHeads(ctx)
		if err != nil {
			return patent.Job{}, false, err
		}
		pick, ok := patent.FairestJob(heads)
		if !ok {
			return patent.Job{}, false, nil
		}
		j, ok, err := r.store.StartJob(ctx, pick.JobID, unit)
		if err != nil || ok {
			return j, ok, err
		}
	}
	return patent.Job{}, false, context.Cause(ctx)
}

// jobProgress records a running job's progress on its row, held by its
// unit (the analyzer tells it after each company).
type jobProgress struct {
	ctx   context.Context // the job's
	store Store
	job   string
	unit  int64
	log   *slog.Logger
}

// Done records that n of the job's companies are done.
func (p jobProgress) Done(n int) {
	if err := p.store.JobProgress(p.ctx, p.job, p.unit, n); err != nil && p.ctx.Err() == nil {
		p.log.WarnContext(p.ctx, "job progress not recorded", "err", err.Error())
	}
}

// errTimedOut is the error of a job that ran past JOBS_TIMEOUT; its
// companies not analysed by then report it too.
func errTimedOut(d time.Duration) error {
	return fmt.Errorf("the job ran longer than JOBS_TIMEOUT (%s)", d)
}

// finish records the end of j (as it ended), held by unit, with its
// job.completed deliveries.
func (r *Runner) finish(ctx context.Context, j patent.Job, unit int64, log *slog.Logger) error {
	// A context of its own (keeping the job's span): the job's may be
	// ending.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	deliveries, err := r.deliveries(j)
	if err == nil {
		err = r.store.FinishJob(ctx, j, unit, deliveries)
	}
	if err != nil {
		log.WarnContext(ctx, "job end not recorded; the job runs again", "status", j.Status, "err", err.Error())
		return fmt.Errorf("job %s: %w", j.ID, err)
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("job.status", j.Status))
	log.InfoContext(ctx, "job finished", "status", j.Status)
	return nil
}

// deliveries composes j's job.completed deliveries (none without a
// Notifier).
func (r *Runner) deliveries(j patent.Job) ([]patent.Delivery, error) {
	if r.notify == nil {
		return nil, nil
	}
	ds, err := r.notify.JobDeliveries(j)
	if err != nil {
		return nil, fmt.Errorf("compose the job.completed deliveries: %w", err)
	}
	return ds, nil
}

// Sweep resolves the jobs whose work stopped without ending them (gocron
// calls it every queue.SweepEvery on every replica; the store makes sweeps at
// once safe): a job whose replica died, or whose unit the queue gave up,
// fails with its job.completed webhook; a job start that a dead replica
// had taken up before it took a job is offered again; every pending job
// gets a unit to start it.
func (r *Runner) Sweep(ctx context.Context) {
	lost, err := r.store.LostJobs(ctx)
	if err != nil && ctx.Err() == nil {
		r.logger.Warn("reading lost jobs failed", "err", err.Error())
	}
	failed := 0
	for _, l := range lost {
		reason := reasonGivenUp
		if l.RunnerStopped {
			reason = reasonRunnerStopped
		}
		if r.fail(ctx, l.Job, reason) {
			failed++
		}
	}
	if failed > 0 {
		r.logger.Warn("failed jobs whose work stopped", "count", failed)
	}
	if n, err := r.store.ReleaseDeadUnits(ctx); err != nil && ctx.Err() == nil {
		r.logger.Warn("releasing the job starts of dead replicas failed", "err", err.Error())
	} else if n > 0 {
		r.logger.Info("released the job starts of dead replicas", "count", n)
	}
	q, err := r.store.RefillJobStarts(ctx, r.cfg.Attempts)
	switch {
	case err != nil && ctx.Err() == nil:
		r.logger.Warn("queueing job starts failed", "err", err.Error())
	case q > 0:
		r.logger.Info("queued starts of pending jobs that had none", "count", q)
	}
}

// fail fails j, as read, with reason and its job.completed deliveries;
// false when it moved meanwhile or the write failed (the next sweep sees
// it again).
func (r *Runner) fail(ctx context.Context, j patent.Job, reason string) bool {
	ended := j
	ended.Status, ended.Error = patent.JobFailed, &reason
	deliveries, err := r.deliveries(ended)
	if err == nil {
		var ok bool
		ok, err = r.store.FailJob(ctx, j, reason, deliveries)
		if ok {
			r.logger.Info("job failed", "job_id", j.ID, "reason", reason)
			return true
		}
	}
	if err != nil && ctx.Err() == nil {
		r.logger.Warn("failing a job failed", "job_id", j.ID, "err", err.Error())
	}
	return false
}

// FailUnfinished fails, with their webhooks, the jobs left pending or
// running (the spec's start-up rule): call it at start-up, before the
// queue starts, when no other replica is alive (the store's
// Session.Alone), so none of them is running anywhere.
func (r *Runner) FailUnfinished(ctx context.Context) error {
	n := 0
	for {
		jobs, err := r.store.UnfinishedJobs(ctx, 0, 100)
		if err != nil {
			return fmt.Errorf("jobs: %w", err)
		}
		failed := 0
		for _, j := range jobs {
			if r.fail(ctx, j, reasonRestart) {
				failed++
			}
		}
		n += failed
		if len(jobs) < 100 || failed == 0 {
			break
		}
	}
	if n > 0 {
		r.logger.Warn("failed jobs left unfinished by the previous process", "count", n)
	}
	return nil
}
