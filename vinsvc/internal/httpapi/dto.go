package httpapi

import (
	"encoding/json"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// resultJSON is the spec's VinDecodeResult. Every field is always present,
// null when unknown; raw is present only when asked for.
type resultJSON struct {
	VIN                  string          `json:"vin"`
	Make                 *string         `json:"make"`
	Model                *string         `json:"model"`
	ModelYear            *string         `json:"model_year"`
	Trim                 *string         `json:"trim"`
	Series               *string         `json:"series"`
	BodyClass            *string         `json:"body_class"`
	DriveType            *string         `json:"drive_type"`
	EngineDisplacementCC *float64        `json:"engine_displacement_cc"`
	EngineDisplacementL  *float64        `json:"engine_displacement_l"`
	EngineCylinders      *int            `json:"engine_cylinders"`
	FuelTypePrimary      *string         `json:"fuel_type_primary"`
	TransmissionStyle    *string         `json:"transmission_style"`
	TransmissionSpeeds   *string         `json:"transmission_speeds"`
	PlantCity            *string         `json:"plant_city"`
	PlantState           *string         `json:"plant_state"`
	PlantCountry         *string         `json:"plant_country"`
	ManufacturerName     *string         `json:"manufacturer_name"`
	VehicleType          *string         `json:"vehicle_type"`
	ErrorCode            string          `json:"error_code"`
	ErrorText            *string         `json:"error_text"`
	Cached               bool            `json:"cached"`
	Source               string          `json:"source"`
	Raw                  json.RawMessage `json:"raw,omitempty"`
}

func fromOutcome(o vin.Outcome, withRaw bool) resultJSON {
	r := o.Result
	out := resultJSON{
		VIN: r.VIN, Make: r.Make, Model: r.Model, ModelYear: r.ModelYear, Trim: r.Trim, Series: r.Series,
		BodyClass: r.BodyClass, DriveType: r.DriveType,
		EngineDisplacementCC: r.EngineDisplacementCC, EngineDisplacementL: r.EngineDisplacementL,
		EngineCylinders: r.EngineCylinders, FuelTypePrimary: r.FuelTypePrimary,
		TransmissionStyle: r.TransmissionStyle, TransmissionSpeeds: r.TransmissionSpeeds,
		PlantCity: r.PlantCity, PlantState: r.PlantState, PlantCountry: r.PlantCountry,
		ManufacturerName: r.ManufacturerName, VehicleType: r.VehicleType,
		ErrorCode: r.ErrorCode, ErrorText: r.ErrorText,
		Cached: o.Cached, Source: vin.SourceOf(r),
	}
	if withRaw {
		out.Raw = o.Raw
		if len(out.Raw) == 0 {
			out.Raw = json.RawMessage("{}")
		}
	}
	return out
}

// itemErrorJSON is the spec's VinDecodeError, a batch entry that failed.
type itemErrorJSON struct {
	VIN     string `json:"vin"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// batchJSON is the 200 body of POST /v1/batch. Each result is a resultJSON
// or an itemErrorJSON.
type batchJSON struct {
	Results     []any `json:"results"`
	Count       int   `json:"count"`
	CachedCount int   `json:"cached_count"`
	ErrorCount  int   `json:"error_count"`
}
