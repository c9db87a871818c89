package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
)

// listJobIDs pages through the jobs f selects, two at a time, and returns
// their ids in listing order.
func listJobIDs(t *testing.T, s *store.Store, f patent.JobFilter) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for range 100 {
		page, next, err := s.Jobs().ListJobs(ctx, f, 2, cursor)
		if err != nil {
			t.Fatalf("ListJobs(%+v) = %v", f, err)
		}
		for _, j := range page {
			ids = append(ids, j.ID)
			if f.UserID != 0 && j.UserID != f.UserID {
				t.Errorf("ListJobs(%+v) returned job %s of user %d", f, j.ID, j.UserID)
			}
		}
		if next == "" {
			return ids
		}
		cursor = next
	}
	t.Fatal("paging does not end")
	return nil
}

// TestJobOwnership: a job keeps its submitter; listings filter by user
// (with keyset paging and the status filter) or show everyone's; deleting
// a user keeps their jobs and the id they carry.
func TestJobOwnership(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		mustUser := func(email string) patent.User {
			u, err := s.Users().CreateUser(ctx, email, []byte("h"))
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		admin, ada, bob := mustUser("admin@example.com"), mustUser("ada@example.com"), mustUser("bob@example.com")
		var adaJobs, bobJobs, all []string
		for i := range 7 {
			if i == 2 {
				clk.tie(3) // equal created_at: ties broken by id across users
			}
			owner, id := ada.ID, fmt.Sprintf("job-%d", i)
			if i%3 == 1 {
				owner = bob.ID
			}
			j, err := s.Jobs().CreateJob(ctx, patent.Job{ID: id, UserID: owner, Companies: []string{"A"}}, 0, 0)
			if err != nil || j.UserID != owner {
				t.Fatalf("CreateJob = %+v, %v; want user %d", j, err, owner)
			}
			all = slices.Insert(all, 0, id)
			if owner == ada.ID {
				adaJobs = slices.Insert(adaJobs, 0, id)
			} else {
				bobJobs = slices.Insert(bobJobs, 0, id)
			}
		}
		// A job from before jobs had owners (UserID 0): no one's.
		if _, err := s.Jobs().CreateJob(ctx, patent.Job{ID: "job-legacy", Companies: []string{"A"}}, 0, 0); err != nil {
			t.Fatal(err)
		}
		all = slices.Insert(all, 0, "job-legacy")

		for _, tt := range []struct {
			name string
			f    patent.JobFilter
			want []string
		}{
			{"ada", patent.JobFilter{UserID: ada.ID}, adaJobs},
			{"bob", patent.JobFilter{UserID: bob.ID}, bobJobs},
			{"admin has none", patent.JobFilter{UserID: admin.ID}, nil},
			{"everyone", patent.JobFilter{}, all},
		} {
			if got := listJobIDs(t, s, tt.f); !slices.Equal(got, tt.want) {
				t.Errorf("%s: ListJobs = %v, want %v", tt.name, got, tt.want)
			}
		}
		// Two units take up the fairest jobs: ada's oldest, then bob's
		// oldest (bob runs none yet).
		for unit := range int64(2) {
			if id := claim(t, s, unit+1); id == "" {
				t.Fatalf("claim by unit %d: no job", unit+1)
			}
		}
		if got := listJobIDs(t, s, patent.JobFilter{UserID: ada.ID, Status: patent.JobRunning}); !slices.Equal(got, adaJobs[len(adaJobs)-1:]) {
			t.Errorf("ada's running jobs = %v, want %v", got, adaJobs[len(adaJobs)-1:])
		}
		if got := listJobIDs(t, s, patent.JobFilter{UserID: bob.ID, Status: patent.JobRunning}); !slices.Equal(got, bobJobs[len(bobJobs)-1:]) {
			t.Errorf("bob's running jobs = %v, want %v", got, bobJobs[len(bobJobs)-1:])
		}

		// Deleting bob keeps his jobs, still his.
		if err := s.Users().DeleteUser(ctx, bob.ID); err != nil {
			t.Fatal(err)
		}
		if got := listJobIDs(t, s, patent.JobFilter{UserID: bob.ID}); !slices.Equal(got, bobJobs) {
			t.Errorf("deleted user's jobs = %v, want %v", got, bobJobs)
		}
		if got := listJobIDs(t, s, patent.JobFilter{}); !slices.Equal(got, all) {
			t.Errorf("all jobs after deleting a user = %v, want %v", got, all)
		}
		j, err := s.Jobs().Job(ctx, bobJobs[0])
		if err != nil || j.UserID != bob.ID {
			t.Errorf("Job of a deleted user = %+v, %v; want user %d", j, err, bob.ID)
		}
		// Ids are never reused: the next user is not bob again.
		if carol := mustUser("carol@example.com"); carol.ID == bob.ID {
			t.Errorf("a new user got deleted user %d's id", bob.ID)
		}
	})
}

// TestAnalysisRequestedBy: requested_by round-trips, and is empty (NULL)
// when no user asked.
func TestAnalysisRequestedBy(t *testing.T) {
	each(t, func(t *testing.T, s *store.Store, clk *movingClock) {
		for _, by := range []string{"17", ""} {
			rec, err := s.Analyses().CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: "Acme", AnalysisType: patent.AnalysisPortfolio,
				Response: "r", RequestedBy: by})
			if err != nil || rec.RequestedBy != by {
				t.Fatalf("CreateAnalysis(RequestedBy %q) = %+v, %v", by, rec, err)
			}
		}
		got := pageAll(t, s, "Acme", 10) // newest first
		if len(got) != 2 || got[0].RequestedBy != "" || got[1].RequestedBy != "17" {
			t.Errorf("stored analyses = %+v, want requested_by \"\" then \"17\"", got)
		}
		var n int
		err := s.Analyses().EachAnalysis(ctx, "Acme", func(r patent.AnalysisRecord) error {
			if want := []string{"", "17"}[n]; r.RequestedBy != want {
				t.Errorf("EachAnalysis #%d requested_by = %q, want %q", n, r.RequestedBy, want)
			}
			n++
			return nil
		})
		if err != nil || n != 2 {
			t.Errorf("EachAnalysis = %d rows, %v", n, err)
		}
	})
}
