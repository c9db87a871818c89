package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/httperr"
)

// handleJob serves GET /jobs/{job_id}: the caller's own job, or any job
// for an admin.
func handleJob(jobs Jobs) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("job_id")
		j, err := jobs.Job(c.Request().Context(), currentUser(c), id)
		if errors.Is(err, patent.ErrNotFound) {
			return httperr.Wrap(err, http.StatusNotFound, fmt.Sprintf("Job %s not found", truncate(id, 64)))
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, fromJob(j))
	}
}

// jobFilter reads status and user_id; which jobs the caller may list is
// the jobs core's rule (Jobs.Jobs).
func jobFilter(c echo.Context) (patent.JobFilter, error) {
	var f patent.JobFilter
	if f.Status = c.QueryParam("status"); f.Status != "" {
		if _, err := patent.ParseJobStatus(f.Status); err != nil {
			return f, invalid("status", err)
		}
	}
	if v := c.QueryParam("user_id"); v != "" {
		id, err := intParam("user_id", v, 1, 1<<62) // the range of userIDParam
		if err != nil {
			return f, err
		}
		f.UserID = id
	}
	return f, nil
}

// handleListJobs serves GET /jobs?status=&user_id=&limit=&cursor=.
func handleListJobs(jobs Jobs) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit, cursor, err := pageParams(c)
		if err != nil {
			return err
		}
		f, err := jobFilter(c)
		if err != nil {
			return err
		}
		items, next, err := jobs.Jobs(c.Request().Context(), currentUser(c), f, limit, cursor)
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
