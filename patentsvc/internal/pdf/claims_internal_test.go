package pdf

import (
	"reflect"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

func TestSplitClaims(t *testing.T) {
	for _, tt := range []struct {
		name string
		text string
		want []patent.Claim
	}{
		{
			name: "lines",
			text: "What is claimed is:\n1. A device comprising:\na part.\n2. The device of claim 1, wherein\nthe part is red.\n3. A method of making a device.",
			want: []patent.Claim{
				{Number: 1, Text: "A device comprising: a part.", Independent: true},
				{Number: 2, Text: "The device of claim 1, wherein the part is red.", Independent: false},
				{Number: 3, Text: "A method of making a device.", Independent: true},
			},
		},
		{
			name: "one line",
			text: "We claim: 1. A widget. 2. The widget of claim 1, being blue. 3. The widget of claims 1-2, being round.",
			want: []patent.Claim{
				{Number: 1, Text: "A widget.", Independent: true},
				{Number: 2, Text: "The widget of claim 1, being blue.", Independent: false},
				{Number: 3, Text: "The widget of claims 1-2, being round.", Independent: false},
			},
		},
		{
			name: "numbers inside a claim do not split it",
			text: "1. A mixture of 2. parts water and 3. parts salt; 3. The mixture heated.\n2. The mixture of claim 1, cooled.",
			want: []patent.Claim{
				{Number: 1, Text: "A mixture of 2. parts water and 3. parts salt; 3. The mixture heated.", Independent: true},
				{Number: 2, Text: "The mixture of claim 1, cooled.", Independent: false},
			},
		},
		{
			name: "OCR reads 1. as l. and 2. as 2,",
			text: "I claim:\nl. A pump.\n2, The pump of claim l, with a valve.",
			want: []patent.Claim{
				{Number: 1, Text: "A pump.", Independent: true},
				{Number: 2, Text: "The pump of claim l, with a valve.", Independent: false},
			},
		},
		{
			name: "end marker dropped",
			text: "1. A pump.\n2. A valve. * * * * *",
			want: []patent.Claim{{Number: 1, Text: "A pump.", Independent: true}, {Number: 2, Text: "A valve.", Independent: true}},
		},
		{
			name: "any one of claims",
			text: "1. A cup.\n2. A lid for the cup as claimed in any one of the preceding claims.\n3. A set according to any of claims, with a saucer.",
			want: []patent.Claim{
				{Number: 1, Text: "A cup.", Independent: true},
				{Number: 2, Text: "A lid for the cup as claimed in any one of the preceding claims.", Independent: false},
				{Number: 3, Text: "A set according to any of claims, with a saucer.", Independent: false},
			},
		},
		{
			name: "claimed is not a reference",
			text: "1. A system as claimed herein.",
			want: []patent.Claim{{Number: 1, Text: "A system as claimed herein.", Independent: true}},
		},
		{
			name: "OCR reads 5. as §,",
			text: "1. A pump.\n2. The pump of claim 1, red.\n3. The pump of claim 1, blue.\n4. The pump of claim 1, big.\n§, The pump of claim 1, small.\n6. The pump of claim 5, round.",
			want: []patent.Claim{
				{Number: 1, Text: "A pump.", Independent: true},
				{Number: 2, Text: "The pump of claim 1, red.", Independent: false},
				{Number: 3, Text: "The pump of claim 1, blue.", Independent: false},
				{Number: 4, Text: "The pump of claim 1, big.", Independent: false},
				{Number: 5, Text: "The pump of claim 1, small.", Independent: false},
				{Number: 6, Text: "The pump of claim 5, round.", Independent: false},
			},
		},
		{
			name: "OCR lost a dependent claim's number",
			text: "1. A pump.\n2. The pump of claim 1, red.\nThe pump of claim 1, blue.\n4. The pump of claim 3, big.",
			want: []patent.Claim{
				{Number: 1, Text: "A pump.", Independent: true},
				{Number: 2, Text: "The pump of claim 1, red.", Independent: false},
				{Number: 3, Text: "The pump of claim 1, blue.", Independent: false},
				{Number: 4, Text: "The pump of claim 3, big.", Independent: false},
			},
		},
		{
			name: "a line like a dependent claim inside a claim",
			text: "1. A pump.\n2. The pump of claim 1, red.\nThe pump of claim 1, blue.\n3. The pump of claim 2, big.",
			want: []patent.Claim{
				{Number: 1, Text: "A pump.", Independent: true},
				{Number: 2, Text: "The pump of claim 1, red. The pump of claim 1, blue.", Independent: false},
				{Number: 3, Text: "The pump of claim 2, big.", Independent: false},
			},
		},
		{
			name: "table rows after a claim's last sentence",
			text: "1. A pump.\n2. The pump of claim 1, wherein it is red.\nShred Cut Quality\n1 T 8 LS 20\n3. The pump of claim 1, wherein it is\nabout 2 m long",
			want: []patent.Claim{
				{Number: 1, Text: "A pump.", Independent: true},
				{Number: 2, Text: "The pump of claim 1, wherein it is red.", Independent: false},
				{Number: 3, Text: "The pump of claim 1, wherein it is about 2 m long", Independent: false},
			},
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
