package plan

import (
	"context"

	"github.com/infohash/infohash/formats/dataset"
)

// openDataset opens o.Data for a run: read-only for a dry run without
// -o (dry), which commits nothing, else as a writer.
func openDataset(ctx context.Context, o Options, dry bool) (*dataset.Dataset, error) {
	if dry {
		return dataset.OpenReadOnly(o.Data)
	}
	return dataset.Open(ctx, o.Data, dataset.OpenOptions{LockWait: o.LockWait})
}
