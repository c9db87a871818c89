//go:build race

package main

// raceEnabled: the race detector slows the pure-Go SQLite reader ~20x (a
// snapshot load takes minutes), so the tests that load the real snapshot
// run in make test's second pass, without -race.
const raceEnabled = true
