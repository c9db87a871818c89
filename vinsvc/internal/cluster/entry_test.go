package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

var updateDict = flag.Bool("update-dict", false, "rewrite entry.dict (then bump recordKind's version)")

// entryDictSHA256 is entry.dict's hash. The dictionary is part of the
// stored format: a new one reads old entries as garbage, so it comes with
// a new recordKind version (and this hash).
const entryDictSHA256 = "a5b498f6d47df573f4ff2e2bdd3fe16f08caa21bdfe0047d3ab5840d10a8063c"

// TestEntryDictionaryFixed holds entry.dict to the format's version; with
// -update-dict it writes the dictionary: the entry of a real vPIC answer
// (the recorded 2003 Honda Accord).
func TestEntryDictionaryFixed(t *testing.T) {
	if *updateDict {
		raw, err := json.Marshal(vpictest.Record(vpictest.VINHondaAccord))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := vin.ParseFlatRecord(raw)
		if err != nil {
			t.Fatal(err)
		}
		d, err := rec.Decoded(vpictest.VINHondaAccord)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := json.Marshal(entry{Expires: 1<<41 - 1, Result: d.Result, Raw: d.Raw})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("entry.dict", plain, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("entry.dict written: sha256 %x", sha256.Sum256(plain))
		return
	}
	sum := sha256.Sum256(entryDict)
	if got := hex.EncodeToString(sum[:]); got != entryDictSHA256 {
		t.Fatalf("entry.dict changed (sha256 %s): bump recordKind's version and entryDictSHA256 together", got)
	}
}

// TestEntrySize: every recorded vPIC answer round-trips, and its stored
// entry stays under 1 KB (the raw record alone is 3.3 to 3.8 KB), which is
// what docs/operations.md sizes Redis by.
func TestEntrySize(t *testing.T) {
	for _, v := range []string{vpictest.VINFordF150, vpictest.VINHondaAccord, vpictest.VINVWTiguan,
		vpictest.VINHyundaiIoniq, vpictest.VINBMWCheckDigit, "5YJ3E1EA7KF317000"} {
		raw, _ := json.Marshal(vpictest.Record(v))
		rec, err := vin.ParseFlatRecord(raw)
		if err != nil {
			t.Fatal(err)
		}
		d, err := rec.Decoded(v)
		if err != nil {
			t.Fatal(err)
		}
		want := entry{Expires: 1_800_000_000_000, Result: d.Result, Raw: d.Raw}
		b, err := encodeEntry(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeEntry(b)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		wantJSON, _ := json.Marshal(want)
		gotJSON, _ := json.Marshal(got)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("%s: round trip changed the entry:\n%s\n%s", v, gotJSON, wantJSON)
		}
		t.Logf("%s: raw %d bytes, stored entry %d bytes", v, len(d.Raw), len(b))
		if len(b) > 1024 {
			t.Errorf("%s: stored entry is %d bytes, want under 1 KB", v, len(b))
		}
	}
}

// FuzzDecodeEntry: whatever Redis hands back (another program's key, a
// truncated value, a decompression bomb), decoding fails cleanly or gives
// an entry; it never panics or allocates without bound.
func FuzzDecodeEntry(f *testing.F) {
	good, _ := encodeEntry(entry{Expires: 1, Result: vin.Result{VIN: vpictest.VINHondaAccord, ErrorCode: "0"}})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"exp":1}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		if err != nil {
			return
		}
		again, err := encodeEntry(e)
		if err != nil {
			t.Fatalf("an entry that decoded does not encode: %v", err)
		}
		if _, err := decodeEntry(again); err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
	})
}
