package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// suggestionsJSON is the 200 body of GET /v1/suggest (decisions.md,
// "vinsvc: suggestions for a mistyped VIN").
type suggestionsJSON struct {
	VIN         string           `json:"vin"`
	Valid       bool             `json:"valid"`
	Suggestions []suggestionJSON `json:"suggestions"`
}

type suggestionJSON struct {
	VIN       string `json:"vin"`
	Edit      string `json:"edit"`
	Positions []int  `json:"positions"`
	Make      string `json:"make"`
	Model     string `json:"model"`
	ModelYear string `json:"model_year"`
}

// handleSuggest serves GET /v1/suggest?vin=: the input as typed, 16 to 18
// letters and digits (I, O, Q allowed); anything else is 400 BAD_REQUEST,
// no snapshot 503 SNAPSHOT_UNAVAILABLE.
func handleSuggest(dec Decoder) echo.HandlerFunc {
	return func(c echo.Context) error {
		vins := paramOf(c.QueryParams()["vin"])
		if vins.n == 0 || vin.Normalize(vins.first) == "" {
			return badRequest("missing required query parameter vin")
		}
		if vins.n > 1 {
			return badRequest("query parameter vin given %d times; give it once", vins.n)
		}
		typed, err := vin.ParseTyped(vins.first)
		if err != nil {
			return badRequest("%s", err) // what is wrong with it, as INVALID_VIN says it, but BAD_REQUEST here
		}
		s, err := dec.Suggest(c.Request().Context(), typed)
		if err != nil {
			return err
		}
		out := suggestionsJSON{VIN: s.VIN, Valid: s.Valid, Suggestions: make([]suggestionJSON, 0, len(s.Suggestions))}
		for _, x := range s.Suggestions {
			out.Suggestions = append(out.Suggestions, suggestionJSON{VIN: x.VIN, Edit: x.Edit, Positions: x.Positions, Make: x.Make, Model: x.Model, ModelYear: x.ModelYear})
		}
		return c.JSON(http.StatusOK, out)
	}
}
