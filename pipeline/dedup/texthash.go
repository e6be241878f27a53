package dedup

import (
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// A hash column may hold text (DuckDB's VARCHAR, Arrow's utf8): its
// values are then hex, 40 digits for a v1 hash and 64 for a v2 one, in
// either case, as in hash lists. Bytes of text taken as a hash would be
// wrong (32 hex digits read as a 32-byte v2 hash): any other text is bad
// input.

// What a text hash column must hold, for errors.
const (
	wantHexHash = "a hex infohash (40 or 64 digits)"
	wantHexV2   = "a hex v2 hash (64 digits)"
)

// unhexHash decodes s, 40 or 64 hex digits, into dst and returns the
// hash's length (20 or 32), or 0 if s is not such a hash.
func unhexHash[S ~string | ~[]byte](dst *[32]byte, s S) int {
	if len(s) != 40 && len(s) != 64 {
		return 0
	}
	for i := 0; i < len(s); i += 2 {
		hi, lo := unhexDigit(s[i]), unhexDigit(s[i+1])
		if hi > 15 || lo > 15 {
			return 0
		}
		dst[i/2] = hi<<4 | lo
	}
	return len(s) / 2
}

func unhexDigit(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// textHashError is the bad input of row row, whose value v in the text
// column col (of type typ) is not what the column must hold (want).
func textHashError[S ~string | ~[]byte](row int64, col, typ string, v S, want string) *rowError {
	return &rowError{row: row, msg: fmt.Sprintf("%s %s (a %s column) is not %s", col, schema.Quote(string(v)), typ, want)}
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
		if n := unhexHash(dst, v); (n > 0 || len(v) == 0) && ok(n) {
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
