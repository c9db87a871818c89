package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/httperr"
)

// Paging limits of the alert list.
const (
	alertLimitDefault = 50
	alertLimitMax     = 200
)

func isConflict(err error) bool { return errors.Is(err, patent.ErrConflict) }

// companyParam reads and validates the company_name path parameter (422 on
// a bad name). Echo routes on the decoded path, except when the URL needed
// a non-default escaping (then it routes on the raw path and the parameter
// is still escaped): decode exactly once.
func companyParam(c echo.Context) (patent.CompanyName, error) {
	raw := c.Param("company_name")
	if c.Request().URL.RawPath != "" {
		var err error
		if raw, err = url.PathUnescape(raw); err != nil {
			return "", invalid("company_name", patent.Invalidf("company name is not a valid path segment"))
		}
	}
	name, err := patent.ParseCompanyName(raw)
	if err != nil {
		return "", invalid("company_name", err)
	}
	return name, nil
}

// Tracking is the tracked companies as admins see them;
// *tracking.Service implements it.
type Tracking interface {
	Tracked(ctx context.Context) ([]patent.TrackedCompany, error)
	// Track returns a *patent.AlreadyTrackedError (a kind of
	// patent.ErrConflict) for a company tracked already.
	Track(ctx context.Context, name patent.CompanyName) (patent.TrackedCompany, error)
	// Untrack returns patent.ErrNotFound for a company not tracked.
	Untrack(ctx context.Context, name patent.CompanyName) error
	// History returns patent.ErrNotFound for a company not tracked.
	History(ctx context.Context, name patent.CompanyName, days int) (patent.TrackedCompany, []patent.TrackingRun, error)
	Alerts(ctx context.Context, limit int) ([]patent.Alert, error)
	// Changes looks back tracking.ChangesWindow when since is the zero
	// time.
	Changes(ctx context.Context, since time.Time, limit int, after string) ([]patent.PatentChangeRun, string, error)
}

func handleListTracked(tr Tracking) echo.HandlerFunc {
	return func(c echo.Context) error {
		list, err := tr.Tracked(c.Request().Context())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, mapSlice(list, fromTracked))
	}
}

type trackRequest struct {
	CompanyName *string `json:"company_name"`
}

// handleCreateTracked tracks a company, its first run queued with it for
// any replica to run at once (decisions.md: due as soon as it is tracked).
// Tracking a company tracked already is 409
// with its current state (the error body's tracked, added by render).
func handleCreateTracked(tr Tracking) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req trackRequest
		if err := decodeJSON(c, &req); err != nil {
			return err
		}
		if req.CompanyName == nil {
			return invalid("company_name", patent.Invalidf("company_name is required"))
		}
		name, err := patent.ParseCompanyName(*req.CompanyName)
		if err != nil {
			return invalid("company_name", err)
		}
		t, err := tr.Track(c.Request().Context(), name)
		if isConflict(err) {
			return httperr.Wrap(err, http.StatusConflict, fmt.Sprintf("Company %s is already tracked", name))
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, fromTracked(t))
	}
}

func handleDeleteTracked(tr Tracking) echo.HandlerFunc {
	return func(c echo.Context) error {
		name, err := companyParam(c)
		if err != nil {
			return err
		}
		err = tr.Untrack(c.Request().Context(), name)
		if errors.Is(err, patent.ErrNotFound) {
			return httperr.Wrap(err, http.StatusNotFound, fmt.Sprintf("Company %s is not tracked", name))
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, messageJSON{Message: fmt.Sprintf("Stopped tracking %s", name)})
	}
}

// History window of GET /admin/tracked/{company_name}/history, in days
// (decisions.md, "The analyst's report").
const (
	historyDaysMin     = 1
	historyDaysMax     = 3650
	historyDaysDefault = 365
)

type historyPointJSON struct {
	RunAt          time.Time `json:"run_at"`
	PatentCount    *int      `json:"patent_count"` // null: the run's search failed
	Success        bool      `json:"success"`
	Alert          bool      `json:"alert"`
	NewPatents     []string  `json:"new_patents"`
	DroppedPatents []string  `json:"dropped_patents"`
}

func fromTrackingRun(r patent.TrackingRun) historyPointJSON {
	return historyPointJSON{RunAt: r.RunAt, PatentCount: r.PatentCount, Success: r.Success, Alert: r.Alert,
		NewPatents: nonNil(r.NewPatents), DroppedPatents: nonNil(r.DroppedPatents)}
}

// nonNil is ids, or [] for none (an empty list is [] on the wire).
func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// changesWindowDefault is how far back GET /admin/changes looks when
// since is not given (decisions.md).
type changeJSON struct {
	CompanyName    string            `json:"company_name"`
	RunAt          time.Time         `json:"run_at"`
	NewPatents     []publicationJSON `json:"new_patents"`
	DroppedPatents []string          `json:"dropped_patents"`
}

func fromChangeRun(r patent.PatentChangeRun) changeJSON {
	return changeJSON{CompanyName: r.CompanyName, RunAt: r.RunAt, NewPatents: mapSlice(r.Changes.New, fromPublication),
		DroppedPatents: nonNil(r.Changes.Dropped)}
}

