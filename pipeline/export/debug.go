package export

import (
	"log/slog"
	"math"
	"time"

	"github.com/infohash/infohash/formats/dataset"
)

// phases are where a partitioned export's time went, for --debug: the
// partitions left out by --prefix, the rows read, and the time spent
// reading partitions, writing rows to the sink and finishing the output
// (the rest: sorting and filtering).
type phases struct {
	skipped             int
	rows                int64
	read, write, finish time.Duration
}

// log writes the phases of the export of snapshot m at debug level.
func (ph *phases) log(m *dataset.Manifest, o Options, st Stats) {
	slog.Debug("export: partitions written", "snapshot", m.Snapshot, "table", o.Table, "format", o.Format,
		"partitions", st.Partitions, "partitions_skipped", ph.skipped, "rows_read", ph.rows, "rows", st.Rows,
		"filtered", st.Filtered, "blocklisted", st.Blocklisted,
		"read_s", secs(ph.read), "write_s", secs(ph.write), "finish_s", secs(ph.finish))
}

// secs is d in seconds, to the millisecond.
func secs(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }
