package pdf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/pdf"
)

// published is an entry of abstracts.json: a document and the abstract
// printed on its front page.
type published struct {
	File      string `json:"file"`
	Abstract  string `json:"abstract"`
	TextLayer bool   `json:"text_layer"`
	// Claims is true when the file holds the claims pages; most files in
	// the set are the first two pages of a document only.
	Claims bool `json:"claims"`
}

// sharedCorpus is the full set of sample documents, beside the repository
// rather than in it; PATENT_TESTDATA overrides its place.
func sharedCorpus() string {
	if d := os.Getenv("PATENT_TESTDATA"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "..", "shared", "testdata", "patents")
}

func mustLoadAbstracts(tb testing.TB, dir string) map[string]published {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "abstracts.json"))
	if err != nil {
		tb.Fatalf("read abstracts: %v", err)
	}
	var m map[string]published
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("parse abstracts: %v", err)
	}
	return m
}

// sortedIDs returns the keys of m in order, so that runs are repeatable.
func sortedIDs(m map[string]published) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// words returns the lowercased words of s, punctuation being a separator.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// f1 is the word-level F1 score of got against want, words counted as a
// multiset.
func f1(got, want string) float64 {
	g, w := words(got), words(want)
	if len(g) == 0 || len(w) == 0 {
		return 0
	}
	count := map[string]int{}
	for _, x := range w {
		count[x]++
	}
	common := 0
	for _, x := range g {
		if count[x] > 0 {
			count[x]--
			common++
		}
	}
	if common == 0 {
		return 0
	}
	p := float64(common) / float64(len(g))
	r := float64(common) / float64(len(w))
	return 2 * p * r / (p + r)
}

func TestF1(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want string
		score     float64
	}{
		{"equal", "A b, c.", "a B c", 1},
		{"disjoint", "x y", "a b", 0},
		{"empty", "", "a", 0},
		{"half", "a b", "a c", 0.5},
		{"multiset", "a a a", "a", 0.5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := f1(tt.got, tt.want); got != tt.score {
				t.Errorf("f1(%q, %q) = %v, want %v", tt.got, tt.want, got, tt.score)
			}
		})
	}
}

// minF1 is the least word-F1 of an extracted abstract against the
// published one, on every test document, original or OCR'd (issue 15).
const minF1 = 0.95

// checkDocument extracts one document and checks it against its published
// abstract. It returns the abstract's F1 score, or -1 for an image-only
// document.
func checkDocument(t *testing.T, dir string, doc published) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := pdf.ExtractFile(ctx, filepath.Join(dir, doc.File))
	if !doc.TextLayer {
		if !errors.Is(err, pdf.ErrImageOnly) {
			t.Errorf("ExtractFile(%q) = %+v, %v, want ErrImageOnly", doc.File, s, err)
		}
		return -1
	}
	if err != nil {
		t.Fatalf("ExtractFile(%q): %v", doc.File, err)
	}
	score := f1(s.Abstract, doc.Abstract)
	t.Logf("%s: abstract F1 %.3f (%d pages, %d claims)", doc.File, score, s.Pages, len(s.Claims))
	if score < minF1 {
		t.Errorf("%s: abstract F1 = %.3f, want >= %v\ngot:  %s\nwant: %s", doc.File, score, minF1, s.Abstract, doc.Abstract)
	}
	checkNotCut(t, doc.File, s.Abstract, doc.Abstract)
	// The sample set's two-page files are front pages only; longer ones
	// are whole documents.
	if doc.Claims || s.Pages > 2 {
		checkClaims(t, doc.File, s.Claims)
	}
	return score
}

func checkClaims(t *testing.T, file string, claims []patent.Claim) {
	t.Helper()
	if len(claims) == 0 {
		t.Errorf("%s: no claims", file)
		return
	}
	if c := claims[0]; c.Number != 1 || !c.Independent {
		t.Errorf("%s: first claim = %d (independent %v), want independent claim 1", file, c.Number, c.Independent)
	}
	for i := 1; i < len(claims); i++ {
		if claims[i].Number <= claims[i-1].Number {
			t.Errorf("%s: claim %d follows claim %d", file, claims[i].Number, claims[i-1].Number)
		}
	}
}

