package pdf

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// words lays out a line of text as one span per word, from x, in a font
// of the given size, roughly as an OCR text layer does.
func words(x, y, size float64, text string) []span {
	var out []span
	for _, w := range strings.Fields(text) {
		width := float64(len(w)+1) * 0.5 * size
		out = append(out, span{x0: x, x1: x + width, y: y, size: size, text: w + " "})
		x += width
	}
	return out
}

func TestPageLines(t *testing.T) {
	const width = 612
	var twoColumns []span
	twoColumns = append(twoColumns, words(250, 740, 10, "US 11,234,567 B2")...)
	twoColumns = append(twoColumns, words(180, 725, 10, "1")...)
	twoColumns = append(twoColumns, words(420, 725, 10, "2")...)
	left := []string{"left one", "left two", "left three", "left four"}
	right := []string{"right one", "right two", "right three", "right four"}
	for i := range left {
		y := 700 - 12*float64(i)
		twoColumns = append(twoColumns, words(72, y, 10, left[i])...)
		twoColumns = append(twoColumns, words(320, y, 10, right[i])...)
		// Gutter line number, printed small, right against the text.
		if i == 1 {
			twoColumns = append(twoColumns, span{x0: 302, x1: 310, y: y, size: 7, text: "5 "})
		}
	}
	twoColumns = append(twoColumns, words(100, 640, 10, "A TITLE ACROSS THE WHOLE PAGE WIDTH OF TEXT")...)
	twoColumns = append(twoColumns, words(72, 628, 10, "after left")...)
	twoColumns = append(twoColumns, words(320, 628, 10, "after right")...)

	var frontPage []span
	frontPage = append(frontPage, words(72, 700, 10, "(21) Appl. No.: 12/345")...)
	frontPage = append(frontPage, words(320, 700, 10, "(57)")...)
	frontPage = append(frontPage, span{x0: 345, x1: 351, y: 700, size: 10, text: "( "}, span{x0: 351, x1: 361, y: 700, size: 10, text: "10 "}, span{x0: 361, x1: 366, y: 700, size: 10, text: ") "})
	frontPage = append(frontPage, words(72, 688, 10, "(22) Filed: Jan. 1, 2020")...)
	frontPage = append(frontPage, words(320, 688, 10, "ABSTRACT text")...)

	// An OCR'd two-column page (tesseract's text layer): the running
	// header is one row with a gap where the gutter is, what OCR made of
	// the gutter's line numbers ("1g", "we", and "40" as large as the
	// text) sits in the gutter or against the left column, and a
	// left-column word reaches a little way into the gutter.
	var ocrColumns []span
	ocrColumns = append(ocrColumns, words(200, 740, 12, "US 11,234,567")...)
	ocrColumns = append(ocrColumns, words(325, 740, 12, "B2")...)
	var wantOCR []string
	wantOCR = append(wantOCR, "US 11,234,567 B2")
	for i := range 12 {
		y := 700 - 12*float64(i)
		left := fmt.Sprintf("left line %02d of the text in the column", i)
		switch i {
		case 3:
			left += "s" // 5 points into the gutter
			wantOCR = append(wantOCR, left)
		case 5:
			left = fmt.Sprintf("left line %02d", i)
			ocrColumns = append(ocrColumns, span{x0: 288, x1: 294, y: y, size: 10, text: "40 "})
			wantOCR = append(wantOCR, left)
		default:
			wantOCR = append(wantOCR, left)
		}
		ocrColumns = append(ocrColumns, words(72, y, 10, left)...)
		ocrColumns = append(ocrColumns, words(320, y, 10, fmt.Sprintf("right line %02d of the text", i))...)
	}
	for i := range 12 {
		wantOCR = append(wantOCR, fmt.Sprintf("right line %02d of the text", i))
	}
	ocrColumns = append(ocrColumns,
		span{x0: 300, x1: 303, y: 688, size: 6, text: "1g "},
		span{x0: 302.8, x1: 302.8, y: 664, size: 7, text: "we "})

	for _, tt := range []struct {
		name  string
		spans []span
		want  []string
	}{
		{
			name:  "OCR: header, gutter marks, a word into the gutter",
			spans: ocrColumns,
			want:  wantOCR,
		},
		{
			name:  "two columns with gutter and column numbers",
			spans: twoColumns,
			want: []string{
				"US 11,234,567 B2",
				"left one", "left two", "left three", "left four",
				"right one", "right two", "right three", "right four",
				"A TITLE ACROSS THE WHOLE PAGE WIDTH OF TEXT",
				"after left", "after right",
			},
		},
		{
			name:  "INID codes near the middle are kept",
			spans: frontPage,
			want: []string{
				"(21) Appl. No.: 12/345", "(22) Filed: Jan. 1, 2020",
				"(57) ( 10 )", "ABSTRACT text",
			},
		},
		{
			name:  "single column",
			spans: append(words(72, 700, 10, "one line of text that runs right across the middle of the page"), words(72, 688, 10, "and a short one")...),
			want:  []string{"one line of text that runs right across the middle of the page", "and a short one"},
		},
		{
			name:  "touching spans join without a space",
			spans: []span{{x0: 72, x1: 80, y: 700, size: 10, text: "ab"}, {x0: 80, x1: 88, y: 700, size: 10, text: "cd"}, {x0: 95, x1: 103, y: 700.5, size: 10, text: "ef"}},
			want:  []string{"abcd ef"},
		},
		{
			name: "empty page",
			want: nil,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := pageLines(tt.spans, width); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("pageLines() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
