package leases

import (
	"bytes"
	"fmt"
	"io"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// writeSorted stages a new data file of the lease table holding the rows
// seq yields (rows of them), which must come in strictly increasing hash
// order, and returns it. The rows go to the Parquet writer a chunk at a
// time (rowio's WriteSeq): the file is the one written from all the rows
// at once.
func writeSorted(tx *dataset.Tx, rows int64, seq func(yield func(schema.Lease) bool)) (dataset.FileInfo, error) {
	return dataset.WriteStagedWith(tx, dataset.TableLeases, "", dataset.NewName(".parquet"), rows, func(w io.Writer) error {
		var prev schema.Hash
		var n int64
		var order error
		checked := func(yield func(schema.Lease) bool) {
			for l := range seq {
				if n > 0 && bytes.Compare(prev[:], l.InfoHash[:]) >= 0 {
					order = fmt.Errorf("lease %x after %x: not in increasing hash order", l.InfoHash, prev)
					return
				}
				prev = l.InfoHash
				n++
				if !yield(l) {
					return
				}
			}
		}
		pw := rowio.NewParquetWriter[schema.Lease](w)
		if _, err := pw.WriteSeq(checked); err != nil {
			return err
		}
		if order != nil {
			return order
		}
		if n != rows {
			return fmt.Errorf("wrote %d leases, counted %d", n, rows)
		}
		return pw.Close()
	})
}
