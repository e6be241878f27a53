package dedup

import (
	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/textenc"
)

// A text hash column holds hex (textenc.UnhexHash); any other text is
// bad input.

// textHashError is the bad input of row row, whose value v in the text
// column col (of type typ) is not what the column must hold (want,
// textenc.WantHexHash or textenc.WantHexV2).
func textHashError[S ~string | ~[]byte](row int64, col, typ string, v S, want string) *rowError {
	return &rowError{row: row, msg: textenc.HexHashError(col, typ, v, want)}
}

// unhexValues decodes the text hashes of a BYTE_ARRAY page's values (or
// its dictionary's: data, with offs bounding each) whose length in bytes
// ok accepts (0 for an empty value): vals[j] is value j's hash, nil if it
// is not one.
func unhexValues(data []byte, offs []uint32, ok func(n int) bool) (vals [][]byte) {
	if len(offs) < 2 {
		return nil
	}
	vals = make([][]byte, len(offs)-1)
	flat := make([]byte, 32*len(vals))
	for j := range vals {
		dst := (*[32]byte)(flat[32*j:])
		v := data[offs[j]:offs[j+1]]
		if n := textenc.UnhexHash(dst, v); (n > 0 || len(v) == 0) && ok(n) {
			vals[j] = dst[:n]
		}
	}
	return vals
}

// textPage returns the decoded hashes of a page of a text hash column
// (see unhexValues), one per non-null row, or the error of its first row
// whose value is not a hash ok accepts.
func textPage(p parquet.Page, col, typ, want string, ok func(n int) bool) ([][]byte, error) {
	data, offs, idx, err := byteArrays(p)
	if err != nil {
		return nil, err
	}
	vals := unhexValues(data, offs, ok)
	if idx == nil {
		for j, v := range vals {
			if v == nil {
				return nil, textHashError(int64(j), col, typ, data[offs[j]:offs[j+1]], want)
			}
		}
		return vals, nil
	}
	rows := make([][]byte, len(idx)) // a dictionary's entries are checked where rows use them
	for k, ix := range idx {
		if rows[k] = vals[ix]; rows[k] == nil {
			return nil, textHashError(int64(k), col, typ, data[offs[ix]:offs[ix+1]], want)
		}
	}
	return rows, nil
}
