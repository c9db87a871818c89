package pdf_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/pdf"
)

// publishedClaims are the claims of the whole documents of the test set as
// printed (read with pdftotext from the originals' claims pages): how many,
// which are independent, and how claim 1 begins.
var publishedClaims = []struct {
	id          string
	count       int
	independent []int
	first       string
}{
	{"US8427103", 10, []int{1, 2, 3}, "A charging device for an electric vehicle, which charges a storage device"},
	{"US11394072", 12, []int{1}, "A lithium ion battery module, the lithium ion battery module comprising"},
	{"US9277756", 41, []int{1, 16, 27}, "A method of preparing a cheese product comprising"},
	{"US11190026", 15, []int{1, 10, 13}, "A battery system to be deployed in a vehicle, comprising"},
}

// reClaimRef finds the claim a dependent claim refers to.
var reClaimRef = regexp.MustCompile(`(?i)\bclaim\s*(\d+)`)

// TestClaimsPublished checks each whole document's claims against the
// printed ones: their number, the independent ones, claim 1's first words,
// each dependent claim referring to an earlier one; and, where the module
// has both, that the OCR'd copy's claims read as the original's (word-F1
// of each claim's text). A document is read from testdata (the original),
// testdata/ocr (its OCR'd front and claims pages) and the shared sample
// set beside the repository when it is there.
func TestClaimsPublished(t *testing.T) {
	t.Parallel()
	for _, want := range publishedClaims {
		files := map[string]string{
			"original": filepath.Join("testdata", want.id+".pdf"),
			"ocr":      filepath.Join("testdata", "ocr", want.id+".ocr.pdf"),
			"shared":   filepath.Join(sharedCorpus(), want.id+".pdf"),
		}
		got := map[string][]patent.Claim{}
		for _, kind := range []string{"original", "ocr", "shared"} {
			if _, err := os.Stat(files[kind]); err != nil {
				continue
			}
			t.Run(want.id+"/"+kind, func(t *testing.T) {
				s, err := pdf.ExtractFile(context.Background(), files[kind])
				if err != nil {
					t.Fatalf("ExtractFile(%q): %v", files[kind], err)
				}
				got[kind] = s.Claims
				checkPublishedClaims(t, files[kind], s.Claims, want.count, want.independent, want.first)
			})
		}
		if len(got["original"]) == 0 {
			got["original"] = got["shared"]
		}
		if o, c := got["original"], got["ocr"]; len(o) == want.count && len(c) == want.count {
			for i := range o {
				// 0.85: a short claim loses much by one glued word
				// ("claim31" in an original's text layer).
				if score := f1(c[i].Text, o[i].Text); score < 0.85 {
					t.Errorf("%s claim %d: OCR'd text F1 %.3f against the original's, want >= 0.85\nocr:      %s\noriginal: %s", want.id, i+1, score, c[i].Text, o[i].Text)
				}
			}
		}
	}
	if len(publishedClaims) == 0 {
		t.Fatal("no documents")
	}
}

func checkPublishedClaims(t *testing.T, file string, claims []patent.Claim, count int, independent []int, first string) {
	t.Helper()
	var ind []int
	for i, c := range claims {
		if c.Number != i+1 {
			t.Errorf("%s: claim %d is numbered %d", file, i+1, c.Number)
		}
		if len(c.Text) < 40 {
			t.Errorf("%s: claim %d text %q is too short", file, c.Number, c.Text)
		}
		if c.Independent {
			ind = append(ind, c.Number)
			continue
		}
		ref := 0
		if m := reClaimRef.FindStringSubmatch(c.Text); m != nil {
			ref, _ = strconv.Atoi(m[1])
		}
		if ref < 1 || ref >= c.Number {
			t.Errorf("%s: dependent claim %d refers to claim %d: %q", file, c.Number, ref, c.Text)
		}
	}
	if len(claims) != count {
		t.Errorf("%s: %d claims, want %d", file, len(claims), count)
	}
	if !slices.Equal(ind, independent) {
		t.Errorf("%s: independent claims %v, want %v", file, ind, independent)
	}
	if len(claims) > 0 && !strings.HasPrefix(strings.ToLower(claims[0].Text), strings.ToLower(first)) {
		t.Errorf("%s: claim 1 = %q, want it to begin %q", file, claims[0].Text, first)
	}
}
