package pdf_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/pdf/pdftest"
)

// buildPDF writes a PDF file whose objects 1, 2, ... have the given
// bodies, with a correct cross-reference table; object 1 is the catalog.
func buildPDF(objects ...string) []byte {
	return pdftest.DocHeader("%PDF-1.4\n", objects...)
}

// textPDF builds a Letter-size PDF with one page per element of pages,
// each a list of lines written top-down in a single column of Helvetica.
func textPDF(pages ...[]string) []byte {
	return textPDFHeader("%PDF-1.4\n", pages...)
}

// textPDFHeader is textPDF with the given header line. Each page's content
// is split over two streams, the first ending in "q", as scanners write
// them.
func textPDFHeader(header string, pages ...[]string) []byte {
	// 1 catalog, 2 page tree, 3 font, then a page and its content per page.
	objects := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	var kids []string
	for _, lines := range pages {
		page := len(objects) + 1
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
		var c strings.Builder
		c.WriteString("q 1 0 0 1 0 0 cm BT /F1 10 Tf 12 TL 72 720 Td\n")
		for _, l := range lines {
			fmt.Fprintf(&c, "(%s) Tj T*\n", escape(l))
		}
		c.WriteString("ET Q")
		objects = append(objects,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents [%d 0 R %d 0 R] >>", page+1, page+2),
			pdftest.Stream("q"),
			pdftest.Stream(c.String()))
	}
	objects[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages))
	return pdftest.DocHeader(header, objects...)
}

func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}

// mustReadTestdata reads a file from testdata.
func mustReadTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
