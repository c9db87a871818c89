package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// Error codes of the Error body (decisions.md, "Wire contract").
const (
	codeBadRequest = "BAD_REQUEST"
	codeInvalidVIN = "INVALID_VIN"
	codeForbidden  = "FORBIDDEN"
	codeRateLimit  = "RATE_LIMITED"
	codeUpstream   = "UPSTREAM_ERROR"
	codeNoSnapshot = "SNAPSHOT_UNAVAILABLE"
)

// statusTable maps domain errors to responses, walked in order with
// errors.Is. Whatever matches nothing is a 500 INTERNAL_ERROR.
var statusTable = []struct {
	err     error
	status  int
	code    string
	message string // empty: the error's own text
}{
	{vin.ErrInvalid, http.StatusBadRequest, codeInvalidVIN, ""},
	{vin.ErrNoSnapshot, http.StatusServiceUnavailable, codeNoSnapshot, ""},
	{vin.ErrUpstream, http.StatusInternalServerError, codeUpstream, "the vehicle data upstream failed or answered garbage; try again later"},
	{context.DeadlineExceeded, http.StatusInternalServerError, codeUpstream, "the vehicle data upstream did not answer in time; try again later"},
}

func classify(err error) *httperr.Error {
	for _, row := range statusTable {
		if errors.Is(err, row.err) {
			msg := row.message
			if msg == "" {
				msg = err.Error()
			}
			return &httperr.Error{Status: row.status, Code: row.code, Message: msg, Err: err}
		}
	}
	return nil
}

// errorBody is the spec's Error body.
type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

func render(c echo.Context, e *httperr.Error) error {
	return c.JSON(e.Status, errorBody{Error: e.Code, Message: e.Message, Status: e.Status})
}

func badRequest(format string, args ...any) *httperr.Error {
	return httperr.Newf(http.StatusBadRequest, format, args...).WithCode(codeBadRequest)
}
