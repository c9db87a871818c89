package pdftest

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// PageTexts returns the text of each page of the PDF data as poppler's
// pdftotext reads it (the engine the service reads PDFs with): what a
// reader copying from the page gets, through the fonts' ToUnicode maps.
// opts are pdftotext's options ("-layout"). The test fails when pdftotext
// is missing (Debian: poppler-utils).
func PageTexts(tb testing.TB, data []byte, opts ...string) []string {
	tb.Helper()
	out := pdftotext(tb, data, opts...)
	pages := strings.Split(out, "\f")
	if n := len(pages); n > 1 && strings.TrimSpace(pages[n-1]) == "" {
		pages = pages[:n-1] // pdftotext ends every page with a form feed
	}
	return pages
}

// PageRows returns each page's lines of text, top to bottom, white space
// collapsed, without blank lines or the "Page N" footer (pdftotext
// -layout, which keeps the rows of the page).
func PageRows(tb testing.TB, data []byte) [][]string {
	tb.Helper()
	footer := regexp.MustCompile(`^Page \d+$`)
	var pages [][]string
	for _, page := range PageTexts(tb, data, "-layout") {
		var rows []string
		for _, l := range strings.Split(page, "\n") {
			if s := strings.Join(strings.Fields(l), " "); s != "" && !footer.MatchString(s) {
				rows = append(rows, s)
			}
		}
		pages = append(pages, rows)
	}
	return pages
}

// pdftotext runs poppler's pdftotext on data with the options given.
func pdftotext(tb testing.TB, data []byte, opts ...string) string {
	tb.Helper()
	path, err := exec.LookPath("pdftotext")
	if err != nil {
		tb.Fatalf("reading a PDF's text needs pdftotext: %v (Debian: apt-get install poppler-utils)", err)
	}
	cmd := exec.Command(path, append(append([]string{"-enc", "UTF-8"}, opts...), "-", "-")...)
	cmd.Stdin = bytes.NewReader(data)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("pdftotext: %v: %s", err, stderr.String())
	}
	return string(out)
}
