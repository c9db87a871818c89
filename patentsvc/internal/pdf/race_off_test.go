//go:build !race

package pdf_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
