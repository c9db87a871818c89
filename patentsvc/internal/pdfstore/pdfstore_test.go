package pdfstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gatewayapis/patentsvc/internal/pdfstore"
)

const testBucket = "pdfs"

func TestKey(t *testing.T) {
	for _, tt := range []struct {
		id      string
		want    string
		wantErr bool
	}{
		{id: "US10906193B2", want: "patents/US10906193B2.pdf"},
		{id: "WO2005102822A1", want: "patents/WO2005102822A1.pdf"},
		{id: "US1", want: "patents/US1.pdf"},
		{id: "US" + strings.Repeat("9", 20), want: "patents/US" + strings.Repeat("9", 20) + ".pdf"},
		{id: "", wantErr: true},
		{id: "U", wantErr: true},
		{id: "US", wantErr: true},
		{id: "us123", wantErr: true},
		{id: "US123b2", wantErr: true},
		{id: "12345", wantErr: true},
		{id: "../etc/passwd", wantErr: true},
		{id: "US1/../../x", wantErr: true},
		{id: "US1.pdf", wantErr: true},
		{id: "US1\x00", wantErr: true},
		{id: "US1\n", wantErr: true},
		{id: " US1", wantErr: true},
		{id: "US\\..\\X", wantErr: true},
		{id: "US" + strings.Repeat("9", 21), wantErr: true},
		{id: "US" + strings.Repeat("1", 28), wantErr: true}, // 30 chars
	} {
		t.Run(fmt.Sprintf("%q", tt.id), func(t *testing.T) {
			got, err := pdfstore.Key(tt.id)
			if tt.wantErr {
				if !errors.Is(err, pdfstore.ErrInvalidKey) {
					t.Fatalf("Key(%q) = %q, %v, want ErrInvalidKey", tt.id, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Key(%q) = %q, %v, want %q", tt.id, got, err, tt.want)
			}
		})
	}
}

// invalidIDs are ids that must never reach a path or key.
var invalidIDs = []string{"../etc/passwd", "US1/../../x", "us123", "", "US" + strings.Repeat("1", 28), "/abs", "US1/x"}

// backend is one Store under test with a way to list everything it wrote.
type backend struct {
	name string
	// open returns a fresh, empty store.
	open func(t *testing.T) (pdfstore.Backend, lister)
	// loc is the pdf_path Put returns for the key.
	loc func(key string) string
}

// lister returns every object the store holds, as keys relative to its
// root ("patents/US1.pdf"; "../x" for a file outside a local root), temp
// files included, sorted.
type lister func(t *testing.T) []string

func backends() []backend {
	return []backend{
		{
			name: "local",
			open: func(t *testing.T) (pdfstore.Backend, lister) {
				l, root, parent := mustLocal(t)
				return l, func(t *testing.T) []string { return listFiles(t, parent, root) }
			},
			loc: func(key string) string { return "local:" + key },
		},
		{
			name: "s3",
			open: func(t *testing.T) (pdfstore.Backend, lister) {
				s, f := mustS3(t, testBucket)
				return s, func(t *testing.T) []string { return listObjects(t, f) }
			},
			loc: func(key string) string { return "s3://" + testBucket + "/" + key },
		},
		{
			// The SDK's own defaults (CRC32 request checksums and
			// response validation), which NewS3 relaxes for custom
			// endpoints, still work against gofakes3 over plain HTTP.
			name: "s3-sdk-checksums",
			open: func(t *testing.T) (pdfstore.Backend, lister) {
				t.Setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "when_supported")
				t.Setenv("AWS_RESPONSE_CHECKSUM_VALIDATION", "when_supported")
				s, f := mustS3(t, testBucket)
				return s, func(t *testing.T) []string { return listObjects(t, f) }
			},
			loc: func(key string) string { return "s3://" + testBucket + "/" + key },
		},
	}
}

// mustLocal returns a Local rooted at parent/store, so files written
// outside the root show up when parent is listed.
func mustLocal(t *testing.T) (l *pdfstore.Local, root, parent string) {
	t.Helper()
	parent = t.TempDir()
	root = filepath.Join(parent, "store")
	l, err := pdfstore.NewLocal(root)
	if err != nil {
		t.Fatalf("NewLocal(%q) error: %v", root, err)
	}
	return l, root, parent
}

func listFiles(t *testing.T, parent, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatalf("walk %s: %v", parent, err)
	}
	slices.Sort(out)
	return out
}

// fakeS3 is an in-process gofakes3 server that remembers which checksum
// headers the SDK sent.
type fakeS3 struct {
	mem *s3mem.Backend
	url string

	mu        sync.Mutex
	checksums []string // "METHOD header", e.g. "PUT X-Amz-Checksum-Crc32"
}

func newFakeS3(t *testing.T) *fakeS3 {
	t.Helper()
	f := &fakeS3{mem: s3mem.New()}
	if err := f.mem.CreateBucket(testBucket); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	h := gofakes3.New(f.mem).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		for k := range r.Header {
			if strings.HasPrefix(k, "X-Amz-Checksum") || (k == "Content-Encoding" && r.Header.Get(k) == "aws-chunked") {
				f.checksums = append(f.checksums, r.Method+" "+k)
			}
		}
		f.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeS3) sentChecksums() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.checksums)
}

// mustS3 starts a fake S3 with testBucket created and returns a store for
// bucket built by NewS3, with the real SDK, pointed at it.
func mustS3(t *testing.T, bucket string) (*pdfstore.S3, *fakeS3) {
	t.Helper()
	setAWSEnv(t)
	f := newFakeS3(t)
	s, err := pdfstore.NewS3(context.Background(), bucket, f.url)
	if err != nil {
		t.Fatalf("NewS3(%q, %q) error: %v", bucket, f.url, err)
	}
	return s, f
}

// setAWSEnv gives the SDK static credentials and keeps it away from the
// developer's AWS files and the instance metadata service.
func setAWSEnv(t *testing.T) {
	t.Helper()
	none := filepath.Join(t.TempDir(), "absent")
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           "test-access-key",
		"AWS_SECRET_ACCESS_KEY":       "test-secret-key",
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  "eu-west-1",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             none,
		"AWS_SHARED_CREDENTIALS_FILE": none,
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_ENDPOINT_URL":            "",
		"AWS_ENDPOINT_URL_S3":         "",
	} {
		t.Setenv(k, v)
	}
}

func listObjects(t *testing.T, f *fakeS3) []string {
	t.Helper()
	l, err := f.mem.ListBucket(testBucket, nil, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatalf("ListBucket: %v", err)
	}
	var out []string
	for _, c := range l.Contents {
		out = append(out, c.Key)
	}
	slices.Sort(out)
	return out
}

func mustPut(t *testing.T, s pdfstore.Backend, id string, body []byte) string {
	t.Helper()
	loc, err := s.Put(context.Background(), id, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("Put(%q) error: %v", id, err)
	}
	return loc
}

func mustRead(t *testing.T, s pdfstore.Backend, id string) []byte {
	t.Helper()
	rc, err := s.Open(context.Background(), id)
	if err != nil {
		t.Fatalf("Open(%q) error: %v", id, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", id, err)
	}
	return b
}

func mustExist(t *testing.T, s pdfstore.Backend, id string) bool {
	t.Helper()
	ok, err := s.Exists(context.Background(), id)
	if err != nil {
		t.Fatalf("Exists(%q) error: %v", id, err)
	}
	return ok
}

// failingReader yields some bytes, then fails, like a broken download.
type failingReader struct{ n int }

var errBroken = errors.New("connection reset")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errBroken
	}
	n := min(len(p), f.n)
	for i := range n {
		p[i] = 'x'
	}
	f.n -= n
	return n, nil
}

func pdf(s string) []byte { return []byte("%PDF-1.7\n" + s + "\n%%EOF\n") }

