package vpicdb_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpicdb"
)

// vinAlphabet are the characters a valid VIN may hold.
const vinAlphabet = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"

// asVIN turns any input into a valid VIN: each of the first 17 bytes picks
// a character (a shorter input is padded), so the fuzzer explores VINs.
func asVIN(s string) string {
	b := make([]byte, vin.Len)
	for i := range b {
		c := byte('1')
		if i < len(s) {
			c = s[i]
		}
		if strings.IndexByte(vinAlphabet, c) < 0 {
			c = vinAlphabet[int(c)%len(vinAlphabet)]
		}
		b[i] = c
	}
	return string(b)
}

// FuzzDecode: every valid VIN decodes to either ErrUnknownWMI or a record
// with an ErrorCode, and never panics.
func FuzzDecode(f *testing.F) {
	for _, v := range fixedVINs {
		f.Add(v)
	}
	f.Add("1Z9ZZZZZZZZZZZZZZ")
	f.Add("LRW00000000000000")
	f.Add("3VW000000000000000")
	f.Fuzz(func(t *testing.T, s string) {
		db := mustOpenShared(t)
		v := asVIN(s)
		d, err := db.Decode(t.Context(), v)
		switch {
		case errors.Is(err, vpicdb.ErrUnknownWMI):
		case err != nil:
			t.Fatalf("Decode(%q) = %v", v, err)
		case d.Result.ErrorCode == "" || d.Result.VIN != v || len(d.Raw) == 0:
			t.Fatalf("Decode(%q) = %+v, want a record with an ErrorCode", v, d.Result)
		}
	})
}
