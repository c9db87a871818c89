package vin_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    string
		wantErr string // substring; empty means valid
	}{
		{"1HGCM82633A004352", "1HGCM82633A004352", ""},
		{"  1hgcm82633a004352\t\n", "1HGCM82633A004352", ""},
		{"3VV3B7AXXNM077525", "3VV3B7AXXNM077525", ""},
		{"11111111111111111", "11111111111111111", ""},
		{"", "", "exactly 17 characters, got 0"},
		{"1HGCM82633A00435", "1HGCM82633A00435", "got 16"},
		{"1HGCM82633A0043521", "1HGCM82633A0043521", "got 18"},
		{"1HGCM82633A00435I", "1HGCM82633A00435I", "position 17"},
		{"OHGCM82633A004352", "OHGCM82633A004352", `'O' at position 1`},
		{"1HGCM82633Q004352", "1HGCM82633Q004352", `'Q' at position 11`},
		{"1HGCM826*3A004352", "1HGCM826*3A004352", `'*' at position 9`},
		{"1HGCM82 33A004352", "1HGCM82 33A004352", "position 8"},
		{"1HGCM82633A00435é", "1HGCM82633A00435é", "position 17"},
		// Unicode case mapping would make these ASCII (ſ to S, ı to I,
		// ﬀ to FF): only ASCII letters are upper-cased, the rest refused.
		{"1HGCM82633A00435ſ", "1HGCM82633A00435ſ", `'ſ' at position 17`},
		{"ſHGCM82633A004352", "ſHGCM82633A004352", `'ſ' at position 1`},
		{"1HGCM82633A00435ı", "1HGCM82633A00435ı", "position 17"},
		{"1HGCM82633A0043ﬀ", "1HGCM82633A0043ﬀ", "got 16"}, // ToUpper made it FF: 17
		{"1HGCM82633A0043-2", "1HGCM82633A0043-2", "position 16"},
	} {
		got, err := vin.Parse(tt.in)
		if got != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
		}
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Parse(%q) error = %v, want none", tt.in, err)
		case tt.wantErr != "" && (err == nil || !errors.Is(err, vin.ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Parse(%q) error = %v, want ErrInvalid containing %q", tt.in, err, tt.wantErr)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1HGCM82633A004352", " 1hgcm82633a004352 ", "", "IOQ", "1HGCM82633A00435é", "\x00\xff", strings.Repeat("A", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := vin.Parse(s)
		if v != vin.Normalize(s) {
			t.Fatalf("Parse(%q) returned %q, not the normalised form %q", s, v, vin.Normalize(s))
		}
		if (err == nil) != vin.Valid(v) {
			t.Fatalf("Parse(%q) error %v disagrees with Valid(%q) = %v", s, err, v, vin.Valid(v))
		}
		if err == nil {
			if len(v) != vin.Len || strings.ContainsAny(v, "IOQ") || strings.ToUpper(v) != v {
				t.Fatalf("Parse(%q) accepted %q", s, v)
			}
			// Normalising twice changes nothing.
			if again, err := vin.Parse(v); err != nil || again != v {
				t.Fatalf("Parse(%q) = %q, %v; want it unchanged", v, again, err)
			}
		} else if !errors.Is(err, vin.ErrInvalid) {
			t.Fatalf("Parse(%q) error %v does not wrap ErrInvalid", s, err)
		}
	})
}

func TestNewKindError(t *testing.T) {
	own := vin.NewKindError(vin.ErrUpstream, "client failure")
	wrapped := fmt.Errorf("%w: decode: status 503", own)
	if got, want := wrapped.Error(), "client failure: decode: status 503"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	for _, tt := range []struct {
		name   string
		target error
		want   bool
	}{
		{"its kind", vin.ErrUpstream, true},
		{"itself", own, true},
		{"another kind", vin.ErrInvalid, false},
		{"another error of the kind", vin.NewKindError(vin.ErrUpstream, "client failure"), false},
	} {
		if got := errors.Is(wrapped, tt.target); got != tt.want {
			t.Errorf("errors.Is(wrapped, %s) = %t, want %t", tt.name, got, tt.want)
		}
	}
}
