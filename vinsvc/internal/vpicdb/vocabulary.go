package vpicdb

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// vocabularyJSON is vPIC's current names for the lookup values the
// snapshot stores under older ones (vocabulary.json: by table and Id, with
// its source). Data, not code: a newer list replaces the file.
//
//go:embed vocabulary.json
var vocabularyJSON []byte

// vocabulary is vocabulary.json read: new names by lower-cased table name
// and Id.
type vocabulary map[string]map[int32]string

// readVocabulary parses vocabulary.json.
func readVocabulary(data []byte) (vocabulary, error) {
	var file struct {
		Tables map[string]map[string]string `json:"tables"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("vocabulary.json: %w", err)
	}
	v := vocabulary{}
	for table, names := range file.Tables {
		m := map[int32]string{}
		for id, name := range names {
			n, err := strconv.ParseInt(id, 10, 32)
			if err != nil || name == "" {
				return nil, fmt.Errorf("vocabulary.json: table %s: bad entry %q: %q", table, id, name)
			}
			m[int32(n)] = name
		}
		v[strings.ToLower(table)] = m
	}
	return v, nil
}

// rename gives table's names (by Id) vPIC's current ones: an Id the
// vocabulary names takes its name; the others keep the snapshot's. It
// returns how many names changed.
func (v vocabulary) rename(table string, names map[int32]string) int {
	n := 0
	for id, name := range v[strings.ToLower(table)] {
		if old, ok := names[id]; ok && old != name {
			names[id] = name
			n++
		}
	}
	return n
}
