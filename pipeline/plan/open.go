package plan

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/infohash/infohash/formats/dataset"
)

// openDataset opens o.Data for a run, as a writer: Open migrates an
// older format and removes what killed writers left. A dry run without
// -o (dry), which commits nothing, reads a dataset of an older format
// (olderFormat) or one it cannot write with OpenReadOnly instead, as
// status does (readOnly: plan on BeginRead): a dry run "to see what a
// pass would do" after an upgrade must not migrate DIR, which the old
// binary then refuses, nor draw a migrated copy its new id.
// A copied dataset's new id is drawn by the commit of the first writer
// that commits (dataset's Begin), which a dry run without -o never is.
func openDataset(ctx context.Context, o Options, dry bool) (d *dataset.Dataset, readOnly bool, err error) {
	if dry {
		if d := olderFormat(o.Data); d != nil {
			return d, true, nil
		}
	}
	d, err = dataset.Open(ctx, o.Data, dataset.OpenOptions{LockWait: o.LockWait, Keep: o.Keep, Now: o.Now})
	if dry && dataset.IsNotWritable(err) {
		d, err = dataset.OpenReadOnly(o.Data)
		return d, true, err
	}
	return d, false, err
}

// olderFormat opens the dataset in dir read-only if it is of a format
// older than this build's, saying so in one line; else (the current
// format, or one Open must say what is wrong with) it returns nil, and
// the run opens dir as a writer.
func olderFormat(dir string) *dataset.Dataset {
	d, err := dataset.OpenReadOnly(dir)
	if err != nil {
		return nil
	}
	m, err := d.Current()
	if err != nil || m.FormatVersion >= dataset.FormatVersion {
		d.Close()
		return nil
	}
	slog.Info(fmt.Sprintf("plan-retries: dataset format %d: read as it is (a dry run migrates nothing); "+
		"the next dedup, plan-retries or merge migrates it", m.FormatVersion),
		"dir", dir, "format", m.FormatVersion, "this_build", dataset.FormatVersion)
	return d
}
