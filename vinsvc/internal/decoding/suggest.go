package decoding

import (
	"cmp"
	"context"
	"slices"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// Suggest answers typed (as vin.ParseTyped gives it) from the snapshot:
// valid when it is a well-formed VIN whose check digit holds where it
// applies and that decodes to a make; otherwise the candidates one edit
// away (vin.Candidates) that decode to a make and a model year, the
// likelier mistakes first and, among equals, the fuller decodes.
//
// The candidates are decoded cheapest first, and no further once five are
// found and the next costs more than the fifth: a mistake of the cheap
// kinds (a confusable character, a swap, a neighbouring key) is answered
// after a few dozen decodes, and no request decodes more than the
// candidates of one edit (561 at most). A loading snapshot is waited for
// as a decode waits for it.
func (h *Snapshots) Suggest(ctx context.Context, typed string) (vin.Suggestions, error) {
	out := vin.Suggestions{VIN: typed, Suggestions: []vin.Suggestion{}}
	if !h.await(ctx) {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		return out, vin.ErrNoSnapshot
	}
	snap := h.current()
	if vin.CheckDigitOK(typed) {
		d, err := snap.Decode(ctx, typed)
		out.Decoded++
		if err == nil && d.Result.Make != nil {
			out.Valid = true
			return out, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return out, ctxErr
		}
	}
	type found struct {
		vin.Suggestion
		fullness int
	}
	var hits []found
	for _, c := range vin.Candidates(typed) {
		if len(hits) >= vin.MaxSuggestions && c.Cost > hits[vin.MaxSuggestions-1].Cost {
			break // every later candidate ranks below the five found
		}
		d, err := snap.Decode(ctx, c.VIN)
		out.Decoded++
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return out, ctxErr
			}
			continue // a WMI the snapshot does not know, or a failed read: not a suggestion
		}
		r := d.Result
		if r.Make == nil || r.ModelYear == nil {
			continue
		}
		hits = append(hits, found{vin.Suggestion{Candidate: c, Make: *r.Make, Model: deref(r.Model), ModelYear: *r.ModelYear}, fullness(r)})
	}
	slices.SortStableFunc(hits, func(a, b found) int {
		return cmp.Or(cmp.Compare(a.Cost, b.Cost), cmp.Compare(b.fullness, a.fullness), compareBool(b.Doubled, a.Doubled))
	})
	for _, f := range hits[:min(len(hits), vin.MaxSuggestions)] {
		out.Suggestions = append(out.Suggestions, f.Suggestion)
	}
	return out, nil
}

// fullness ranks a decode among equally likely mistakes: a clean decode
// (error code 0) above any other, then by how many fields it fills.
func fullness(r vin.Result) int {
	n := 0
	for _, p := range []*string{r.Make, r.Model, r.ModelYear, r.Trim, r.Series, r.BodyClass, r.DriveType,
		r.FuelTypePrimary, r.TransmissionStyle, r.TransmissionSpeeds, r.PlantCity, r.PlantState,
		r.PlantCountry, r.ManufacturerName, r.VehicleType} {
		if p != nil {
			n++
		}
	}
	if r.EngineDisplacementL != nil {
		n++
	}
	if r.EngineCylinders != nil {
		n++
	}
	if r.ErrorCode == "0" {
		n += 100
	}
	return n
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