// checkNotCut checks that an extracted abstract runs to the end of the
// published one: an abstract cut at a line break inside its paragraph (on
// an OCR'd front page, after its first line) ends elsewhere, and mid-sentence.
func checkNotCut(t *testing.T, file, got, want string) {
	t.Helper()
	g, w := words(got), words(want)
	n := min(3, len(w))
	if len(g) < n || strings.Join(g[len(g)-n:], " ") != strings.Join(w[len(w)-n:], " ") || !strings.HasSuffix(got, ".") {
		t.Errorf("%s: abstract stops early or runs on: it ends %q, the published one %q", file, tail(got, 60), tail(want, 60))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// TestExtractTestdata extracts every test document, the originals in
// testdata and the OCR'd copies in testdata/ocr (tools/make-ocr-testdata.sh),
// and scores each abstract against the published one: F1 per file in the
// log, a failure under minF1 or when the abstract stops early.
func TestExtractTestdata(t *testing.T) {
	t.Parallel()
	for _, set := range []struct{ name, dir string }{{"original", "testdata"}, {"ocr", filepath.Join("testdata", "ocr")}} {
		docs := mustLoadAbstracts(t, set.dir)
		if len(docs) == 0 {
			t.Fatalf("%s/abstracts.json lists no documents", set.dir)
		}
		for _, id := range sortedIDs(docs) {
			t.Run(set.name+"/"+id, func(t *testing.T) {
				t.Parallel()
				checkDocument(t, set.dir, docs[id])
			})
		}
	}
}

// TestExtractSharedCorpus runs the whole sample set, which sits beside
// the repository and so may be missing (in CI, say).
func TestExtractSharedCorpus(t *testing.T) {
	t.Parallel()
	dir := sharedCorpus()
	if _, err := os.Stat(filepath.Join(dir, "abstracts.json")); err != nil {
		t.Skipf("shared patent corpus not found at %s: %v", dir, err)
	}
	docs := mustLoadAbstracts(t, dir)
	for _, id := range sortedIDs(docs) {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			checkDocument(t, dir, docs[id])
		})
	}
}

// syntheticPages is a small patent as plain single-column text.
func syntheticPages() [][]string {
	return [][]string{
		{
			"(12) United States Patent",
			"(54) WIDGET WITH A BLADE",
			"(57) ABSTRACT",
			"A widget has a handle and a blade that is held in the handle by a pin, so that the",
			"blade can be changed without tools. The blade is sharp and made of hardened steel.",
			"10 Claims, 3 Drawing Sheets",
		},
		{
			"US 11,234,567 B2",
			"WIDGET WITH A BLADE",
			"BACKGROUND",
			"Widgets have been known for a long time and they are used for many purposes.",
			"SUMMARY",
			"A widget has a blade held by a pin so that the blade can be changed easily.",
			"DETAILED DESCRIPTION",
			"The widget 10 has a handle 12 and a blade 14 held by a pin 16 in a slot 18.",
			"What is claimed is:",
			"1. A widget comprising a handle, a blade and a pin holding the blade.",
			"2. The widget of claim 1, wherein the blade is steel.",
			"* * * * *",
		},
	}
}

func TestExtractSynthetic(t *testing.T) {
	t.Parallel()
	want := patent.Sections{
		Pages:       2,
		Abstract:    "A widget has a handle and a blade that is held in the handle by a pin, so that the blade can be changed without tools. The blade is sharp and made of hardened steel.",
		Summary:     "A widget has a blade held by a pin so that the blade can be changed easily.",
		Description: "The widget 10 has a handle 12 and a blade 14 held by a pin 16 in a slot 18.",
		Claims: []patent.Claim{
			{Number: 1, Text: "A widget comprising a handle, a blade and a pin holding the blade.", Independent: true},
			{Number: 2, Text: "The widget of claim 1, wherein the blade is steel.", Independent: false},
		},
	}
	for _, tt := range []struct {
		name   string
		header string
	}{
		{"plain header", "%PDF-1.4\n"},
		{"scanner header with a space", "%PDF-1.3 \n"},
		{"PDF 2.0 header", "%PDF-2.0\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := textPDFHeader(tt.header, syntheticPages()...)
			got, err := pdf.Extract(context.Background(), bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Extract =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestExtractTooLittleText(t *testing.T) {
	t.Parallel()
	data := textPDF([]string{"FIG. 1"}, []string{"100", "102"})
	if _, err := pdf.Extract(context.Background(), bytes.NewReader(data), int64(len(data))); !errors.Is(err, pdf.ErrImageOnly) {
		t.Errorf("Extract(figure labels only) error = %v, want ErrImageOnly", err)
	}
}
