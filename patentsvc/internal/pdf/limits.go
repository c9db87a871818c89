package pdf

import (
	"fmt"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Limits bound what reading one document may cost (decisions.md, "work
// every replica shares, bounded and fair"): PDF_EXTRACT_TIMEOUT,
// PDF_MAX_PAGES and PDF_MAX_DECODED_MB. A document past one is not read:
// Extract returns a *LimitError.
type Limits struct {
	// Timeout bounds the whole reading, OCR included.
	Timeout time.Duration
	// MaxPages is the most pages a document may have (its page tree's
	// leaves, counted before any page is read).
	MaxPages int
	// MaxDecoded is the memory the engine may use for the document,
	// beyond its own (EngineBase): the address-space ceiling of each
	// program that reads it (decisions.md, "patentsvc: PDFs read by a
	// maintained engine"). What a document's streams decompress to is
	// held there, so this bounds them too, with its images rendered for
	// OCR.
	MaxDecoded int64
}

// DefaultLimits are the settings' defaults.
var DefaultLimits = Limits{Timeout: 30 * time.Second, MaxPages: 500, MaxDecoded: 200 << 20}

// String names the limits, with the extractor's own bounds, as a verdict
// stored with a PDF records them (the verdict is reused only under the
// same limits: a release that changes a bound reads the document again).
func (l Limits) String() string {
	return fmt.Sprintf("engine=poppler timeout=%s pages=%d decoded=%dMiB spans=%d text=%dMiB", l.Timeout, l.MaxPages, l.MaxDecoded>>20, maxSpans, maxTextBytes>>20)
}

// Bounds of our own on what a document may cost, beyond the three
// settings: they keep memory in hand on a page or a document of hostile
// text, and are far above what a patent holds (a dense page has a few
// thousand pieces of text, a 500-page patent a few megabytes).
const (
	// maxTextBytes is the most text a document may hold.
	maxTextBytes = 8 << 20
)

// LimitError is a document past one of its Limits (or maxTextBytes),
// which is not read. Its text, "document not read: " and the reason, is
// what the patent's entry in an analysis reports. It is a kind of
// patent.ErrPDFOverLimit and of patent.ErrPDFUnreadable.
type LimitError struct{ Reason string }

func (e *LimitError) Error() string { return "document not read: " + e.Reason }

// Is makes a LimitError match patent.ErrPDFOverLimit and
// patent.ErrPDFUnreadable.
func (e *LimitError) Is(target error) bool {
	return target == patent.ErrPDFOverLimit || target == patent.ErrPDFUnreadable
}

func tooManyPages(max int) *LimitError {
	return &LimitError{Reason: fmt.Sprintf("more than %d pages", max)}
}

func tooSlow(d time.Duration) *LimitError {
	return &LimitError{Reason: fmt.Sprintf("reading it took longer than %s", d)}
}

func tooMuchMemory(max int64) *LimitError {
	return &LimitError{Reason: fmt.Sprintf("reading it takes more than %d MiB of memory", max>>20)}
}
