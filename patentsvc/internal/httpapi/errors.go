package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/shared/httperr"
)

// statusTable maps domain errors to responses, walked in order with
// errors.Is (so ErrUnknownModel, which wraps ErrInvalid, comes first).
// Whatever matches nothing is a 500 with a generic message.
var statusTable = []struct {
	err     error
	status  int
	message string // empty: the error's own text
}{
	{patent.ErrUnknownModel, http.StatusBadRequest, ""},
	{patent.ErrInvalid, http.StatusUnprocessableEntity, ""},
	{patent.ErrNotFound, http.StatusNotFound, ""},
	{patent.ErrForbidden, http.StatusForbidden, ""},
	{patent.ErrConflict, http.StatusConflict, ""},
	{patent.ErrLastAdmin, http.StatusBadRequest, "The last admin cannot be removed or demoted"},
	{patent.ErrSelfDelete, http.StatusBadRequest, "Admins cannot delete their own account"},
	{auth.ErrBadCredentials, http.StatusUnauthorized, "Invalid email or password"},
	{auth.ErrInvalidToken, http.StatusUnauthorized, "Could not validate credentials"},
	{patent.ErrLLMUpstream, http.StatusBadGateway, ""},
	{patent.ErrPDFEngine, http.StatusServiceUnavailable, "PDF engine unavailable: poppler is not installed on this server"},
	{patent.ErrTooManyJobs, http.StatusTooManyRequests, ""}, // *patent.TooManyJobsError: render adds Retry-After
}

func classify(err error) *httperr.Error {
	for _, row := range statusTable {
		if errors.Is(err, row.err) {
			msg := row.message
			if msg == "" {
				msg = err.Error()
			}
			return &httperr.Error{Status: row.status, Message: msg, Err: err}
		}
	}
	return nil
}

// errorBody is the service's error body (decisions.md): {"detail"}, with
// the invalid fields for a 422, and the company's current state for a 409
// on POST /admin/tracked (docs/patentsvc.md).
type errorBody struct {
	Detail  string               `json:"detail"`
	Errors  []httperr.FieldError `json:"errors,omitempty"`
	Tracked *trackedJSON         `json:"tracked,omitempty"`
}

func render(c echo.Context, e *httperr.Error) error {
	if e.Status == http.StatusUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, "Bearer")
	}
	var full *patent.TooManyJobsError
	if errors.As(e.Err, &full) {
		c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(full.RetryAfterSeconds()))
	}
	body := errorBody{Detail: e.Message, Errors: e.Fields}
	var dup *patent.AlreadyTrackedError
	if errors.As(e.Err, &dup) {
		t := fromTracked(dup.Tracked)
		body.Tracked = &t
	}
	return c.JSON(e.Status, body)
}

// invalid is a 422 naming the field that broke a rule.
func invalid(field string, err error) *httperr.Error {
	msg := err.Error()
	return httperr.Wrap(err, http.StatusUnprocessableEntity, msg).WithFields(httperr.FieldError{Field: field, Message: msg})
}
