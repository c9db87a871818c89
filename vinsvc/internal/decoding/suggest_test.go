package decoding_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/decoding"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// decodesEverything is a snapshot that knows every WMI: each VIN but
// unknown decodes to a make and a model year, with as many more fields as
// fields says.
func decodesEverything(unknown string, fields func(v string) int) *fakeSnapshot {
	return &fakeSnapshot{DecodeFn: func(_ context.Context, v string) (vin.Decoded, error) {
		if v == unknown {
			return vin.Decoded{}, errUnknownWMI
		}
		mk, model, year, trim := "MAKE", "MODEL", "2020", "TRIM"
		r := vin.Result{VIN: v, Make: &mk, ModelYear: &year, ErrorCode: "0"}
		if fields(v) > 0 {
			r.Model = &model
		}
		if fields(v) > 1 {
			r.Trim = &trim
		}
		return vin.Decoded{Result: r}, nil
	}}
}

func suggester(snap decoding.Snapshot) *decoding.Snapshots {
	return decoding.NewSnapshots(snap, vin.SnapshotOnly, 0, slog.New(slog.NewJSONHandler(io.Discard, nil)))
}

// TestSuggestBounded: whatever the input, a request decodes at most the
// candidates of one edit and the input itself: an insertion into a
// European 16-character VIN, where no check digit prunes, is the most.
func TestSuggestBounded(t *testing.T) {
	snap := decodesEverything("WBA3A5C51CF256987", func(string) int { return 0 })
	h := suggester(snap)
	for _, typed := range []string{"WBA3A5C51CF25698", "WBA3A5C51CF256987", "WBA3A5C51CF2569877", "IHGCM82633A004352", "OQIOQIOQIOQIOQIOQ"} {
		before := snap.decodes.Load()
		s, err := h.Suggest(context.Background(), typed)
		if err != nil {
			t.Fatal(err)
		}
		n := int(snap.decodes.Load() - before)
		if n != s.Decoded || n > len(vin.Candidates(typed))+1 || n > 562 {
			t.Errorf("Suggest(%s) decoded %d times (reported %d), %d candidates", typed, n, s.Decoded, len(vin.Candidates(typed)))
		}
		if len(s.Suggestions) > vin.MaxSuggestions {
			t.Errorf("Suggest(%s) = %d suggestions", typed, len(s.Suggestions))
		}
	}
}

// TestSuggestStopsEarly: five look-alike candidates that decode end the
// decoding before the costlier candidates, which could only rank below
// them; the cheapest come first.
func TestSuggestStopsEarly(t *testing.T) {
	snap := decodesEverything("WB83A5C51CF256987", func(string) int { return 0 })
	s, err := suggester(snap).Suggest(context.Background(), "WB83A5C51CF256987") // 8 for B, 5 for S...: many look-alikes
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Suggestions) != vin.MaxSuggestions || s.Decoded >= len(vin.Candidates("WB83A5C51CF256987")) {
		t.Fatalf("decoded %d of %d candidates for %d suggestions", s.Decoded, len(vin.Candidates("WB83A5C51CF256987")), len(s.Suggestions))
	}
	for _, x := range s.Suggestions {
		if x.Cost != vin.CostConfusable {
			t.Errorf("suggestion %+v, want only look-alikes", x)
		}
	}
}

// TestSuggestRanksFullerDecodes: among candidates of one cost, the one
// that decodes more fully comes first; a candidate without a model year is
// no suggestion; a valid input is answered valid after one decode.
func TestSuggestRanksFullerDecodes(t *testing.T) {
	// 8 typed for 7 or for 9, both neighbouring keys: 7 is made first, 9
	// decodes more fully and must rank first.
	const want, sibling, typed = "WBA3A5C51CF256989", "WBA3A5C51CF256987", "WBA3A5C51CF256988"
	snap := &fakeSnapshot{DecodeFn: func(_ context.Context, v string) (vin.Decoded, error) {
		if v != want && v != sibling {
			return vin.Decoded{}, errUnknownWMI
		}
		mk, model, year := "MAKE", "MODEL", "2020"
		r := vin.Result{VIN: v, Make: &mk, ModelYear: &year, ErrorCode: "0"}
		if v == want {
			r.Model = &model
		}
		return vin.Decoded{Result: r}, nil
	}}
	h := suggester(snap)
	s, err := h.Suggest(context.Background(), typed)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Suggestions) != 2 || s.Suggestions[0].VIN != want || s.Suggestions[0].Model != "MODEL" || s.Suggestions[1].VIN != sibling {
		t.Errorf("suggestions = %+v, want %s, the fuller decode, then %s", s.Suggestions, want, sibling)
	}

	s, err = h.Suggest(context.Background(), want)
	if err != nil || !s.Valid || len(s.Suggestions) != 0 || s.Decoded != 1 {
		t.Errorf("Suggest(valid) = %+v, %v; want valid after one decode", s, err)
	}

	noYear := &fakeSnapshot{DecodeFn: func(_ context.Context, v string) (vin.Decoded, error) {
		mk := "MAKE"
		return vin.Decoded{Result: vin.Result{VIN: v, Make: &mk}}, nil
	}}
	s, err = suggester(noYear).Suggest(context.Background(), "IHGCM82633A004352")
	if err != nil || len(s.Suggestions) != 0 {
		t.Errorf("suggestions without a model year = %+v, %v; want none", s.Suggestions, err)
	}
}

// TestSuggestWithoutSnapshot: vin.ErrNoSnapshot, and a request whose
// context ends is cut short with its error.
func TestSuggestWithoutSnapshot(t *testing.T) {
	h := decoding.NewSnapshots(nil, vin.SnapshotFallback, 0, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if _, err := h.Suggest(context.Background(), "IHGCM82633A004352"); !errors.Is(err, vin.ErrNoSnapshot) {
		t.Errorf("Suggest without a snapshot = %v, want ErrNoSnapshot", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	snap := &fakeSnapshot{DecodeFn: func(ctx context.Context, v string) (vin.Decoded, error) {
		cancel() // the client goes away during the first decode
		return vin.Decoded{}, ctx.Err()
	}}
	s, err := suggester(snap).Suggest(ctx, "WBA3A5C51CF25698")
	if !errors.Is(err, context.Canceled) || s.Decoded != 1 {
		t.Errorf("Suggest with its context ended = %d decodes, %v; want one and context.Canceled", s.Decoded, err)
	}
}
