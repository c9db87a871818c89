// Compiled with the types openapi-typescript generates from the OpenAPI
// documents (make api-check writes them to build/): a few answers as a
// TypeScript caller would read them, so that tsc --noEmit checks that the
// generated types are usable, not only that they parse.
import type { components as Vin, operations as VinOps } from "./build/vinsvc";
import type { components as Patent, operations as PatentOps } from "./build/patentsvc";

type DecodeOK = VinOps["decodeVin"]["responses"][200]["content"]["application/json"];
export const decoded: DecodeOK = {
  vin: "1HGCM82633A004352", make: "HONDA", model: "Accord", model_year: "2003", trim: "EX-V6",
  series: null, body_class: null, drive_type: null, engine_displacement_cc: 2998,
  engine_displacement_l: 3, engine_cylinders: 6, fuel_type_primary: "Gasoline",
  transmission_style: null, transmission_speeds: null, plant_city: null, plant_state: null,
  plant_country: null, manufacturer_name: null, vehicle_type: "PASSENGER CAR", error_code: "0",
  error_text: null, cached: false, source: "vpic",
};
export const vinError: Vin["schemas"]["Error"] = { error: "INVALID_VIN", message: "bad VIN", status: 400 };
export const batch: Vin["schemas"]["BatchRequest"] = { vins: [decoded.vin] };

type Models = PatentOps["listModels"]["responses"][200]["content"]["application/json"];
export function defaultModel(m: Models): Patent["schemas"]["ModelId"] {
  return m.default;
}
export const tokens: Patent["schemas"]["Tokens"] = {
  access_token: "a", refresh_token: "r", token_type: "bearer", expires_in: 1800,
};
