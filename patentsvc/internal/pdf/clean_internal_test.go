package pdf

import (
	"reflect"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// TestCleanSections: every text of the sections leaves the package clean
// (patent.CleanText) and still single-spaced and trimmed; clean text is
// kept as it is.
func TestCleanSections(t *testing.T) {
	in := patent.Sections{
		Pages:       3,
		Abstract:    "\x00 A widget\x00 has a \xff\xfeblade. \x00",
		Claims:      []patent.Claim{{Number: 1, Text: "A widget \x00 with a blade.", Independent: true}, {Number: 2, Text: "The widget of claim 1."}},
		Summary:     "Clean summary.",
		Description: "Text \xed\xa0\x80 here\x00.",
	}
	want := patent.Sections{
		Pages:       3,
		Abstract:    "A widget has a \uFFFD\uFFFDblade.",
		Claims:      []patent.Claim{{Number: 1, Text: "A widget with a blade.", Independent: true}, {Number: 2, Text: "The widget of claim 1."}},
		Summary:     "Clean summary.",
		Description: "Text \uFFFD\uFFFD\uFFFD here.",
	}
	if got := cleanSections(in); !reflect.DeepEqual(got, want) {
		t.Errorf("cleanSections(%+v)\n = %+v\nwant %+v", in, got, want)
	}
}
