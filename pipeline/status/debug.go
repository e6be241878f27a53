package status

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/infohash/infohash/formats/dataset"
)

// debugRead logs at debug level (--debug) what status read of snapshot m
// for report r, and how long it took: the state's files (none when
// --verify found damage: then only the manifest is counted), the leases
// table's, and what --verify checked.
func debugRead(m *dataset.Manifest, r *Report, took time.Duration) {
	if !slog.Default().Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	st := m.Table(dataset.TableState)
	files, bytes := tableFiles(st)
	leaseFiles, leaseBytes := tableFiles(m.Table(dataset.TableLeases))
	counted := r.Verified == nil || len(r.Verified.Problems) == 0
	if !counted {
		files, bytes, leaseFiles, leaseBytes = 0, 0, 0, 0
	}
	attrs := []any{"snapshot", m.Snapshot, "state_partitions", len(st.Partitions), "state_files_read", files,
		"state_bytes_read", bytes, "lease_files_read", leaseFiles, "lease_bytes_read", leaseBytes, "hashes", r.Hashes}
	if v := r.Verified; v != nil {
		attrs = append(attrs, "verified_files", v.Files, "verified_bytes", v.Bytes, "verify_problems", len(v.Problems))
	}
	attrs = append(attrs, "seconds", math.Round(took.Seconds()*1000)/1000)
	slog.Debug("status: read snapshot", attrs...)
}

// tableFiles counts the data files of t and their bytes.
func tableFiles(t *dataset.Table) (files int, bytes int64) {
	for _, fs := range t.Partitions {
		for _, f := range fs {
			files++
			bytes += f.Size
		}
	}
	return files, bytes
}
