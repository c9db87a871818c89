package vin

import (
	"fmt"
	"time"
)

// Sources of an answer: the result's source field (decisions.md, "the
// embedded vPIC snapshot"). A cached answer keeps the source it came from.
const (
	SourceVPIC     = "vpic"
	SourceSnapshot = "snapshot"
)

// SourceOf is the source of r: SourceSnapshot or SourceVPIC.
func SourceOf(r Result) string {
	if r.Source == SourceSnapshot {
		return SourceSnapshot
	}
	return SourceVPIC
}

// SnapshotMode says when the Decoder answers from the vPIC snapshot
// (VPIC_SNAPSHOT_MODE).
type SnapshotMode string

// The snapshot modes.
const (
	// SnapshotOff never uses the snapshot.
	SnapshotOff SnapshotMode = "off"
	// SnapshotFallback asks vPIC first; the snapshot answers when vPIC
	// fails or has not answered within the fallback delay.
	SnapshotFallback SnapshotMode = "fallback"
	// SnapshotOnly never calls vPIC.
	SnapshotOnly SnapshotMode = "only"
)

// ParseSnapshotMode accepts off, fallback and only.
func ParseSnapshotMode(s string) (SnapshotMode, error) {
	switch m := SnapshotMode(s); m {
	case SnapshotOff, SnapshotFallback, SnapshotOnly:
		return m, nil
	}
	return "", fmt.Errorf("must be off, fallback or only, got %q", s)
}

// SnapshotMaxAge is the age past which a snapshot is stale: a warning at
// start-up and in health (the data is refreshed monthly).
const SnapshotMaxAge = 120 * 24 * time.Hour

// SnapshotStale reports whether a snapshot of date is older than
// SnapshotMaxAge at now.
func SnapshotStale(date, now time.Time) bool { return now.Sub(date) > SnapshotMaxAge }

// SnapshotInfo describes the snapshot for the health report.
type SnapshotInfo struct {
	Mode      SnapshotMode
	Available bool
	// Loading is true while the snapshot file is being read (a load was
	// announced and has not ended).
	Loading bool
	// Date is the snapshot's data date; zero when it is not available.
	Date time.Time
}

// DataSourceOf names the data source of an answer for X-Data-Source:
// DataSource for vPIC's, "NHTSA vPIC snapshot YYYY-MM-DD" for the
// snapshot's.
func DataSourceOf(source string, snapshotDate time.Time) string {
	if source == SourceSnapshot {
		return DataSource + " snapshot " + snapshotDate.UTC().Format(time.DateOnly)
	}
	return DataSource
}