// handleListChanges serves GET /admin/changes?since=&limit=&cursor=: the
// digest of what tracking found, every tracked company's runs since since
// (RFC 3339; default 7 days ago) that found new or dropped patents,
// newest first, keyset-paged as the other listings (limit 1 to 200,
// default 50). A since that is not RFC 3339 is 422.
func handleListChanges(tr Tracking) echo.HandlerFunc {
	return func(c echo.Context) error {
		var since time.Time // the core's window
		if v := c.QueryParam("since"); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return invalid("since", errors.New("since must be an RFC 3339 date and time, e.g. 2026-11-20T00:00:00Z"))
			}
			since = t
		}
		limit, cursor, err := pageParams(c)
		if err != nil {
			return err
		}
		items, next, err := tr.Changes(c.Request().Context(), since, limit, cursor)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, pageJSON[changeJSON]{Items: mapSlice(items, fromChangeRun), NextCursor: nullable(next)})
	}
}

// handleTrackedHistory serves GET /admin/tracked/{company_name}/history?days=
// (1 to 3650, default 365): the company's scheduled runs of the last days,
// oldest first, under its name as first written. An untracked company is
// 404, as DELETE answers; a bad name or days 422. The runs kept go back
// TRACKING_HISTORY_DAYS at most, whatever days asks.
func handleTrackedHistory(tr Tracking) echo.HandlerFunc {
	return func(c echo.Context) error {
		name, err := companyParam(c)
		if err != nil {
			return err
		}
		days, err := daysParam(c, historyDaysMin, historyDaysMax, historyDaysDefault)
		if err != nil {
			return err
		}
		tc, runs, err := tr.History(c.Request().Context(), name, days)
		if errors.Is(err, patent.ErrNotFound) {
			return httperr.Wrap(err, http.StatusNotFound, fmt.Sprintf("Company %s is not tracked", name))
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, struct {
			CompanyName string             `json:"company_name"`
			Points      []historyPointJSON `json:"points"`
		}{tc.CompanyName, mapSlice(runs, fromTrackingRun)})
	}
}

func handleListAlerts(tr Tracking) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit := int64(alertLimitDefault)
		if v := c.QueryParam("limit"); v != "" {
			var err error
			if limit, err = intParam("limit", v, 1, alertLimitMax); err != nil {
				return err
			}
		}
		alerts, err := tr.Alerts(c.Request().Context(), int(limit))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, mapSlice(alerts, fromAlert))
	}
}

type rateLimitJSON struct {
	Endpoint         string `json:"endpoint"`
	Limit            string `json:"limit"`
	TotalRequests    int64  `json:"total_requests"`
	RejectedRequests int64  `json:"rejected_requests"`
}

// handleRateLimits shows the windows' counters: the cluster's, from the
// database, when the windows are shared; the process's otherwise.
func handleRateLimits(limits Limits) echo.HandlerFunc {
	return func(c echo.Context) error {
		var out []rateLimitJSON
		for _, w := range limits.Windows() {
			s, err := w.Stats(c.Request().Context())
			if err != nil {
				return err
			}
			out = append(out, rateLimitJSON{Endpoint: s.Endpoint, Limit: s.Limit, TotalRequests: s.TotalRequests, RejectedRequests: s.RejectedRequests})
		}
		return c.JSON(http.StatusOK, struct {
			RateLimits []rateLimitJSON `json:"rate_limits"`
		}{out})
	}
}

func handleListUsers(users Users) echo.HandlerFunc {
	return func(c echo.Context) error {
		list, err := users.Users(c.Request().Context())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, mapSlice(list, fromUser))
	}
}

type roleRequest struct {
	Role *string `json:"role"`
}

func userIDParam(c echo.Context) (int64, error) {
	return intParam("user_id", c.Param("user_id"), 1, 1<<62)
}

func handleSetRole(users Users) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := userIDParam(c)
		if err != nil {
			return err
		}
		var req roleRequest
		if err := decodeJSON(c, &req); err != nil {
			return err
		}
		if req.Role == nil {
			return invalid("role", patent.Invalidf("role is required"))
		}
		role, err := patent.ParseRole(*req.Role)
		if err != nil {
			return invalid("role", err)
		}
		u, err := users.SetRole(c.Request().Context(), id, role)
		if errors.Is(err, patent.ErrNotFound) {
			return httperr.Wrap(err, http.StatusNotFound, fmt.Sprintf("User %d not found", id))
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, fromUser(u))
	}
}

func handleDeleteUser(users Users) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := userIDParam(c)
		if err != nil {
			return err
		}
		err = users.DeleteUser(c.Request().Context(), currentUser(c).ID, id)
		if errors.Is(err, patent.ErrNotFound) {
			return httperr.Wrap(err, http.StatusNotFound, fmt.Sprintf("User %d not found", id))
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, messageJSON{Message: fmt.Sprintf("User %d deleted", id)})
	}
}
