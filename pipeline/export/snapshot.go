package export

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
)

// maxSnapshotTries is how many snapshots export starts on before it gives
// up when each is collected under it.
const maxSnapshotTries = 5

// testBeforePartition, when set (by tests), runs before each partition is
// read.
var testBeforePartition func(key string)

// runLatest exports the latest snapshot. Export takes no writer lock, so
// a writer may commit meanwhile, and with --keep 1 its commit removes the
// files of the snapshot being read: a file that is then missing is not
// damage. Export starts over, from scratch, on the newer snapshot (so
// that the output is one snapshot), up to maxSnapshotTries snapshots; it
// cannot once bytes have reached an output that cannot take them back
// (stdout, a FIFO), and then says what happened; to such an output it
// first checks the snapshot's files (precheckFiles), so that damage found
// there fails the run before its first byte. A FIFO or device is
// opened once, for every try: closing it would end its reader's stream
// (empty), and a second open would wait for another reader.
func runLatest(ctx context.Context, d *dataset.Dataset, o Options) (Stats, error) {
	var placed int64
	o.placed = &placed
	if o.Output != "-" && fsutil.WrittenInPlace(o.Output) {
		open := o.OpenOutput
		if open == nil {
			open = fsutil.CreateOutput
		}
		f, err := open(o.Output)
		if err != nil {
			return Stats{}, err
		}
		defer f.Abort() // closes it unless a try committed it
		o.inPlace = f
	}
	for try := 1; ; try++ {
		m, err := d.Current()
		if err != nil {
			return Stats{}, err
		}
		began := time.Now()
		var st Stats
		if o.Output == "-" || o.inPlace != nil {
			err = precheckFiles(d, m, o)
		}
		if err == nil {
			st, err = exportSnapshot(ctx, d, m, o)
		}
		newer, gone := d.Collected(m, err)
		if !gone {
			if err == nil {
				slog.Debug("export: snapshot exported", "snapshot", m.Snapshot, "try", try, "table", o.Table,
					"format", o.Format, "output", o.Output, "rows", st.Rows, "seconds", secs(time.Since(began)))
			}
			return st, err
		}
		out := o.outName()
		switch {
		case placed > 0:
			return st, fmt.Errorf("export: snapshot %d was collected under the export by a newer commit (snapshot %d) after output began, so the output on %s is incomplete: run it again, or have the writers keep more snapshots (--keep): %w",
				m.Snapshot, newer, out, err)
		case try == maxSnapshotTries:
			return st, fmt.Errorf("export: %d snapshots in a row were collected under the export by newer commits (the last %d, now %d): run it again, or have the writers keep more snapshots (--keep): %w",
				try, m.Snapshot, newer, err)
		}
		slog.Info("export: a newer commit collected the snapshot being read; starting over on the newer one",
			"snapshot", m.Snapshot, "newer", newer)
	}
}
