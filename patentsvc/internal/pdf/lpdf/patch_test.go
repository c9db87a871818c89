package lpdf_test

// Tests of the patches made to the library (README.md); the library's own
// behaviour is tested through the extractor (../*_test.go).

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/pdf/lpdf"
	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
)

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n *int64
}

func (c counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// TestWrapSeesDecodedBytes: NewReaderWith's hook sees every stream's bytes
// after its filters, each time the stream is read.
func TestWrapSeesDecodedBytes(t *testing.T) {
	const n = 1 << 20
	data := pdftest.Bomb(n) // one content stream of 1 MiB of spaces, deflated
	var decoded int64
	r, err := lpdf.NewReaderWith(bytes.NewReader(data), int64(len(data)), func(r io.Reader) io.Reader { return counter{r, &decoded} })
	if err != nil {
		t.Fatal(err)
	}
	contents := r.Trailer().Key("Root").Key("Pages").Key("Kids").Index(0).Key("Contents")
	for range 3 {
		got, err := io.ReadAll(contents.Reader())
		if err != nil || len(got) != n {
			t.Fatalf("read %d bytes, %v; want %d", len(got), err, n)
		}
	}
	if decoded != 3*n {
		t.Errorf("the hook saw %d bytes, want %d (3 reads of %d decoded bytes)", decoded, 3*n, n)
	}
}

// TestHeaderBounds: header values that would make the library allocate
// without bound, or loop, are errors at once.
func TestHeaderBounds(t *testing.T) {
	plain := pdftest.Doc("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>")
	xrefAt := bytes.LastIndex(plain, []byte("\nxref\n")) + 1
	// The trailer's Prev points at its own section.
	loop := bytes.Replace(plain, []byte("/Root 1 0 R >>"), fmt.Appendf(nil, "/Root 1 0 R /Prev %d >>", xrefAt), 1)
	// An xref table numbering an object far past MaxObjects.
	far := bytes.Replace(plain, []byte("xref\n0 3\n"), []byte("xref\n2000000000 3\n"), 1)
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"xref stream of 2e9 objects", pdftest.XrefSize(2_000_000_000), "at most 1048576 objects are read"},
		{"xref table numbering object 2e9", far, "at most 1048576 objects are read"},
		{"Prev pointing at its own section", loop, "loops"},
		{"xref stream with a 100-byte field", bytes.Replace(pdftest.XrefSize(3), []byte("/W [1 4 1]"), []byte("/W [1 100 1]"), 1), "invalid W array"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lpdf.NewReader(bytes.NewReader(tt.data), int64(len(tt.data)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewReader = %v, want an error about %q", err, tt.want)
			}
		})
	}
	// A predictor's Columns past the bound: the stream's reader panics
	// (the library's way with a broken stream) instead of allocating.
	wide := pdftest.Doc("<< /Type /Catalog /Pages 2 0 R >>",
		strings.Replace(pdftest.Flate([]byte("abc")), "<< ", "<< /DecodeParms << /Predictor 12 /Columns 100000000000 >> ", 1))
	r, err := lpdf.NewReader(bytes.NewReader(wide), int64(len(wide)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "Columns") {
			t.Errorf("reading a stream of 1e11 predictor columns: panic %v, want one about Columns", p)
		}
	}()
	r.Trailer().Key("Root").Key("Pages").Reader()
}
