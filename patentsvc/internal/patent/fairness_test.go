package patent_test

import (
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// TestFairestJob: the user with the fewest running jobs goes first, then
// the oldest job, then the smallest id; no candidate is no pick.
func TestFairestJob(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	c := func(id string, user int64, age time.Duration, running int) patent.JobCandidate {
		return patent.JobCandidate{JobID: id, UserID: user, CreatedAt: t0.Add(-age), Running: running}
	}
	for _, tt := range []struct {
		name string
		cs   []patent.JobCandidate
		want string
	}{
		{"none", nil, ""},
		{"one", []patent.JobCandidate{c("a", 1, 0, 3)}, "a"},
		{"fewest running beats oldest", []patent.JobCandidate{c("a", 1, time.Hour, 1), c("b", 2, time.Minute, 0)}, "b"},
		{"equal running: oldest", []patent.JobCandidate{c("b", 2, time.Minute, 1), c("a", 1, time.Hour, 1)}, "a"},
		{"equal age: smallest id", []patent.JobCandidate{c("job-2", 2, 0, 0), c("job-1", 1, 0, 0)}, "job-1"},
		{"order does not matter", []patent.JobCandidate{c("c", 3, 0, 2), c("a", 1, 2*time.Hour, 2), c("b", 2, time.Hour, 2)}, "a"},
		{"ownerless jobs compete as one user", []patent.JobCandidate{c("old", 0, time.Hour, 1), c("new", 5, 0, 0)}, "new"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := patent.FairestJob(tt.cs)
			if ok != (tt.want != "") || got.JobID != tt.want {
				t.Errorf("FairestJob = %q, %v; want %q", got.JobID, ok, tt.want)
			}
		})
	}
}
