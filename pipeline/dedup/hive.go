package dedup

import (
	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/inputdir"
)

// hiveError is inputdir.HiveError for the file at path, of the columns
// dedup reads (obsNames): without source, every row was read as an
// import (so no announced peer kept), without hash_type every hash as
// v1 unless its info_hash_v2 said otherwise.
func hiveError(path string, has func(name string) bool) error {
	return inputdir.HiveError("dedup", path, obsNames, has)
}

// parquetHiveError is hiveError for Parquet input in, open as pf (a file
// spooled into the inbox has no folders of its producer's).
func parquetHiveError(in input, pf *parquet.File) error {
	if in.inbox {
		return nil
	}
	return hiveError(in.path, func(c string) bool { _, ok := pf.Schema().Lookup(c); return ok })
}
