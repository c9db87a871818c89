package pdfstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// ErrNotFound is returned by Open when no PDF is stored for the patent. It
// is a kind of patent.ErrNotFound.
var ErrNotFound = patent.NewKindError(patent.ErrNotFound, "pdf not in storage")

// ErrInvalidKey is returned when a patent id breaks the patent-id pattern
// and so cannot name a stored object.
var ErrInvalidKey = errors.New("invalid patent id for a storage key")

// Backend keeps downloaded patent PDFs. Local and S3 implement it.
type Backend interface {
	// Put stores the PDF of patentID atomically (readers never see a
	// partial file) and returns the location recorded as the patent's
	// pdf_path ("local:<relative path>" or "s3://bucket/key"). It returns
	// ErrInvalidKey for an id that breaks the pattern, or the reader's
	// error, in which case nothing is stored.
	Put(ctx context.Context, patentID string, r io.Reader) (string, error)
	// Open returns the stored PDF, which the caller closes. It returns
	// ErrNotFound if none is stored and ErrInvalidKey for a bad id.
	Open(ctx context.Context, patentID string) (io.ReadCloser, error)
	// Exists reports whether the PDF is stored. It returns ErrInvalidKey
	// for a bad id.
	Exists(ctx context.Context, patentID string) (bool, error)
	// Check verifies the backend answers (for readiness; a stat of the
	// directory, a HeadBucket).
	Check(ctx context.Context) error
}

var (
	_ Backend = (*Local)(nil)
	_ Backend = (*S3)(nil)
)

// CheckTimeout bounds the start-up check of the backend (Check).
const CheckTimeout = 10 * time.Second

// keyPrefix is the folder (local) or key prefix (S3) holding the PDFs.
const keyPrefix = "patents"

// Key returns the storage key of patentID, "patents/<ID>.pdf". The id is
// validated, never cleaned: anything outside ^[A-Z]{2}[A-Z0-9]{1,20}$
// returns ErrInvalidKey, so a key is never a path taken from user input.
func Key(patentID string) (string, error) {
	// The patent-id rule of decisions.md ("it is used in storage keys"):
	// no dot, slash or lower case can reach a path or key.
	if _, err := patent.ParsePatentID(patentID); err != nil {
		// %q is safe: the value is bounded by what callers pass, and it
		// helps tell a lower-case id from a path.
		return "", fmt.Errorf("%w: %.40q", ErrInvalidKey, patentID)
	}
	return keyPrefix + "/" + patentID + ".pdf", nil
}

// ctxReader stops a copy once its context is done, so a Put from a slow
// reader honours cancellation.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
