package pdfstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	// dirMode and fileMode keep PDFs readable by the service's group only.
	dirMode  = 0o750
	fileMode = 0o640

	// tempSuffix marks files being written; they never match a key.
	tempSuffix = ".tmp"
	// staleTemp is the age after which NewLocal deletes a temp file left by
	// a crashed writer. It is far longer than any write, so a live writer
	// in another process sharing the directory is never disturbed.
	staleTemp = time.Hour
)

// Local keeps PDFs as files under a directory (STORAGE_BACKEND=local).
type Local struct {
	dir string // the storage root; files live in dir/patents
}

// NewLocal returns a Local rooted at dir, creating dir and its patents
// folder (mode 0o750) when missing. It removes temp files that crashed
// writers left behind more than an hour ago.
func NewLocal(dir string) (*Local, error) {
	if dir == "" {
		return nil, errors.New("local storage: empty directory")
	}
	l := &Local{dir: filepath.Clean(dir)}
	if err := os.MkdirAll(l.folder(), dirMode); err != nil {
		return nil, fmt.Errorf("local storage: create directory: %w", err)
	}
	l.removeStaleTemps(time.Now())
	return l, nil
}

// Dir returns the storage root that pdf_path locations are relative to.
func (l *Local) Dir() string { return l.dir }

func (l *Local) folder() string { return filepath.Join(l.dir, keyPrefix) }

// path returns the file of patentID. Key has validated the id, so the
// result always lies inside l.dir; the IsLocal check is a second guard.
func (l *Local) path(patentID string) (key, path string, err error) {
	key, err = Key(patentID)
	if err != nil {
		return "", "", err
	}
	rel := filepath.FromSlash(key)
	if !filepath.IsLocal(rel) {
		return "", "", fmt.Errorf("%w: %q", ErrInvalidKey, patentID)
	}
	return key, filepath.Join(l.dir, rel), nil
}

// Put writes the PDF to a temp file in the same folder, syncs it, and
// renames it over the final name, so readers see either the old file or
// the complete new one. On any error the temp file is removed and the old
// file, if any, stays. Concurrent Puts of one id each write their own temp
// file; the last rename wins with a complete file.
func (l *Local) Put(ctx context.Context, patentID string, r io.Reader) (string, error) {
	key, final, err := l.path(patentID)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(final), "."+patentID+".*"+tempSuffix)
	if err != nil {
		return "", fmt.Errorf("local put %s: %w", key, err)
	}
	tmp := f.Name()
	if err := writeFile(ctx, f, r); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return "", fmt.Errorf("local put %s: %w", key, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("local put %s: %w", key, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("local put %s: %w", key, err)
	}
	// Make the rename itself durable. A failure here leaves a complete
	// file in place, so it is not reported as a failed Put.
	syncDir(filepath.Dir(final))
	return "local:" + key, nil
}

// writeFile fills f from r and flushes it to disk.
func writeFile(ctx context.Context, f *os.File, r io.Reader) error {
	// CreateTemp makes 0o600 files; Chmod is not subject to the umask.
	if err := f.Chmod(fileMode); err != nil {
		return err
	}
	if _, err := io.Copy(f, ctxReader{ctx: ctx, r: r}); err != nil {
		return err
	}
	return f.Sync()
}

func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// Open returns the stored file, or ErrNotFound.
func (l *Local) Open(ctx context.Context, patentID string) (io.ReadCloser, error) {
	key, path, err := l.path(patentID)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("local open %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("local open %s: %w", key, err)
	}
	return f, nil
}

// Exists reports whether the file is stored.
func (l *Local) Exists(ctx context.Context, patentID string) (bool, error) {
	key, path, err := l.path(patentID)
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("local stat %s: %w", key, err)
	}
	return fi.Mode().IsRegular(), nil
}

// Check stats the patents folder; it fails when the directory is gone or
// is not a directory (e.g. an unmounted volume).
func (l *Local) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fi, err := os.Stat(l.folder())
	if err != nil {
		return fmt.Errorf("local storage check: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("local storage check: %s is not a directory", l.folder())
	}
	return nil
}

// removeStaleTemps deletes temp files older than staleTemp. Errors are
// ignored: a leftover temp file wastes space but is never read.
func (l *Local) removeStaleTemps(now time.Time) {
	entries, err := os.ReadDir(l.folder())
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, tempSuffix) {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(l.folder(), name))
		}
	}
}
