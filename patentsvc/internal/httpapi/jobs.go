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
	ListJobs(ctx context.Context, status string, limit int, after string) ([]patent.Job, string, error)
}

// handleJob serves GET /jobs/{job_id}.
func handleJob(st JobStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("job_id")
		j, err := st.Job(c.Request().Context(), id)
		if errors.Is(err, patent.ErrNotFound) {
			return httperr.Wrap(err, http.StatusNotFound, fmt.Sprintf("Job %s not found", truncate(id, 64)))
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, fromJob(j))
	}
}

// handleListJobs serves GET /jobs?status=&limit=&cursor=.
func handleListJobs(st JobStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit, cursor, err := pageParams(c)
		if err != nil {
			return err
		}
		status := c.QueryParam("status")
		if status != "" {
			if _, err := patent.ParseJobStatus(status); err != nil {
				return invalid("status", err)
			}
		}
		items, next, err := st.ListJobs(c.Request().Context(), status, limit, cursor)
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
