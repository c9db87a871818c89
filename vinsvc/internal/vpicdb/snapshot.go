package vpicdb

import (
	"slices"
	"time"
)

// snapshot is everything decoding needs, read from the database at Open
// and never changed afterwards (so decodes share it without locks).
type snapshot struct {
	date   time.Time
	newest int64 // the newest timestamp read, Unix microseconds

	wmis map[string]*wmiRow

	// patterns holds every Pattern row, sorted by (VinSchemaId, Id);
	// schemaPatterns maps a VinSchemaId to its run of rows.
	patterns       []pattern
	schemaPatterns map[int32]span
	// qcSchemas are the VinSchemas marked TobeQCed, which vPIC leaves out
	// of public decodes.
	qcSchemas map[int32]bool

	keys  []key    // distinct Pattern.Keys, compiled; pattern.key indexes it
	masks []uint64 // the keys' character masks
	attrs []string // distinct Pattern.AttributeId values; pattern.attr indexes it

	elements []*element // by element id; nil where there is none

	// tables holds the name tables by lower-cased table name: Make,
	// Manufacturer, VehicleType and the elements' lookup tables.
	tables     map[string]map[int32]string
	makeNames  map[int32]string // Make.Name by Id
	modelMakes map[int32][]int32
	mfrNames   map[int32]string // Manufacturer.Name by Id
	vehTypes   map[int32]string // VehicleType.Name by Id

	engineModels map[string][]int32 // EngineModel ids by lower(trim(Name))
	engineParts  map[int32][]enginePart
	conversions  []conversion // by Id
}

// wmiRow is one Wmi row with its schemas and makes.
type wmiRow struct {
	id            int32
	wmi           string
	mfrID         int32 // 0: none
	vehicleTypeID int32 // 0: none
	truckTypeID   int32 // 0: none
	// public is when vPIC publishes the WMI (PublicAvailabilityDate); zero
	// when never (NULL), which vPIC's decode treats as unknown.
	public  time.Time
	created int64 // coalesce(UpdatedOn, CreatedOn), Unix microseconds; 0: NULL
	schemas []wmiSchema
	makes   []int32 // Wmi_Make rows whose Make exists
}

// wmiSchema is one Wmi_VinSchema row: a schema applies to the WMI for
// model years from..to (to is 2999 when open-ended, as in vPIC).
type wmiSchema struct {
	schema   int32
	from, to int
}

// carLT reports whether the WMI makes passenger cars, MPVs or light trucks
// (VehicleTypeId 2 or 7, or 3 with TruckTypeId 1), the vehicles whose
// position 7 fixes the model-year cycle and whose positions 13-17 are
// numeric (49 CFR 565.15).
func (w *wmiRow) carLT() bool {
	return w.vehicleTypeID == 2 || w.vehicleTypeID == 7 || (w.vehicleTypeID == 3 && w.truckTypeID == 1)
}

// availableAt reports whether vPIC publishes the WMI at t.
func (w *wmiRow) availableAt(t time.Time) bool {
	return !w.public.IsZero() && !w.public.After(t)
}

// schemaCount counts the WMI's schemas valid for the model year.
func (w *wmiRow) schemaCount(year int) int {
	n := 0
	for _, s := range w.schemas {
		if year >= s.from && year <= s.to {
			n++
		}
	}
	return n
}

// span is a run of snapshot.patterns.
type span struct{ start, end int32 }

// pattern is one Pattern row. 24 bytes: the 800k rows take about 19 MB.
type pattern struct {
	created int64 // coalesce(UpdatedOn, CreatedOn), Unix microseconds
	id      int32
	key     int32
	attr    int32
	elem    int16
}

// element is one Element row.
type element struct {
	id       int16
	code     string // the flat record's key (Make, BodyClass, ...)
	flat     int    // code's position in flatKeys, -1 when not there
	decoded  bool   // Decode is not NULL: vPIC matches its patterns
	public   bool   // IsPrivate is not set
	output   bool   // Decode is not empty and the element is public: vPIC returns it
	weight   int    // Element.weight, 0 when NULL; scores decode passes
	lookup   string // LookupTable, "" when none
	names    map[int32]string
	hasTable bool // the lookup table is in the snapshot (names loaded)
}

// value resolves an attribute to the element's value as vPIC's
// fElementAttributeValue does: a lookup element's name for the id (""
// when there is none), else the attribute itself.
func (e *element) value(attr string) string {
	if e == nil || e.lookup == "" {
		return attr
	}
	id, ok := parseID(attr)
	if !ok {
		return ""
	}
	return e.names[id]
}

// enginePart is one EngineModelPattern row: an element value that follows
// from the engine model.
type enginePart struct {
	id      int32
	elem    int16
	attr    string
	created int64
}

// conversion is one Conversion row: ToElementId = Formula with #x# the
// FromElementId's attribute.
type conversion struct {
	id       int32
	from, to int16
	formula  string
}

// element returns the element with the id, nil when there is none.
func (s *snapshot) element(id int16) *element {
	if id < 0 || int(id) >= len(s.elements) {
		return nil
	}
	return s.elements[id]
}

// schemaRows returns the Pattern rows of a schema, ordered by Id.
func (s *snapshot) schemaRows(schema int32) []pattern {
	sp, ok := s.schemaPatterns[schema]
	if !ok {
		return nil
	}
	return s.patterns[sp.start:sp.end]
}

// indexPatterns sorts the patterns by (schema, id) and records each
// schema's run. schemaOf holds each pattern's VinSchemaId, parallel to
// s.patterns.
func (s *snapshot) indexPatterns(schemaOf []int32) {
	idx := make([]int32, len(s.patterns))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if schemaOf[a] != schemaOf[b] {
			return int(schemaOf[a]) - int(schemaOf[b])
		}
		return int(s.patterns[a].id) - int(s.patterns[b].id)
	})
	sorted := make([]pattern, len(idx))
	s.schemaPatterns = make(map[int32]span)
	for i, j := range idx {
		sorted[i] = s.patterns[j]
		sc := schemaOf[j]
		sp, ok := s.schemaPatterns[sc]
		if !ok {
			sp.start = int32(i)
		}
		sp.end = int32(i + 1)
		s.schemaPatterns[sc] = sp
	}
	s.patterns = sorted
}
