package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// submitJob submits a quick job (a company without patents) as tok and
// waits for it to end; it returns the job's id.
func (en *env) submitJob(t *testing.T, tok string) string {
	t.Helper()
	rec := en.do(t, request{method: http.MethodPost, target: "/analyze/batch/async", token: tok, body: `{"companies":["Nobody Inc"]}`})
	wantStatus(t, rec, http.StatusAccepted)
	var j jobBody
	decode(t, rec, &j)
	waitForJob(t, en, tok, j.JobID, "completed")
	return j.JobID
}

// listJobs pages through GET /jobs?<query> one job at a time as tok and
// returns the ids in listing order.
func (en *env) listJobs(t *testing.T, tok, query string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for range 100 {
		rec := en.do(t, request{target: "/jobs?limit=1&" + query + "&cursor=" + url.QueryEscape(cursor), token: tok})
		wantStatus(t, rec, http.StatusOK)
		var page struct {
			Items      []jobBody `json:"items"`
			NextCursor *string   `json:"next_cursor"`
		}
		decode(t, rec, &page)
		for _, j := range page.Items {
			ids = append(ids, j.JobID)
		}
		if page.NextCursor == nil {
			return ids
		}
		cursor = *page.NextCursor
	}
	t.Fatalf("GET /jobs?%s: paging does not end", query)
	return nil
}

// TestJobOwnership: a job is its submitter's. Another user gets exactly the
// 404 of an unknown id, listings hold the caller's own jobs (keyset paging
// skipping the others'), admins see and filter everyone's, and a deleted
// user's jobs stay visible to admins.
func TestJobOwnership(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		admin, adminTok := en.admin(t)
		ada, adaTokens := en.newUser(t, "ada@example.com")
		bob, bobTokens := en.newUser(t, "bob@example.com")
		adaTok, bobTok := adaTokens.AccessToken, bobTokens.AccessToken
		// Interleaved, so that a user's pages must skip the other's jobs.
		var adaJobs, bobJobs, all []string // newest first
		for range 3 {
			a := en.submitJob(t, adaTok)
			b := en.submitJob(t, bobTok)
			adaJobs = slices.Insert(adaJobs, 0, a)
			bobJobs = slices.Insert(bobJobs, 0, b)
			all = slices.Insert(all, 0, b, a)
		}

		t.Run("another user's job is an unknown id", func(t *testing.T) {
			for _, id := range adaJobs {
				unknownID := uuid.Must(uuid.NewV7()).String()
				unknown := en.do(t, request{target: "/jobs/" + unknownID, token: bobTok})
				wantError(t, unknown, http.StatusNotFound, "Job "+unknownID+" not found")
				rec := en.do(t, request{target: "/jobs/" + id, token: bobTok})
				wantError(t, rec, http.StatusNotFound, "Job "+id+" not found")
				if want := strings.ReplaceAll(unknown.Body.String(), unknownID, id); rec.Body.String() != want {
					t.Errorf("GET another user's job: body %s, want the unknown id's %s", rec.Body, want)
				}
				if got, want := rec.Header().Get("Content-Type"), unknown.Header().Get("Content-Type"); got != want {
					t.Errorf("Content-Type = %q, want the unknown id's %q", got, want)
				}
				wantStatus(t, en.do(t, request{target: "/jobs/" + id, token: adaTok}), http.StatusOK)
				wantStatus(t, en.do(t, request{target: "/jobs/" + id, token: adminTok}), http.StatusOK)
			}
		})

		t.Run("listings", func(t *testing.T) {
			for _, tt := range []struct {
				name, tok, query string
				want             []string
			}{
				{"ada's own", adaTok, "", adaJobs},
				{"bob's own", bobTok, "", bobJobs},
				{"bob's own by status", bobTok, "status=completed", bobJobs},
				{"bob's own by status, none", bobTok, "status=running", nil},
				{"bob naming himself", bobTok, fmt.Sprintf("user_id=%d", bob.ID), bobJobs},
				{"admin sees all", adminTok, "", all},
				{"admin filters ada", adminTok, fmt.Sprintf("user_id=%d", ada.ID), adaJobs},
				{"admin filters bob by status", adminTok, fmt.Sprintf("user_id=%d&status=completed", bob.ID), bobJobs},
				{"admin filters herself", adminTok, fmt.Sprintf("user_id=%d", admin.ID), nil},
				{"admin filters an unknown user", adminTok, "user_id=999999", nil},
			} {
				t.Run(tt.name, func(t *testing.T) {
					if got := en.listJobs(t, tt.tok, tt.query); !slices.Equal(got, tt.want) {
						t.Errorf("GET /jobs?%s = %v, want %v", tt.query, got, tt.want)
					}
				})
			}
			rec := en.do(t, request{target: fmt.Sprintf("/jobs?user_id=%d", ada.ID), token: bobTok})
			wantError(t, rec, http.StatusForbidden, "Admin privileges required to list another user's jobs")
			for _, v := range []string{"0", "-1", "x", "1.5", "99999999999999999999"} {
				for _, tok := range []string{adminTok, bobTok} {
					rec := en.do(t, request{target: "/jobs?user_id=" + url.QueryEscape(v), token: tok})
					b := wantError(t, rec, http.StatusUnprocessableEntity, "")
					if len(b.Errors) != 1 || b.Errors[0].Field != "user_id" {
						t.Errorf("user_id=%s: errors %+v, want one on user_id", v, b.Errors)
					}
				}
			}
		})

		t.Run("a deleted user's jobs stay for admins", func(t *testing.T) {
			wantStatus(t, en.do(t, request{method: http.MethodDelete, target: fmt.Sprintf("/admin/users/%d", ada.ID), token: adminTok}), http.StatusOK)
			wantStatus(t, en.do(t, request{target: "/jobs", token: adaTok}), http.StatusUnauthorized)
			if got := en.listJobs(t, adminTok, fmt.Sprintf("user_id=%d", ada.ID)); !slices.Equal(got, adaJobs) {
				t.Errorf("deleted user's jobs = %v, want %v", got, adaJobs)
			}
			if got := en.listJobs(t, adminTok, ""); !slices.Equal(got, all) {
				t.Errorf("all jobs after the deletion = %v, want %v", got, all)
			}
			for _, id := range adaJobs {
				wantStatus(t, en.do(t, request{target: "/jobs/" + id, token: adminTok}), http.StatusOK)
				wantStatus(t, en.do(t, request{target: "/jobs/" + id, token: bobTok}), http.StatusNotFound)
			}
			// A later user never inherits the deleted user's id, so never
			// their jobs.
			dan, danTokens := en.newUser(t, "dan@example.com")
			if dan.ID == ada.ID {
				t.Fatalf("a new user got deleted user %d's id", ada.ID)
			}
			if got := en.listJobs(t, danTokens.AccessToken, ""); len(got) != 0 {
				t.Errorf("new user's jobs = %v, want none", got)
			}
		})
	})
}

