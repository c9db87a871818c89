// Package httperr carries HTTP errors from handlers to one central Echo error
// handler, which renders them with a service-specific body.
//
// Handlers return errors; they never write error bodies themselves. The
// central handler classifies every error exactly once: an *Error is used as
// it is, an *echo.HTTPError (routing 404/405, body limit 413, binder 400) is
// turned into an *Error, and anything else goes through the service's
// classify function, which maps domain sentinels to statuses. Errors that
// stay unclassified become 500 with a generic message. Every 5xx but 503
// (internal errors and upstream failures) is logged once at ERROR level
// with its full chain, URLs removed (NewHandler).
package httperr

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// FieldError describes one invalid input field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an error with everything needed to answer an HTTP request.
//
// Message is shown to the client, so it must never contain secrets or
// internal details; Err is the underlying cause, kept for logs and errors.Is.
type Error struct {
	Status  int
	Code    string
	Message string
	Fields  []FieldError
	Err     error
}

// New returns an *Error with the given status and message and the default
// code for the status.
func New(status int, message string) *Error {
	return &Error{Status: status, Code: CodeForStatus(status), Message: message}
}

// Newf is New with a format string.
func Newf(status int, format string, args ...any) *Error {
	return New(status, fmt.Sprintf(format, args...))
}

// Wrap returns an *Error that answers with status and message and keeps err
// as its cause.
func Wrap(err error, status int, message string) *Error {
	return &Error{Status: status, Code: CodeForStatus(status), Message: message, Err: err}
}

// WithCode returns a copy of e with its machine-readable code replaced.
func (e *Error) WithCode(code string) *Error {
	c := *e
	c.Code = code
	return &c
}

// WithFields returns a copy of e carrying field errors.
func (e *Error) WithFields(fields ...FieldError) *Error {
	c := *e
	c.Fields = append([]FieldError(nil), fields...)
	return &c
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// BodyError is a request body that could not be read for the client's
// fault: a malformed chunk, a body shorter than its Content-Length, a body
// that stopped arriving. Guarded request bodies (shared/reqbody) return it
// from Read; Classify answers it 400 whatever a handler wrapped it in, so
// that how a body-read failure is answered is decided here, once, for
// every handler of both services (decisions.md, "Both services: hostile
// input answered, never a 5xx"), and NewHandler closes the connection
// after the answer: its framing can no longer be trusted.
type BodyError struct {
	Err error // the read's own error (io.ErrUnexpectedEOF, a chunk error, a timeout)
}

// Error implements error.
func (e *BodyError) Error() string { return "request body: " + e.Err.Error() }

// Unwrap returns the read's error.
func (e *BodyError) Unwrap() error { return e.Err }

// Timeout reports whether the body stopped arriving (the server's read
// deadline passed) rather than arriving malformed.
func (e *BodyError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.Err, &t) && t.Timeout()
}

// message is what the client is told: the kind of fault, not the reader's
// internals.
func (e *BodyError) message() string {
	switch {
	case e.Timeout():
		return "the request body stopped arriving before it was complete"
	case errors.Is(e.Err, io.ErrUnexpectedEOF):
		return "the request body ended before it was complete (shorter than its Content-Length, or a chunk cut off)"
	default:
		return "the request body could not be read: malformed chunked encoding"
	}
}

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var he *Error
	if errors.As(err, &he) {
		return he
	}
	return nil
}

// CodeForStatus returns the machine-readable code used for a status when no
// more specific code applies.
func CodeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "BAD_REQUEST"
	case http.StatusUnauthorized:
		return "UNAUTHORIZED"
	case http.StatusForbidden:
		return "FORBIDDEN"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusMethodNotAllowed:
		return "METHOD_NOT_ALLOWED"
	case http.StatusConflict:
		return "CONFLICT"
	case http.StatusRequestEntityTooLarge:
		return "PAYLOAD_TOO_LARGE"
	case http.StatusUnsupportedMediaType:
		return "UNSUPPORTED_MEDIA_TYPE"
	case http.StatusUnprocessableEntity:
		return "UNPROCESSABLE_ENTITY"
	case http.StatusTooManyRequests:
		return "RATE_LIMITED"
	case http.StatusServiceUnavailable:
		return "SERVICE_UNAVAILABLE"
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return "UPSTREAM_ERROR"
	}
	if status >= 500 {
		return "INTERNAL_ERROR"
	}
	return "BAD_REQUEST"
}
