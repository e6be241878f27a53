// The values of hash_type, metadata_status and tier: checked on read and
// before a write, so that a damaged or wrong value stops the command that
// meets it instead of being read as something else and committed again.

package statecol

import (
	"fmt"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// checkedColumns are the columns whose values checkValue checks.
const checkedColumns = Columns(1<<cHashType | 1<<cMetadataStatus | 1<<cTier)

// checkValue returns what is wrong with the columns cols of st (nil if
// nothing): a hash_type other than 1 or 2, a metadata_status or tier
// that is none of the schema's.
func checkValue(st *schema.State, cols Columns) error {
	if cols&(1<<cHashType) != 0 {
		if err := schema.CheckHashType(int32(st.HashType)); err != nil {
			return err
		}
	}
	if cols&(1<<cMetadataStatus) != 0 {
		if err := schema.CheckStatus(st.MetadataStatus); err != nil {
			return err
		}
	}
	if cols&(1<<cTier) != 0 {
		if err := schema.CheckTier(st.Tier); err != nil {
			return err
		}
	}
	return nil
}

// checkRead checks the values of the columns read (of those checked) of
// the rows o holds, naming the first bad one by its row in the file.
func checkRead(o *rowsOut, read Columns) error {
	cols := read & checkedColumns
	if cols == 0 {
		return nil
	}
	for i := range o.st {
		if err := checkValue(&o.st[i], cols); err != nil {
			r := int64(i)
			if o.sel != nil {
				r = int64(o.sel[i])
			}
			return BadRow(o.first+r, err)
		}
	}
	return nil
}

// BadRow is the error for row row (counted from 0; the message counts
// from 1) of a state file holding a value that schema.CheckHashType,
// CheckStatus or CheckTier refused (err): the file is damaged, as one
// whose page fails its checksum is.
func BadRow(row int64, err error) error {
	return &rowio.CorruptError{Format: stateFormat, Err: fmt.Errorf("row %d: %w", row+1, err)}
}

// checkWrite checks the columns cols of rows about to be written; row
// gives the file's row number of rows[i] (from 0), for the error, which
// names the row (from 1) and its info_hash.
func checkWrite(rows []schema.State, cols Columns, row func(i int) int64) error {
	cols &= checkedColumns
	if cols == 0 {
		return nil
	}
	for i := range rows {
		if err := checkValue(&rows[i], cols); err != nil {
			return fmt.Errorf("statecol: row %d (info_hash %s): %w; not written", row(i)+1, schema.Hex(rows[i].InfoHash), err)
		}
	}
	return nil
}

// from numbers rows from first on.
func from(first int) func(int) int64 { return func(i int) int64 { return int64(first + i) } }
