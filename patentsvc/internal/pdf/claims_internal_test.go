package pdf

import (
	"reflect"
	"testing"
)

func TestSplitClaims(t *testing.T) {
	for _, tt := range []struct {
		name string
		text string
		want []Claim
	}{
		{
			name: "lines",
			text: "What is claimed is:\n1. A device comprising:\na part.\n2. The device of claim 1, wherein\nthe part is red.\n3. A method of making a device.",
			want: []Claim{
				{1, "A device comprising: a part.", true},
				{2, "The device of claim 1, wherein the part is red.", false},
				{3, "A method of making a device.", true},
			},
		},
		{
			name: "one line",
			text: "We claim: 1. A widget. 2. The widget of claim 1, being blue. 3. The widget of claims 1-2, being round.",
			want: []Claim{
				{1, "A widget.", true},
				{2, "The widget of claim 1, being blue.", false},
				{3, "The widget of claims 1-2, being round.", false},
			},
		},
		{
			name: "numbers inside a claim do not split it",
			text: "1. A mixture of 2. parts water and 3. parts salt; 3. The mixture heated.\n2. The mixture of claim 1, cooled.",
			want: []Claim{
				{1, "A mixture of 2. parts water and 3. parts salt; 3. The mixture heated.", true},
				{2, "The mixture of claim 1, cooled.", false},
			},
		},
		{
			name: "OCR reads 1. as l. and 2. as 2,",
			text: "I claim:\nl. A pump.\n2, The pump of claim l, with a valve.",
			want: []Claim{
				{1, "A pump.", true},
				{2, "The pump of claim l, with a valve.", false},
			},
		},
		{
			name: "end marker dropped",
			text: "1. A pump.\n2. A valve. * * * * *",
			want: []Claim{{1, "A pump.", true}, {2, "A valve.", true}},
		},
		{
			name: "any one of claims",
			text: "1. A cup.\n2. A lid for the cup as claimed in any one of the preceding claims.\n3. A set according to any of claims, with a saucer.",
			want: []Claim{
				{1, "A cup.", true},
				{2, "A lid for the cup as claimed in any one of the preceding claims.", false},
				{3, "A set according to any of claims, with a saucer.", false},
			},
		},
		{
			name: "claimed is not a reference",
			text: "1. A system as claimed herein.",
			want: []Claim{{1, "A system as claimed herein.", true}},
		},
		{
			name: "no claim 1",
			text: "2. The device of claim 1.",
			want: nil,
		},
		{
			name: "empty",
			text: "",
			want: nil,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := splitClaims(tt.text)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("splitClaims(%q)\n got  %+v\n want %+v", tt.text, got, tt.want)
			}
		})
	}
}

func TestDependent(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"The method of claim 1, wherein", true},
		{"The method of claims 1-3", true},
		{"as claimed in claim12", true},
		{"according to any one of claims 1 to 5", true},
		{"according to any of the previous claims", true},
		{"The method of claim l, wherein", true},
		{"A method comprising a step", false},
		{"the claimed subject matter", false},
		{"A device as claimed", false},
	} {
		if got := reDependent.MatchString(tt.text); got != tt.want {
			t.Errorf("dependent(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
