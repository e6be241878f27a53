package plan

import (
	"context"

	"github.com/infohash/infohash/formats/dataset"
)

// openDataset opens o.Data for a run, as a writer: Open migrates an
// older format and removes what killed writers left. A dry run without
// -o (dry), which commits nothing, reads a dataset it cannot write with
// OpenReadOnly instead, as status does (readOnly: plan on BeginRead).
// Any dry run (--limit 0) leaves a copied dataset's identity to the
// first writer that commits: it would commit only to draw it.
func openDataset(ctx context.Context, o Options, dry bool) (d *dataset.Dataset, readOnly bool, err error) {
	d, err = dataset.Open(ctx, o.Data, dataset.OpenOptions{LockWait: o.LockWait, Keep: o.Keep, KeepIdentity: o.Limit == 0,
		Now: o.Now})
	if dry && dataset.IsNotWritable(err) {
		d, err = dataset.OpenReadOnly(o.Data)
		return d, true, err
	}
	return d, false, err
}
