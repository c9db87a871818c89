package patent_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

func TestParseCompanyName(t *testing.T) {
	for _, tt := range []struct {
		in      string
		wantErr string
	}{
		{"IBM", ""},
		{"3M", ""},
		{"AT&T Inc.", ""},
		{"Johnson & Johnson", ""},
		{"Rolls-Royce Holdings", ""},
		{"ab", ""},
		{strings.Repeat("a", 100), ""},
		{"a", "2 to 100 characters, got 1"},
		{"", "got 0"},
		{strings.Repeat("a", 101), "got 101"},
		{" IBM", "start with a letter or digit"},
		{"-IBM", "start with a letter or digit"},
		{"&Co", "start with a letter or digit"},
		{"IBM,", "',' at position 4"},
		{"Nestlé", "'é' at position 6"},
		{"Foo/Bar", "'/'"},
		{"Foo\nBar", "'\\n'"},
		{"Foo_Bar", "'_'"},
		{"Ｉｂｍ", "start with a letter or digit"},
	} {
		got, err := patent.ParseCompanyName(tt.in)
		if tt.wantErr == "" {
			if err != nil || string(got) != tt.in {
				t.Errorf("ParseCompanyName(%q) = %q, %v; want it accepted as is", tt.in, got, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, patent.ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseCompanyName(%q) error = %v, want ErrInvalid mentioning %q", tt.in, err, tt.wantErr)
		}
	}
	if got := patent.CompanyName("Acme Corp").Key(); got != "acme corp" {
		t.Errorf("Key() = %q", got)
	}
}

func FuzzParseCompanyName(f *testing.F) {
	for _, s := range []string{"IBM", "AT&T Inc.", "a", " x", "Nestlé", strings.Repeat("z", 101), "\x00\xff", "0-.&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := patent.ParseCompanyName(s)
		if err != nil {
			if !errors.Is(err, patent.ErrInvalid) {
				t.Fatalf("ParseCompanyName(%q) error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if string(got) != s || len(s) < 2 || len(s) > 100 {
			t.Fatalf("ParseCompanyName(%q) accepted %q", s, got)
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || i > 0 && (c == ' ' || c == '&' || c == '.' || c == '-')
			if !ok {
				t.Fatalf("ParseCompanyName(%q) accepted byte %q at %d", s, c, i)
			}
		}
	})
}

func TestResolveModel(t *testing.T) {
	if got, err := patent.ResolveModel("", patent.DefaultModel); err != nil || got != patent.DefaultModel {
		t.Errorf("ResolveModel(\"\") = %q, %v; want the default", got, err)
	}
	if got, err := patent.ResolveModel("mistralai/mistral-nemo", patent.DefaultModel); err != nil || got != "mistralai/mistral-nemo" {
		t.Errorf("ResolveModel(mistral) = %q, %v", got, err)
	}
	_, err := patent.ResolveModel("openai/gpt-5", patent.DefaultModel)
	if !errors.Is(err, patent.ErrUnknownModel) {
		t.Fatalf("ResolveModel(unknown) error = %v, want ErrUnknownModel", err)
	}
	for _, id := range patent.ModelIDs() {
		if !strings.Contains(err.Error(), id) {
			t.Errorf("error %q does not list %s", err, id)
		}
	}
	ms := patent.Models()
	if len(ms) != 5 {
		t.Fatalf("%d models, want exactly 5", len(ms))
	}
	for _, m := range ms {
		provider, _, ok := strings.Cut(m.ID, "/")
		if !ok || provider != m.Provider || m.Name == "" {
			t.Errorf("model %+v: id must be <provider>/<model> with a matching provider and a name", m)
		}
	}
}

func TestParseEmail(t *testing.T) {
	for in, want := range map[string]string{
		"Ada@Example.com":                  "ada@example.com",
		"a.b+tag@sub.example.org":          "a.b+tag@sub.example.org",
		"":                                 "",
		"ada":                              "",
		"ada@":                             "",
		"@example.com":                     "",
		"ada@example":                      "",
		"Ada <ada@example.com>":            "",
		"ada@example.com ":                 "",
		"ada@@example.com":                 "",
		strings.Repeat("a", 250) + "@x.io": "",
	} {
		got, err := patent.ParseEmail(in)
		if want == "" {
			if err == nil || !errors.Is(err, patent.ErrInvalid) {
				t.Errorf("ParseEmail(%q) = %q, %v; want ErrInvalid", in, got, err)
			}
		} else if err != nil || got != want {
			t.Errorf("ParseEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestPasswordAndRole(t *testing.T) {
	for p, ok := range map[string]bool{"1234567": false, "12345678": true, strings.Repeat("x", 72): true, strings.Repeat("x", 73): false} {
		if err := patent.CheckPassword(p); (err == nil) != ok {
			t.Errorf("CheckPassword(%d bytes) = %v, want ok=%v", len(p), err, ok)
		}
	}
	for s, ok := range map[string]bool{"admin": true, "user": true, "Admin": false, "root": false, "": false} {
		if _, err := patent.ParseRole(s); (err == nil) != ok {
			t.Errorf("ParseRole(%q) = %v, want ok=%v", s, err, ok)
		}
	}
}

func TestCountChangeAlert(t *testing.T) {
	for _, tt := range []struct {
		old, new  int
		threshold float64
		want      string // "" = no alert
	}{
		{0, 14, 20, ""}, // no baseline: never an alert
		{10, 14, 20, "Patent count for Acme increased by 40.0% (from 10 to 14)"},
		{10, 6, 20, "Patent count for Acme decreased by 40.0% (from 10 to 6)"},
		{10, 12, 20, "Patent count for Acme increased by 20.0% (from 10 to 12)"}, // exactly at the threshold
		{10, 11, 20, ""},
		{10, 10, 0, ""},
		{3, 4, 33.3, "Patent count for Acme increased by 33.3% (from 3 to 4)"},
		{3, 4, 33.4, ""},
		{10, 0, 100, "Patent count for Acme decreased by 100.0% (from 10 to 0)"},
		{1000, 1001, 0.1, "Patent count for Acme increased by 0.1% (from 1000 to 1001)"},
	} {
		a, ok := patent.CountChangeAlert("Acme", tt.old, tt.new, tt.threshold)
		if ok != (tt.want != "") || a.Message != tt.want {
			t.Errorf("CountChangeAlert(%d -> %d, %v%%) = %q, %v; want %q", tt.old, tt.new, tt.threshold, a.Message, ok, tt.want)
			continue
		}
		if ok && (a.AlertType != "patent_count_change" || a.OldValue != float64(tt.old) || a.NewValue != float64(tt.new) || a.CompanyName != "Acme") {
			t.Errorf("alert = %+v", a)
		}
	}
}

func TestNewKindError(t *testing.T) {
	err := patent.NewKindError(patent.ErrPDFNotFound, "pdf link not allowed")
	wrapped := fmt.Errorf("fetch US1: %w", err)
	if err.Error() != "pdf link not allowed" || !errors.Is(wrapped, patent.ErrPDFNotFound) || !errors.Is(wrapped, err) {
		t.Errorf("NewKindError: text %q, Is(kind)=%v, Is(itself)=%v", err, errors.Is(wrapped, patent.ErrPDFNotFound), errors.Is(wrapped, err))
	}
	if errors.Is(wrapped, patent.ErrNotFound) || errors.Is(wrapped, patent.ErrInvalid) {
		t.Error("a kind error matches kinds it is not")
	}
	if inv := patent.Invalidf("x must be %d", 3); inv.Error() != "x must be 3" || !errors.Is(inv, patent.ErrInvalid) {
		t.Errorf("Invalidf = %v", inv)
	}
}
