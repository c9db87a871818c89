package vpicdb

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	// The pure-Go SQLite driver (modernc.org/sqlite underneath) that
	// patentsvc's GORM dialect already uses; it registers as "sqlite".
	_ "github.com/glebarez/go-sqlite"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// ErrMissing is returned by Open when the snapshot file does not exist.
var ErrMissing = errors.New("vpicdb: snapshot file not found")

// ErrCorrupt is returned by Open when the file is not a readable SQLite
// database: not SQLite at all, truncated, or failing while it is read.
var ErrCorrupt = errors.New("vpicdb: snapshot is not a readable sqlite database")

// ErrSchema is returned by Open when the file is SQLite but lacks tables or
// columns the decoder needs; the error names them.
var ErrSchema = errors.New("vpicdb: snapshot lacks tables or columns the decoder needs")

// ErrUnknownWMI is returned by Decode when the snapshot does not know the
// VIN's WMI (or vPIC would not publish it yet): the snapshot must not
// answer for it. It is of the domain kind vin.ErrUpstream, so the request
// fails as if vPIC had failed.
var ErrUnknownWMI = vin.NewKindError(vin.ErrUpstream, "wmi not in the vPIC snapshot")

// DB decodes VINs against a vPIC snapshot held in memory. It is safe for
// concurrent use; Decode never touches the file.
type DB struct {
	snap *snapshot
	// now is the clock of vPIC's year rules (model-year window, public
	// availability of a WMI); tests replace it.
	now func() time.Time
}

// Open reads the vPIC lite SQLite database at path, read-only, and loads
// what decoding needs into memory in one pass over each table, so a decode
// never queries SQLite. The file is closed again before Open returns.
//
// Open returns an error wrapping ErrMissing when the file does not exist,
// ErrCorrupt when it is not a readable SQLite database, ErrSchema (naming
// what is missing) when its tables do not fit, or ctx's error. It never
// panics on a bad file.
func Open(ctx context.Context, path string, logger *slog.Logger) (*DB, error) {
	start := time.Now()
	if err := checkFile(path); err != nil {
		return nil, err
	}
	snap, err := loadFile(ctx, path)
	if err != nil {
		return nil, err
	}
	// Reading 800k rows through the driver leaves about 90 MB of garbage;
	// hand it back to the OS now rather than over the next minutes, so the
	// service's resident size is the snapshot's (doc.go has the figures).
	debug.FreeOSMemory()
	db := &DB{snap: snap, now: time.Now}
	logger.InfoContext(ctx, "vpic snapshot loaded",
		"path", path,
		"date", snap.date.Format(time.DateOnly),
		"wmis", len(snap.wmis),
		"patterns", len(snap.patterns),
		"load_ms", time.Since(start).Milliseconds())
	return db, nil
}

// Date returns the snapshot's date: the newest CreatedOn or UpdatedOn any
// of its tables holds (vPIC's timestamps carry no zone; they are read as
// UTC).
func (db *DB) Date() time.Time { return db.snap.date }

// Close releases the snapshot. The file itself was closed by Open; Close
// always returns nil and may be called more than once.
func (db *DB) Close() error { return nil }

// checkFile tells a missing file from one that cannot be a SQLite database
// before the driver sees it: SQLite treats an empty file as an empty
// database, and reports a truncated one only when it reads the missing
// pages.
func checkFile(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s", ErrMissing, path)
	case err != nil:
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	case st.IsDir():
		return fmt.Errorf("%w: %s is a directory", ErrCorrupt, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	defer f.Close()
	var hdr [100]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return fmt.Errorf("%w: %s: shorter than a sqlite header", ErrCorrupt, path)
	}
	if msg := checkHeader(hdr, st.Size()); msg != "" {
		return fmt.Errorf("%w: %s: %s", ErrCorrupt, path, msg)
	}
	return nil
}

// checkHeader checks the 100-byte SQLite header against the file size
// (https://www.sqlite.org/fileformat.html#the_database_header) and says
// what is wrong, or "" when nothing is.
func checkHeader(hdr [100]byte, size int64) string {
	if string(hdr[:16]) != "SQLite format 3\x00" {
		return "not a sqlite file"
	}
	pageSize := int64(binary.BigEndian.Uint16(hdr[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return "bad page size"
	}
	// The page count is valid when the "version valid for" number equals
	// the change counter.
	pages := int64(binary.BigEndian.Uint32(hdr[28:32]))
	if binary.BigEndian.Uint32(hdr[92:96]) == binary.BigEndian.Uint32(hdr[24:28]) && pages > 0 && size < pages*pageSize {
		return fmt.Sprintf("truncated: %d bytes of %d", size, pages*pageSize)
	}
	if size%pageSize != 0 {
		return "truncated: not a whole number of pages"
	}
	return ""
}

// loadFile opens the file read-only and immutable (no locks, no journal;
// the snapshot never changes under a running service) and loads it. A
// panic in the driver on a damaged file becomes ErrCorrupt.
func loadFile(ctx context.Context, path string) (snap *snapshot, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	// SQLite URI filename: escape what would end the path.
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(abs)) + "?mode=ro&immutable=1"
	sqldb, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	defer sqldb.Close()
	sqldb.SetMaxOpenConns(1)
	defer func() {
		if r := recover(); r != nil {
			snap, err = nil, fmt.Errorf("%w: %s: driver panic: %v", ErrCorrupt, path, r)
		}
	}()
	snap, err = load(ctx, sqldb)
	switch {
	case err == nil:
		return snap, nil
	case errors.Is(err, ErrSchema), errors.Is(err, ErrCorrupt):
		return nil, fmt.Errorf("%s: %w", path, err)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
}
