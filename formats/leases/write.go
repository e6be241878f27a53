package leases

import (
	"bytes"
	"fmt"
	"io"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// writeBatch is how many leases writeSorted hands the Parquet writer at a
// time: a multiple of the 64 rows rowio's writer checks its row group's
// size after, so the file is the one written from all the rows at once.
const writeBatch = 64 * 64

// writeSorted stages a new data file of the lease table holding the rows
// seq yields (rows of them), which must come in strictly increasing hash
// order, and returns it.
func writeSorted(tx *dataset.Tx, rows int64, seq func(yield func(schema.Lease) bool)) (dataset.FileInfo, error) {
	return dataset.WriteStagedWith(tx, dataset.TableLeases, "", dataset.NewName(".parquet"), rows, func(w io.Writer) error {
		pw := rowio.NewParquetWriter[schema.Lease](w)
		buf := make([]schema.Lease, 0, writeBatch)
		var n int64
		var prev schema.Hash
		for l := range seq {
			if n > 0 && bytes.Compare(prev[:], l.InfoHash[:]) >= 0 {
				return fmt.Errorf("lease %x after %x: not in increasing hash order", l.InfoHash, prev)
			}
			if len(buf) == cap(buf) {
				if _, err := pw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			buf = append(buf, l)
			prev = l.InfoHash
			n++
		}
		if n != rows {
			return fmt.Errorf("wrote %d leases, counted %d", n, rows)
		}
		if _, err := pw.Write(buf); err != nil {
			return err
		}
		return pw.Close()
	})
}