func TestStore(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Run("put-open-exists", func(t *testing.T) {
				s, list := b.open(t)
				const id = "US10906193B2"
				if mustExist(t, s, id) {
					t.Fatalf("Exists(%q) before Put = true", id)
				}
				body := pdf("first")
				if got, want := mustPut(t, s, id, body), b.loc("patents/"+id+".pdf"); got != want {
					t.Errorf("Put(%q) = %q, want %q", id, got, want)
				}
				if !mustExist(t, s, id) {
					t.Errorf("Exists(%q) after Put = false", id)
				}
				if got := mustRead(t, s, id); !bytes.Equal(got, body) {
					t.Errorf("Open(%q) = %q, want %q", id, got, body)
				}
				if got, want := list(t), []string{"patents/" + id + ".pdf"}; !slices.Equal(got, want) {
					t.Errorf("stored objects = %q, want %q", got, want)
				}
			})

			t.Run("overwrite", func(t *testing.T) {
				s, list := b.open(t)
				mustPut(t, s, "EP1", pdf("old"))
				mustPut(t, s, "EP1", pdf("new"))
				if got := mustRead(t, s, "EP1"); !bytes.Equal(got, pdf("new")) {
					t.Errorf("Open(EP1) = %q, want the second Put", got)
				}
				if got := list(t); len(got) != 1 {
					t.Errorf("stored objects = %q, want one", got)
				}
			})

			t.Run("empty-pdf", func(t *testing.T) {
				s, _ := b.open(t)
				mustPut(t, s, "US2", nil)
				if got := mustRead(t, s, "US2"); len(got) != 0 {
					t.Errorf("Open(US2) = %q, want empty", got)
				}
			})

			t.Run("open-missing", func(t *testing.T) {
				s, _ := b.open(t)
				rc, err := s.Open(ctx, "US999")
				if !errors.Is(err, pdfstore.ErrNotFound) {
					if rc != nil {
						rc.Close()
					}
					t.Fatalf("Open(US999) error = %v, want ErrNotFound", err)
				}
			})

			t.Run("invalid-ids", func(t *testing.T) {
				s, list := b.open(t)
				for _, id := range invalidIDs {
					if _, err := s.Put(ctx, id, bytes.NewReader(pdf("evil"))); !errors.Is(err, pdfstore.ErrInvalidKey) {
						t.Errorf("Put(%q) error = %v, want ErrInvalidKey", id, err)
					}
					if _, err := s.Open(ctx, id); !errors.Is(err, pdfstore.ErrInvalidKey) {
						t.Errorf("Open(%q) error = %v, want ErrInvalidKey", id, err)
					}
					if _, err := s.Exists(ctx, id); !errors.Is(err, pdfstore.ErrInvalidKey) {
						t.Errorf("Exists(%q) error = %v, want ErrInvalidKey", id, err)
					}
				}
				if got := list(t); len(got) != 0 {
					t.Errorf("stored after invalid Puts: %q, want nothing", got)
				}
			})

			t.Run("failing-reader", func(t *testing.T) {
				s, list := b.open(t)
				mustPut(t, s, "US3", pdf("kept"))
				for _, id := range []string{"US3", "US4"} {
					_, err := s.Put(ctx, id, &failingReader{n: 100 << 10})
					if !errors.Is(err, errBroken) {
						t.Fatalf("Put(%q, failing reader) error = %v, want %v", id, err, errBroken)
					}
				}
				if mustExist(t, s, "US4") {
					t.Error("Exists(US4) after a failed Put = true")
				}
				if got := mustRead(t, s, "US3"); !bytes.Equal(got, pdf("kept")) {
					t.Errorf("Open(US3) after a failed overwrite = %q, want the old PDF", got)
				}
				// No partial object and, locally, no temp file left.
				if got, want := list(t), []string{"patents/US3.pdf"}; !slices.Equal(got, want) {
					t.Errorf("stored objects = %q, want %q", got, want)
				}
			})

			t.Run("canceled-context", func(t *testing.T) {
				s, list := b.open(t)
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				if _, err := s.Put(cctx, "US5", bytes.NewReader(pdf("x"))); !errors.Is(err, context.Canceled) {
					t.Errorf("Put(canceled) error = %v, want context.Canceled", err)
				}
				if got := list(t); len(got) != 0 {
					t.Errorf("stored after a canceled Put: %q", got)
				}
			})

			t.Run("concurrent-puts", func(t *testing.T) {
				s, list := b.open(t)
				const n = 8
				bodies := make([][]byte, n)
				for i := range bodies {
					bodies[i] = pdf(strings.Repeat(fmt.Sprint(i), 64<<10))
				}
				var wg sync.WaitGroup
				errs := make([]error, n)
				for i := range n {
					wg.Go(func() {
						_, errs[i] = s.Put(ctx, "US6", bytes.NewReader(bodies[i]))
					})
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("Put #%d error: %v", i, err)
					}
				}
				got := mustRead(t, s, "US6")
				if !slices.ContainsFunc(bodies, func(b []byte) bool { return bytes.Equal(b, got) }) {
					t.Errorf("Open(US6) after concurrent Puts returned %d bytes matching no single Put", len(got))
				}
				if got, want := list(t), []string{"patents/US6.pdf"}; !slices.Equal(got, want) {
					t.Errorf("stored objects = %q, want %q", got, want)
				}
			})

			t.Run("check", func(t *testing.T) {
				s, _ := b.open(t)
				if err := s.Check(ctx); err != nil {
					t.Errorf("Check() error: %v", err)
				}
			})
		})
	}
}

