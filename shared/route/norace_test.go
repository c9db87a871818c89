//go:build !race

package route_test

const raceDetector = false
