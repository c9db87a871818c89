//go:build race

package pdf_test

// raceEnabled: the race detector's shadow memory adds to a process's
// resident memory, so the 300 MB bound of TestExtractLimits is checked
// without it (make bench-pdf, or go test without -race).
const raceEnabled = true
