package vpicdb

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// flatKeys are the keys of vPIC's flat decode record (DecodeVinValues) as
// of 2026: 154, one per public element plus VIN, MakeID, ModelID and
// ManufacturerId (research §1.4 and its 2026 additions), in the order vPIC
// sends them: sorted by byte value ("CAN_AACN", "CIB", "CashForClunkers";
// "VIN" before "ValveTrainDesign"), as a recorded answer shows
// (davidpeckham/vpic-api tests/test_decode/decode-vin.json). An element
// whose code is not here is not returned.
var flatKeys = []string{
	"ABS", "ActiveSafetySysNote", "AdaptiveCruiseControl", "AdaptiveDrivingBeam", "AdaptiveHeadlights", "AdditionalErrorText",
	"AirBagLocCurtain", "AirBagLocFront", "AirBagLocKnee", "AirBagLocSeatCushion", "AirBagLocSide", "AutoReverseSystem",
	"AutomaticPedestrianAlertingSound", "AxleConfiguration", "Axles", "BasePrice", "BatteryA", "BatteryA_to",
	"BatteryCells", "BatteryInfo", "BatteryKWh", "BatteryKWh_to", "BatteryModules", "BatteryPacks",
	"BatteryType", "BatteryV", "BatteryV_to", "BedLengthIN", "BedType", "BlindSpotIntervention",
	"BlindSpotMon", "BodyCabType", "BodyClass", "BrakeSystemDesc", "BrakeSystemType", "BusFloorConfigType",
	"BusLength", "BusType", "CAN_AACN", "CIB", "CashForClunkers", "ChargerLevel",
	"ChargerPowerKW", "CombinedBrakingSystem", "CoolingType", "CurbWeightLB", "CustomMotorcycleType", "DaytimeRunningLight",
	"DestinationMarket", "DisplacementCC", "DisplacementCI", "DisplacementL", "Doors", "DriveType",
	"DriverAssist", "DynamicBrakeSupport", "EDR", "ESC", "EVDriveUnit", "ElectrificationLevel",
	"EngineConfiguration", "EngineCycles", "EngineCylinders", "EngineHP", "EngineHP_to", "EngineKW",
	"EngineManufacturer", "EngineModel", "EntertainmentSystem", "ErrorCode", "ErrorText", "ForwardCollisionWarning",
	"FuelInjectionType", "FuelTankMaterial", "FuelTankType", "FuelTypePrimary", "FuelTypeSecondary", "GCWR",
	"GCWR_to", "GVWR", "GVWR_to", "KeylessIgnition", "LaneCenteringAssistance", "LaneDepartureWarning",
	"LaneKeepSystem", "LowerBeamHeadlampLightSource", "Make", "MakeID", "Manufacturer", "ManufacturerId",
	"Model", "ModelID", "ModelYear", "MotorcycleChassisType", "MotorcycleSuspensionType", "NCSABodyType",
	"NCSAMake", "NCSAMapExcApprovedBy", "NCSAMapExcApprovedOn", "NCSAMappingException", "NCSAModel", "NCSANote",
	"NonLandUse", "Note", "OtherBusInfo", "OtherEngineInfo", "OtherMotorcycleInfo", "OtherRestraintSystemInfo",
	"OtherTrailerInfo", "ParkAssist", "PedestrianAutomaticEmergencyBraking", "PlantCity", "PlantCompanyName", "PlantCountry",
	"PlantState", "PossibleValues", "Pretensioner", "RearAutomaticEmergencyBraking", "RearCrossTrafficAlert", "RearVisibilitySystem",
	"SAEAutomationLevel", "SAEAutomationLevel_to", "SeatBeltsAll", "SeatRows", "Seats", "SemiautomaticHeadlampBeamSwitching",
	"Series", "Series2", "SteeringLocation", "SuggestedVIN", "TPMS", "TopSpeedMPH",
	"TrackWidth", "TractionControl", "TrailerBodyType", "TrailerLength", "TrailerType", "TransmissionSpeeds",
	"TransmissionStyle", "Trim", "Trim2", "Turbo", "VIN", "ValveTrainDesign",
	"VehicleDescriptor", "VehicleType", "WheelBaseLong", "WheelBaseShort", "WheelBaseType", "WheelSizeFront",
	"WheelSizeRear", "WheelieMitigation", "Wheels", "Windows",
}

// flatIndex returns the position of key in flatKeys, -1 when absent.
func flatIndex(key string) int {
	i, ok := slices.BinarySearch(flatKeys, key)
	if !ok {
		return -1
	}
	return i
}

// resolve looks the winning pass's values up (vPIC's 'XXX' items).
func (p *pass) resolve(s *snapshot) {
	for i := range p.items {
		if it := &p.items[i]; it.lookup {
			it.value = s.element(it.elem).value(it.attr)
			it.lookup = false
		}
	}
}

// flat renders the pass as vPIC's flat record, as JSON and as values by
// key. An element with several values (the notes) gets its distinct values
// joined by ", "; tabs and line breaks in values become spaces, as in vPIC.
func (d *decoder) flat(p *pass) (json.RawMessage, map[string]string) {
	vals := make([][]string, len(flatKeys))
	set := func(key, v string) {
		if i := flatIndex(key); i >= 0 {
			vals[i] = []string{v}
		}
	}
	for i := range p.items {
		it := &p.items[i]
		switch it.elem {
		case elMake:
			if vals[flatIndex("MakeID")] == nil {
				set("MakeID", it.attr)
			}
		case elModel:
			set("ModelID", it.attr)
		case elManufacturerID:
			set("ManufacturerId", it.attr)
		}
		e := d.s.element(it.elem)
		if e == nil || !e.output || e.flat < 0 || it.value == "" {
			continue
		}
		v := strings.Map(func(r rune) rune {
			if r == '\t' || r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, it.value)
		if !slices.Contains(vals[e.flat], v) {
			vals[e.flat] = append(vals[e.flat], v)
		}
	}
	set("VIN", d.vin)
	return encodeFlat(vals)
}

// encodeFlat writes the record as compact JSON in flatKeys order, and as a
// map of the same values.
func encodeFlat(vals [][]string) (json.RawMessage, map[string]string) {
	b := make([]byte, 0, 4096)
	m := make(map[string]string, len(flatKeys))
	b = append(b, '{')
	for i, k := range flatKeys {
		if i > 0 {
			b = append(b, ',')
		}
		v := strings.Join(vals[i], ", ")
		m[k] = v
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b = appendString(b, v)
	}
	return append(b, '}'), m
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(b, '"')
}