// TestAnalysesRequestedBy: every analysis a user's request stores records
// that user (sync, single patent, batch, and the submitter of an async
// job); one stored without a user (scheduled runs) is null; and listings
// show them to every user alike.
func TestAnalysesRequestedBy(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		en.admin(t)
		ada, adaTokens := en.newUser(t, "ada@example.com")
		bob, bobTokens := en.newUser(t, "bob@example.com")
		adaTok, bobTok := adaTokens.AccessToken, bobTokens.AccessToken
		pns := en.world.Company("Acme Corp", 1)
		en.world.Company("Beta Labs", 1)
		en.world.Company("Gamma Inc", 1)

		wantStatus(t, en.do(t, request{target: "/analyze/Acme%20Corp", token: adaTok}), http.StatusOK)
		wantStatus(t, en.do(t, request{target: "/analyze/patent/" + pns[0] + "?company_name=Acme%20Corp", token: adaTok}), http.StatusOK)
		wantStatus(t, en.do(t, request{method: http.MethodPost, target: "/analyze/batch", token: bobTok, body: `{"companies":["Beta Labs"]}`}), http.StatusOK)
		rec := en.do(t, request{method: http.MethodPost, target: "/analyze/batch/async", token: bobTok, body: `{"companies":["Gamma Inc"]}`})
		wantStatus(t, rec, http.StatusAccepted)
		var j jobBody
		decode(t, rec, &j)
		waitForJob(t, en, bobTok, j.JobID, "completed")
		// What a scheduled run stores (the schedule package's test runs one).
		if _, err := en.st.Analyses().CreateAnalysis(context.Background(), patent.AnalysisRecord{CompanyName: "Delta Co",
			AnalysisType: patent.AnalysisPortfolio, Model: patent.DefaultModel, Response: "scheduled"}); err != nil {
			t.Fatal(err)
		}

		want := map[string]any{
			"Acme Corp portfolio":     strconv.FormatInt(ada.ID, 10),
			"Acme Corp single_patent": strconv.FormatInt(ada.ID, 10),
			"Beta Labs portfolio":     strconv.FormatInt(bob.ID, 10),
			"Gamma Inc portfolio":     strconv.FormatInt(bob.ID, 10),
			"Delta Co portfolio":      nil,
		}
		for _, tok := range []string{adaTok, bobTok} { // shared: both see all
			rec := en.do(t, request{target: "/analyze/batch", token: tok})
			wantStatus(t, rec, http.StatusOK)
			var page struct {
				Items []map[string]any `json:"items"`
			}
			decode(t, rec, &page)
			got := map[string]any{}
			for _, it := range page.Items {
				v, ok := it["requested_by"]
				if !ok {
					t.Errorf("analysis record %v has no requested_by", it)
				}
				got[fmt.Sprintf("%v %v", it["company_name"], it["analysis_type"])] = v
			}
			if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
				t.Errorf("requested_by by analysis = %s, want %s", g, w)
			}
		}
	})
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
