package pdf

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

func TestRunningHeaders(t *testing.T) {
	for _, tt := range []struct {
		line string
		want bool
	}{
		{"US 11,234,567 B2", true},
		{"US 8.427,103 B2", true},
		{"US 9 , 753 , 649 B2", true},
		{"U.S. Patent Jan. 4, 2022 Sheet 3 of 7 US 11,234,567 B2", true},
		{"U.S. Patent Apr. 23, 2013 Sheet 7 Of 7 US 8,427,103 B2", true},
		{"Patent Application Publication Feb. 12, 2009 Sheet 1 of 3 US 2009/0043621 A1", true},
		{"US 2009/0043621 A1 Feb. 12, 2009", true},
		{"Page 2", true},
		{"12", true},
		{"3.", true},
		{"US011151203B2", true},
		{"The device of FIG. 3 is shown on sheet 3.", false},
		{"United States Patent", false},
		{"US patents describe many things", false},
	} {
		if got := isRunningHeader(tt.line); got != tt.want {
			t.Errorf("isRunningHeader(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestNewDocumentStripsHeaders(t *testing.T) {
	pages := [][]string{
		{"(12) United States Patent", "US011151203B2", "(57) ABSTRACT", "An abstract."},
		{"U.S. Patent Jan. 4, 2022 Sheet 1 of 7 US 11,234,567 B2", "FIG. 1"},
		{"US 11,234,567 B2", "1", "2", "TITLE", "Body text with US 11,234,567 B2 inside."},
	}
	d := newDocument(pages)
	want := []string{"(12) United States Patent", "(57) ABSTRACT", "An abstract.", "FIG. 1", "TITLE", "Body text with US 11,234,567 B2 inside."}
	if !reflect.DeepEqual(d.lines, want) {
		t.Errorf("newDocument lines = %q, want %q", d.lines, want)
	}
	if want := []bool{false, true, false}; !reflect.DeepEqual(d.sheet, want) {
		t.Errorf("newDocument sheets = %v, want %v", d.sheet, want)
	}
}

// front builds a front page around an abstract heading and its lines.
func front(heading string, abstract ...string) []string {
	lines := []string{"(12) United States Patent", "(54) A WIDGET", "(56) References Cited", "5,000,000 A 1/1990 Smith"}
	if heading != "" {
		lines = append(lines, heading)
	}
	lines = append(lines, abstract...)
	return append(lines, "10 Claims, 7 Drawing Sheets", "FIG. 1", "100")
}

func TestAbstract(t *testing.T) {
	text := []string{"A widget has a handle and a", "blade. The blade is sharp."}
	want := "A widget has a handle and a blade. The blade is sharp."
	for _, tt := range []struct {
		name  string
		pages [][]string
		want  string
	}{
		{"INID", [][]string{front("(57) ABSTRACT", text...)}, want},
		{"INID with OCR spaces", [][]string{front("( 57 ) ABSTRACT", text...)}, want},
		{"INID read as (5 7)", [][]string{front("(5 7) ABSTRACT", text...)}, want},
		{"INID read as a7)", [][]string{front("a7) ABSTRACT", text...)}, want},
		{"ABSTRACT alone", [][]string{front("ABSTRACT", text...)}, want},
		{"ABSTRACT then (57)", [][]string{front("ABSTRACT", append([]string{"( 57 )"}, text...)...)}, want},
		{"57 ABSTRACT then (57)", [][]string{front("57 ABSTRACT", append([]string{"(57)"}, text...)...)}, want},
		{"text on the heading line", [][]string{front("(57) ABSTRACT A widget has a handle and a", "blade. The blade is sharp.")}, want},
		{"INID without ABSTRACT", [][]string{front("(57) A widget has a handle and a", "blade. The blade is sharp.")}, want},
		{
			name: "continued on page 2",
			pages: [][]string{
				{"(57) ABSTRACT", "A widget has a handle and a", "(Continued)", "FIG. 1"},
				{"US 11,234,567 B2", "Page 2", "blade. The blade is sharp.", "10 Claims, 7 Drawing Sheets", "(51) Int. Cl."},
			},
			want: want,
		},
		{
			name: "application: figure text after the abstract",
			pages: [][]string{
				{"(19) United States", "(57) ABSTRACT", "A widget has a handle and a", "blade. The blade is sharp.", ":::::::8::::::::", "Projects"},
			},
			want: want,
		},
		{
			name: "stops at the next INID code",
			pages: [][]string{
				{"(57) ABSTRACT", "A widget has a handle and a", "blade. The blade is sharp.", "(58) Field of Classification Search"},
			},
			want: want,
		},
		{"none", [][]string{{"(12) United States Patent", "abstract is incorporated herein"}}, ""},
		// OCR'd front pages (issue 15): the abstract used to stop at the
		// first line break followed by a speck of the scan.
		{"OCR specks between the lines", [][]string{front("(57) ABSTRACT", ". an .", "A widget has a handle and a", ". .", "blade. The blade is sharp.")}, want},
		{"OCR speck after the heading", [][]string{front("(57) ABSTRACT", "So", "A widget has a handle and a", "blade. The blade is sharp.")}, want},
		{"OCR misreads the INID code (87)", [][]string{front("(87) ABSTRACT", text...)}, want},
		{"OCR misreads the INID code 67)", [][]string{front("67) ABSTRACT", text...)}, want},
		{"OCR misreads the INID code 657)", [][]string{front("657) ABSTRACT", text...)}, want},
		{"OCR misreads the INID code ©)", [][]string{front("©) ABSTRACT", text...)}, want},
		{"hyphen at a line end", [][]string{front("(57) ABSTRACT", "A widget has a han-", "dle and a blade. The blade is sharp.")}, want},
		{
			name: "OCR: {Continued} and a bare Page header",
			pages: [][]string{
				{"(57) ABSTRACT", "A widget has a handle and a", "{Continued}", "FIG. 1"},
				{"US 11,234,567 B2", "Page", "blade. The blade is sharp.", "10 Claims, 7 Drawing Sheets", "(51) Int. Cl."},
			},
			want: want,
		},
		{
			name:  "figure specks after the last sentence end it",
			pages: [][]string{{"(57) ABSTRACT", "A widget has a handle and a", "blade. The blade is sharp.", "| _ ~", "Handle lever"}},
			want:  want,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := findSections(tt.pages).Abstract; got != tt.want {
				t.Errorf("Abstract = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClaimsSignalsAndEnd(t *testing.T) {
	body := []string{"1. A widget.", "2. The widget of claim 1, in red."}
	for _, signal := range []string{
		"What is claimed is:", "What is claimed is :", "The invention claimed is:", "We claim:",
		"I claim:", "Claims", "CLAIMS", "What is claimed:", "What is claimed i",
	} {
		for _, end := range []string{"* * * * *", "k k k k k", "CK ck ck ck ck", "eR Re &", ""} {
			t.Run(signal+" "+end, func(t *testing.T) {
				lines := append([]string{"SPECIFICATION", "It is claimed that this works."}, signal)
				lines = append(lines, body...)
				if end != "" {
					lines = append(lines, end, "Trailing page text.")
				}
				got := findSections([][]string{{"(57) ABSTRACT", "x"}, lines}).Claims
				want := []patent.Claim{{Number: 1, Text: "A widget.", Independent: true}, {Number: 2, Text: "The widget of claim 1, in red.", Independent: false}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Claims = %+v, want %+v", got, want)
				}
			})
		}
	}
}

func TestSummaryAndDescription(t *testing.T) {
	spec := []string{
		"US 11,234,567 B2",
		"A WIDGET",
		"BACKGROUND",
		"Widgets are old.",
		"SUMMARY",
		"[0005] A widget has a blade.",
		"BRIEF DESCRIPTION OF THE",
		"DRAWINGS",
		"FIG. 1 shows a widget.",
		"DETAILED DESCRIPTION OF THE PREFERRED",
		"EMBODIMENTS",
		"[0010] The widget 10 has a blade 12.",
		"What is claimed is:",
		"1. A widget.",
	}
	s := findSections([][]string{{"(57) ABSTRACT", "A widget."}, spec})
	if want := "A widget has a blade."; s.Summary != want {
		t.Errorf("Summary = %q, want %q", s.Summary, want)
	}
	if want := "The widget 10 has a blade 12."; s.Description != want {
		t.Errorf("Description = %q, want %q", s.Description, want)
	}

	// Without a DETAILED DESCRIPTION heading, the whole body.
	s = findSections([][]string{{"(57) ABSTRACT", "A widget."}, {"A WIDGET", "A widget has a blade.", "We claim:", "1. A widget."}})
	if want := "A WIDGET A widget has a blade."; s.Description != want {
		t.Errorf("Description (no heading) = %q, want %q", s.Description, want)
	}
	// Front page only: no description.
	s = findSections([][]string{{"(57) ABSTRACT", "A widget."}})
	if s.Description != "" || s.Summary != "" {
		t.Errorf("front page only: Summary %q, Description %q, want empty", s.Summary, s.Description)
	}
}

func TestJoin(t *testing.T) {
	v := newVocabulary([]string{"a computer is a machine", "the operation runs"})
	for _, tt := range []struct {
		lines []string
		want  string
	}{
		{[]string{"an opera-", "tion here"}, "an operation here"},
		{[]string{"the anti-", "HIV drug"}, "the anti-HIV drug"},
		{[]string{"PHOS-", "PHATE"}, "PHOSPHATE"},
		{[]string{"a com", "puter"}, "a computer"},
		{[]string{"maintain", "ing it"}, "maintaining it"},
		{[]string{"non-forge", "able"}, "non-forgeable"},
		{[]string{"the red", "ball"}, "the red\nball"},
		{[]string{"end.", "Next"}, "end.\nNext"},
		{[]string{"claim 1", "2. A"}, "claim 1\n2. A"},
	} {
		if got := v.join(tt.lines); got != tt.want {
			t.Errorf("join(%q) = %q, want %q", tt.lines, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, tt := range []struct {
		in, want string
	}{
		{"  a\n\tb  ", "a b"},
		{"disclosed . In some ( 1 ) cases , yes", "disclosed. In some (1) cases, yes"},
		{"non - volatile and / or un - map - able", "non-volatile and/or un-map-able"},
		{"US 9 , 753 , 649 and ( 2006 . 01 )", "US 9,753,649 and (2006.01)"},
		{"[0001] First. [0002] Second.", "First. Second."},
		{strings.Repeat(" ", 3), ""},
	} {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
