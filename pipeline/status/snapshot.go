package status

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/infohash/infohash/formats/dataset"
)

// maxSnapshotTries is how many snapshots status starts on before it gives
// up when each is collected under it (as export does).
const maxSnapshotTries = 5

// testSnapshotRead, when set (by tests), runs once the manifest of the
// snapshot to report is read, before any of its files is.
var testSnapshotRead func(snapshot int64)

// Run builds the report of the latest snapshot. Status takes no writer
// lock (only the folder's shared flock, dataset.OpenReadOnly), so a
// writer may commit meanwhile, and with --keep 1 its commit removes the
// files of the snapshot being read: a file that is then missing is not
// damage (nor, with --verify, a problem of the dataset). Status starts
// over on the newer snapshot, up to maxSnapshotTries snapshots, so that
// the report describes one snapshot, and then says what happened.
func Run(ctx context.Context, dir string, now time.Time, o Options) (*Report, error) {
	d, err := dataset.OpenReadOnly(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	for try := 1; ; try++ {
		m, err := d.Current()
		if err != nil {
			return nil, err
		}
		if testSnapshotRead != nil {
			testSnapshotRead(m.Snapshot)
		}
		began := time.Now()
		r, err := report(ctx, d, m, now, o)
		gone := err
		if err == nil && r.Verified != nil {
			gone = r.Verified.Missing()
		}
		newer, collected := d.Collected(m, gone)
		switch {
		case !collected && err != nil:
			return nil, err
		case !collected:
			r.listInbox()
			r.listWork()
			u := d.Unpublished(m)
			if u.Paths != nil {
				r.Unpublished = u.Paths
			}
			r.UnpublishedBytes = u.Bytes
			if s := d.Staged(); s.Paths != nil {
				r.Staging, r.StagingBytes = s.Paths, s.Bytes
			}
			debugRead(m, r, time.Since(began))
			return r, nil
		case try == maxSnapshotTries:
			return nil, fmt.Errorf("status: %d snapshots in a row were collected under status by newer commits (the last %d, now %d): run it again, or have the writers keep more snapshots (--keep): %w",
				try, m.Snapshot, newer, gone)
		}
		slog.Info("status: a newer commit collected the snapshot being read; starting over on the newer one",
			"snapshot", m.Snapshot, "newer", newer)
	}
}
