package dedup

import (
	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/textenc"
)

// A text hash column holds hex (textenc.UnhexHash); any other text is
// bad input.

// hashDecoder decodes a value v of a hash column into dst and returns
// the hash's length (0 for none: an empty value where the column may
// hold one), or why v is not what the column holds (msg, not ""), as
// textenc.HashValue does.
type hashDecoder func(dst *[32]byte, v []byte) (n int, msg string)

// hashHexDecoder is the decoder of an info_hash column of text of type typ:
// textenc.HashValue's rule, 40 hex digits or 64 (a v2 hash, keyed by its
// first 20 bytes).
func hashHexDecoder(typ string) hashDecoder {
	return func(dst *[32]byte, v []byte) (int, string) { return textenc.HashValue(dst, "info_hash", typ, v, true) }
}

// v2HexDecoder is the decoder of an info_hash_v2 column of text of type typ:
// textenc.V2Value's rule, 64 hex digits, or empty (null, as in infohash's
// own files).
func v2HexDecoder(typ string) hashDecoder {
	return func(dst *[32]byte, v []byte) (int, string) {
		return textenc.V2Value(dst, "info_hash_v2", typ, v)
	}
}

// decodeValues decodes the values of a BYTE_ARRAY page (or its
// dictionary's: data, with offs bounding each) by decode: vals[j] is
// value j's hash (empty for an empty value decode takes), nil if decode
// refuses it.
func decodeValues(data []byte, offs []uint32, decode hashDecoder) (vals [][]byte) {
	if len(offs) < 2 {
		return nil
	}
	vals = make([][]byte, len(offs)-1)
	flat := make([]byte, 32*len(vals))
	for j := range vals {
		dst := (*[32]byte)(flat[32*j:])
		if n, msg := decode(dst, data[offs[j]:offs[j+1]]); msg == "" {
			vals[j] = dst[:n]
		}
	}
	return vals
}

// textPage returns the decoded hashes of a page of a text hash column
// (see decodeValues), one per non-null row, or the error of its first row
// whose value decode refuses.
func textPage(p parquet.Page, decode hashDecoder) ([][]byte, error) {
	data, offs, idx, err := byteArrays(p)
	if err != nil {
		return nil, err
	}
	vals := decodeValues(data, offs, decode)
	refused := func(row int64, j int) error {
		var dst [32]byte
		_, msg := decode(&dst, data[offs[j]:offs[j+1]]) // again, for why: once a page at most
		return &rowError{row: row, msg: msg}
	}
	if idx == nil {
		for j, v := range vals {
			if v == nil {
				return nil, refused(int64(j), j)
			}
		}
		return vals, nil
	}
	rows := make([][]byte, len(idx)) // a dictionary's entries are checked where rows use them
	for k, ix := range idx {
		if rows[k] = vals[ix]; rows[k] == nil {
			return nil, refused(int64(k), int(ix))
		}
	}
	return rows, nil
}