func TestLocalModes(t *testing.T) {
	l, root, _ := mustLocal(t)
	mustPut(t, l, "US7", pdf("x"))
	for _, tt := range []struct {
		path string
		want fs.FileMode
	}{
		{root, 0o750},
		{filepath.Join(root, "patents"), 0o750},
		{filepath.Join(root, "patents", "US7.pdf"), 0o640},
	} {
		fi, err := os.Stat(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != tt.want {
			t.Errorf("mode of %s = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestLocalCheckFails(t *testing.T) {
	l, root, _ := mustLocal(t)
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(context.Background()); err == nil {
		t.Error("Check() with the directory gone = nil, want an error")
	}
}

func TestLocalRemovesStaleTemps(t *testing.T) {
	_, root, parent := mustLocal(t)
	dir := filepath.Join(root, "patents")
	stale := filepath.Join(dir, ".US8.123.tmp")
	fresh := filepath.Join(dir, ".US9.456.tmp")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := pdfstore.NewLocal(root); err != nil {
		t.Fatalf("NewLocal(%q) error: %v", root, err)
	}
	if got, want := listFiles(t, parent, root), []string{"patents/.US9.456.tmp"}; !slices.Equal(got, want) {
		t.Errorf("files after NewLocal = %q, want %q (only the fresh temp kept)", got, want)
	}
}

func TestS3CheckMissingBucket(t *testing.T) {
	s, _ := mustS3(t, "no-such-bucket")
	if err := s.Check(context.Background()); err == nil {
		t.Error("Check() on a missing bucket = nil, want an error")
	}
	// A missing bucket is a misconfiguration, not a missing PDF.
	if _, err := s.Open(context.Background(), "US1"); err == nil || errors.Is(err, pdfstore.ErrNotFound) {
		t.Errorf("Open(US1) on a missing bucket error = %v, want a non-ErrNotFound error", err)
	}
}

func TestS3DefaultRegion(t *testing.T) {
	setAWSEnv(t)
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	f := newFakeS3(t)
	s, err := pdfstore.NewS3(context.Background(), testBucket, f.url)
	if err != nil {
		t.Fatalf("NewS3 without a region error: %v", err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Errorf("Check() without a region error: %v", err)
	}
}

// TestS3Checksums pins what NewS3 sends to a custom endpoint: no flexible
// checksums by default (many S3-compatible stores reject them), the SDK's
// CRC32 when the operator asks for it through the environment.
func TestS3Checksums(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  string
		want bool
	}{
		{name: "default", env: "", want: false},
		{name: "when_supported", env: "when_supported", want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setAWSEnv(t)
			t.Setenv("AWS_REQUEST_CHECKSUM_CALCULATION", tt.env)
			t.Setenv("AWS_RESPONSE_CHECKSUM_VALIDATION", tt.env)
			f := newFakeS3(t)
			s, err := pdfstore.NewS3(context.Background(), testBucket, f.url)
			if err != nil {
				t.Fatalf("NewS3 error: %v", err)
			}
			mustPut(t, s, "US1", pdf("x"))
			if got := mustRead(t, s, "US1"); !bytes.Equal(got, pdf("x")) {
				t.Errorf("Open(US1) = %q, want %q", got, pdf("x"))
			}
			sent := f.sentChecksums()
			if got := slices.Contains(sent, "PUT X-Amz-Checksum-Crc32"); got != tt.want {
				t.Errorf("PutObject sent a CRC32 checksum = %t, want %t (checksum headers: %q)", got, tt.want, sent)
			}
			if !tt.want && len(sent) > 0 {
				t.Errorf("checksum headers sent = %q, want none", sent)
			}
		})
	}
}
