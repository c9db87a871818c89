package vin_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// TestCleanText: control characters go (white-space ones become a space),
// invalid bytes become U+FFFD, everything else stays.
func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"Ford":                "Ford",
		"Fo\x00rd":            "Ford",
		"Ford\tMotor\r\nCo.":  "Ford Motor  Co.",
		"Citroën \u0085Paris": "Citroën  Paris",
		"bad \xff\xfe byte":   "bad \ufffd\ufffd byte",
		"\x1b[31mred\x1b[0m":  "[31mred[0m",
		"日本":                  "日本",
	} {
		if got := vin.CleanText(in); got != want {
			t.Errorf("CleanText(%q) = %q, want %q", in, got, want)
		}
		if again := vin.CleanText(want); again != want {
			t.Errorf("CleanText is not idempotent on %q: %q", want, again)
		}
	}
}

// TestFlatRecordCleaned: a vPIC record whose values hold NUL, control
// characters or invalid UTF-8 decodes to clean values, and its raw record
// (raw=true) is cleaned too, with its keys in their order; a clean record
// is kept byte for byte.
func TestFlatRecordCleaned(t *testing.T) {
	dirty := json.RawMessage("{\"Make\":\"FO\\u0000RD\",\"Model\":\"F-150\\nXL\\u001b\",\"ErrorCode\":\"0\",\"PlantCity\":\"DEAR\xffBORN\",\"DisplacementL\":\"3.5\",\"Note\":\"caf\\u00e9\"}")
	r, err := vin.ParseFlatRecord(dirty)
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Decoded("1FTFW1ET5DFC10312")
	if err != nil {
		t.Fatal(err)
	}
	if *d.Result.Make != "FORD" || *d.Result.Model != "F-150 XL" || *d.Result.PlantCity != "DEAR\ufffdBORN" {
		t.Errorf("decoded %q %q %q, want the values cleaned", *d.Result.Make, *d.Result.Model, *d.Result.PlantCity)
	}
	raw := string(d.Raw)
	for _, bad := range []string{`\u0000`, `\n`, `\u001b`, "\xff"} {
		if strings.Contains(raw, bad) {
			t.Errorf("raw record %s still holds %q", raw, bad)
		}
	}
	if want := `{"Make":"FORD","Model":"F-150 XL","ErrorCode":"0","PlantCity":"DEAR` + "\ufffd" + `BORN","DisplacementL":"3.5","Note":"caf\u00e9"}`; raw != want {
		t.Errorf("raw record = %s, want %s (keys in order, clean values as they were)", raw, want)
	}
	clean := json.RawMessage(`{"Make":"FORD","Model":"F-150","ErrorCode":"0"}`)
	if r, _ := vin.ParseFlatRecord(clean); string(r.Raw()) != string(clean) {
		t.Errorf("a clean record became %s", r.Raw())
	}
}

// FuzzCleanText: whatever vPIC sends, the text kept is valid UTF-8 without
// a control character, cleaning it again changes nothing, and clean text
// is kept as it is.
func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"TOYOTA", "Line\x00One\r\nTwo", "Citro\xebn", "\u0085\u009f\u007f", "Škoda\tOctavia"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := vin.CleanText(in)
		if !utf8.ValidString(got) {
			t.Fatalf("CleanText(%q) = %q: invalid UTF-8", in, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) {
				t.Fatalf("CleanText(%q) = %q holds %U", in, got, r)
			}
		}
		if again := vin.CleanText(got); again != got {
			t.Fatalf("CleanText(%q) = %q, cleaned again %q", in, got, again)
		}
		if utf8.ValidString(in) && !strings.ContainsFunc(in, unicode.IsControl) && got != in {
			t.Fatalf("CleanText(%q) = %q: clean text changed", in, got)
		}
	})
}
