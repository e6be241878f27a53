package schema

import (
	"bytes"
	"cmp"
	"encoding/binary"
)

// CompareHash orders hashes as bytes.Compare does (the order of state
// files and lease tables), their first 8 bytes compared as one number
// first: most hashes differ there, and the look-ups that call it (a
// merge's, a result at a time) are many.
func CompareHash(a, b Hash) int {
	if x, y := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8]); x != y {
		return cmp.Compare(x, y)
	}
	return bytes.Compare(a[8:], b[8:])
}
