package rowiotest

import "testing"

// AsIsAndFixed runs check on data, then, if any of its pages' CRCs do not
// match, again on a copy with them fixed (FixPageCRCs): the shape of the
// Parquet readers' fuzz targets, so that a mutated page reaches the
// decoders and not only the CRC check.
func AsIsAndFixed(t *testing.T, data []byte, check func(t *testing.T, data []byte)) {
	t.Helper()
	check(t, data)
	if fixed, n := FixPageCRCs(data); n > 0 {
		t.Logf("read again with the CRCs of %d pages fixed", n)
		check(t, fixed)
	}
}
