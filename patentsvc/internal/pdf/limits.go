package pdf

import (
	"errors"
	"fmt"
	"io"
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
	// MaxDecoded is the most bytes the document's streams may decompress
	// to, added up over every read (a content stream shared by 500 pages
	// counts 500 times; an object stream counts each time the library
	// decompresses it again to resolve an object in it), with the pixels
	// of the images decoded for OCR.
	MaxDecoded int64
}

// DefaultLimits are the settings' defaults.
var DefaultLimits = Limits{Timeout: 30 * time.Second, MaxPages: 500, MaxDecoded: 200 << 20}

// String names the limits, with the extractor's own bounds, as a verdict
// stored with a PDF records them (the verdict is reused only under the
// same limits: a release that changes a bound reads the document again).
func (l Limits) String() string {
	return fmt.Sprintf("timeout=%s pages=%d decoded=%dMiB spans=%d text=%dMiB", l.Timeout, l.MaxPages, l.MaxDecoded>>20, maxSpans, maxTextBytes>>20)
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

func tooMuchData(max int64) *LimitError {
	return &LimitError{Reason: fmt.Sprintf("its streams decompress to more than %d MiB", max>>20)}
}

// errOverBudget is the read error of a stream once the document's
// decompressed bytes pass the budget; the library turns it into a panic
// (as any read error), which the extractor recovers and reports as the
// budget's LimitError.
var errOverBudget = errors.New("decompressed bytes over the document's budget")

// budget counts the bytes a document's streams decompress to. One budget
// serves one reading of one document, in one goroutine at a time.
type budget struct {
	max, used int64
	over      bool
}

func newBudget(max int64) *budget { return &budget{max: max} }

// wrap makes r count what it reads against the budget: the library's hook
// on every stream it decodes (lpdf.NewReaderWith).
func (b *budget) wrap(r io.Reader) io.Reader { return &counted{r: r, b: b} }

// charge counts n bytes decoded outside the library (an image's pixels)
// and returns errOverBudget past the budget.
func (b *budget) charge(n int64) error {
	b.used += n
	if b.used > b.max {
		b.over = true
		return errOverBudget
	}
	return nil
}

// exceeded is the budget's LimitError once it has been passed, else nil.
func (b *budget) exceeded() error {
	if b == nil || !b.over {
		return nil
	}
	return tooMuchData(b.max)
}

type counted struct {
	r io.Reader
	b *budget
}

func (c *counted) Read(p []byte) (int, error) {
	if c.b.over {
		return 0, errOverBudget
	}
	n, err := c.r.Read(p)
	if cerr := c.b.charge(int64(n)); cerr != nil {
		return n, cerr
	}
	return n, err
}
