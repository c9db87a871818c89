package patent

import (
	"errors"
	"fmt"
)

// Sentinel errors, wrapped with context by the packages that return them
// and mapped to HTTP statuses once, in httpapi.
var (
	// ErrNotFound: the thing asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrForbidden: the caller may not do this (a user asking for another
	// user's data where the contract says 403).
	ErrForbidden = errors.New("forbidden")
	// ErrConflict: the thing to create exists already.
	ErrConflict = errors.New("already exists")
	// ErrInvalid: input breaks a rule (the error says which).
	ErrInvalid = errors.New("invalid")
	// ErrLastAdmin: the change would leave no admin.
	ErrLastAdmin = errors.New("the last admin cannot be removed or demoted")
	// ErrSelfDelete: an admin tried to delete their own account.
	ErrSelfDelete = errors.New("admins cannot delete their own account")
	// ErrTokenReplayed: a refresh token was presented a second time.
	ErrTokenReplayed = errors.New("refresh token already used")
	// ErrPDFNotFound: a patent's PDF is neither stored nor reachable through
	// an allowed link.
	ErrPDFNotFound = errors.New("patent PDF not found")
	// ErrPDFUnreadable: a patent's PDF has no usable text (scanned without a
	// text layer, or malformed).
	ErrPDFUnreadable = errors.New("patent PDF has no readable text")
	// ErrPDFOverLimit: a patent's PDF is past one of the bounds on what
	// reading a document may cost (PDF_EXTRACT_TIMEOUT, PDF_MAX_PAGES,
	// PDF_MAX_DECODED_MB), so it is not read; the error's text says which
	// ("document not read: more than 500 pages").
	ErrPDFOverLimit = errors.New("document not read")
	// ErrPDFEngine: the PDF engine (poppler's programs) is not installed,
	// so no PDF can be read: a fault of the deployment, not of the
	// document, and no verdict on it.
	ErrPDFEngine = errors.New("pdf engine unavailable")
	// ErrLLMUpstream: the language-model gateway failed, refused the request
	// or answered something that is not an answer.
	ErrLLMUpstream = errors.New("language model gateway failed")
	// ErrTooManyJobs: the user has as many unfinished jobs as one may have
	// (JOBS_MAX_PER_USER); *TooManyJobsError says how many and when to
	// retry.
	ErrTooManyJobs = errors.New("too many unfinished jobs")
)

// NotOCRedError says why a PDF without a text layer was not read by OCR
// instead (decisions.md, PDF_OCR): OCR is off, the tesseract program is
// missing, OCR failed or found too little text. It travels with
// ErrPDFUnreadable, and its Reason is fit to show a client.
type NotOCRedError struct {
	Reason string
}

func (e *NotOCRedError) Error() string { return e.Reason }

// NewKindError returns an error that reads as msg and matches kind under
// errors.Is. Adapters declare their own sentinels with it (pdfstore's
// ErrNotFound is a kind of ErrNotFound, llm's ErrUpstream a kind of
// ErrLLMUpstream), so the core and the HTTP layer test for the domain kind
// without importing the adapter, and the adapter's tests keep their own
// precise sentinel.
func NewKindError(kind error, msg string) error {
	return &kindError{msg: msg, kind: kind}
}

type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

// Invalidf returns an error that wraps ErrInvalid and reads as the message
// alone, fit to show a client ("password must be 8 to 72 bytes").
func Invalidf(format string, args ...any) error {
	return NewKindError(ErrInvalid, fmt.Sprintf(format, args...))
}
