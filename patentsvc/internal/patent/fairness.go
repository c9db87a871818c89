package patent

import "time"

// JobCandidate is a user's next job to start: the oldest pending job of
// that user, and how many of the user's jobs are running now.
type JobCandidate struct {
	JobID     string
	UserID    int64 // 0: jobs stored before jobs had owners, counted as one user
	CreatedAt time.Time
	Running   int
}

// FairestJob picks the job a free worker starts (decisions.md, "patentsvc:
// work every replica shares, bounded and fair"): among each user's oldest
// pending job, the one of the user with the fewest jobs running; among
// those, the oldest; among jobs created at the same time, the smallest id.
// So one user's backlog never holds another user's first job back by more
// than one job slot. ok is false when there is no candidate.
func FairestJob(cs []JobCandidate) (best JobCandidate, ok bool) {
	for _, c := range cs {
		if !ok || fairer(c, best) {
			best, ok = c, true
		}
	}
	return best, ok
}

func fairer(a, b JobCandidate) bool {
	switch {
	case a.Running != b.Running:
		return a.Running < b.Running
	case !a.CreatedAt.Equal(b.CreatedAt):
		return a.CreatedAt.Before(b.CreatedAt)
	default:
		return a.JobID < b.JobID
	}
}
