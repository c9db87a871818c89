package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/httperr"
)

// JobStore reads jobs; *store.Store implements it.
type JobStore interface {
	Job(ctx context.Context, id string) (patent.Job, error)
	ListJobs(ctx context.Context, f patent.JobFilter, limit int, after string) ([]patent.Job, string, error)
}

// visibleJob returns job id if the caller may see it. Another user's job
// is not found, with the very error (status and body) of an unknown id, so
// that nothing tells a user another's job exists (decisions.md: 404, never
// 403). Every per-job route reads its job through here.
func visibleJob(c echo.Context, st JobStore, id string) (patent.Job, error) {
	j, err := st.Job(c.Request().Context(), id)
	if err == nil && !j.VisibleTo(currentUser(c)) {
		err = fmt.Errorf("job %s belongs to another user: %w", id, patent.ErrNotFound)
	}
	if errors.Is(err, patent.ErrNotFound) {
		return patent.Job{}, httperr.Wrap(err, http.StatusNotFound, fmt.Sprintf("Job %s not found", truncate(id, 64)))
	}
	return j, err
}

// handleJob serves GET /jobs/{job_id}: the caller's own job, or any job
// for an admin.
func handleJob(st JobStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		j, err := visibleJob(c, st, c.Param("job_id"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, fromJob(j))
	}
}

// jobFilter reads status and user_id. A user lists their own jobs; an
// admin lists everyone's, or one user's with user_id (any id: a deleted
// user's jobs stay listed, an unknown id lists none). A non-admin may pass
// only their own id: another is a 403, since silently listing their own
// jobs instead would look like the other user's.
func jobFilter(c echo.Context) (patent.JobFilter, error) {
	var f patent.JobFilter
	if f.Status = c.QueryParam("status"); f.Status != "" {
		if _, err := patent.ParseJobStatus(f.Status); err != nil {
			return f, invalid("status", err)
		}
	}
	u := currentUser(c)
	if v := c.QueryParam("user_id"); v != "" {
		id, err := intParam("user_id", v, 1, 1<<62) // the range of userIDParam
		if err != nil {
			return f, err
		}
		if u.Role != patent.RoleAdmin && id != u.ID {
			return f, httperr.New(http.StatusForbidden, "Admin privileges required to list another user's jobs")
		}
		f.UserID = id
	}
	if u.Role != patent.RoleAdmin {
		if u.ID == 0 {
			// Only a wiring mistake (the route without requireUser) gets
			// here; UserID 0 would list every user's jobs.
			return f, errors.New("jobs: listing jobs without an authenticated user")
		}
		f.UserID = u.ID
	}
	return f, nil
}

// handleListJobs serves GET /jobs?status=&user_id=&limit=&cursor=.
func handleListJobs(st JobStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit, cursor, err := pageParams(c)
		if err != nil {
			return err
		}
		f, err := jobFilter(c)
		if err != nil {
			return err
		}
		items, next, err := st.ListJobs(c.Request().Context(), f, limit, cursor)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, pageJSON[jobJSON]{Items: mapSlice(items, fromJob), NextCursor: nullable(next)})
	}
}

// truncate shortens client input echoed in messages.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
