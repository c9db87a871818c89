//go:build race

package route_test

// raceDetector: the race detector makes sync.Pool drop items at random
// (Echo keeps its contexts in one), so allocation counts vary from run to
// run under it.
const raceDetector = true
