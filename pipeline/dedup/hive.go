package dedup

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// DuckDB's COPY ... (PARTITION_BY (source)), Spark's partitionBy and
// pyarrow's write_dataset(partitioning_flavor="hive") move a partition
// column out of the files into their folders' names:
// obs/source=dht_get_peers/hash_type=2/data_0.parquet holds neither
// source nor hash_type. dedup reads only the files' columns: such files
// were read as rows without them, silently, every source an import (so
// no announced peer kept) and every hash of a v1 type unless its
// info_hash_v2 said otherwise. hiveError refuses such a file instead.

// hiveError is the error for the file at path when one of its folders is
// named, Hive style, name=value after a column dedup reads (obsNames,
// any case) that the file lacks (has reports whether it has a column);
// nil otherwise.
func hiveError(path string, has func(name string) bool) error {
	for _, seg := range strings.Split(filepath.ToSlash(filepath.Dir(path)), "/") {
		k, _, ok := strings.Cut(seg, "=")
		if k = strings.ToLower(k); ok && slices.Contains(obsNames, k) && !has(k) {
			return fmt.Errorf("column %q is not in the file but in the name of its folder %q (Hive partitioning), "+
				"which dedup does not read: write %s into the files (DuckDB: COPY without PARTITION_BY, or "+
				"WRITE_PARTITION_COLUMNS true)", k, seg, k)
		}
	}
	return nil
}

// parquetHiveError is hiveError for Parquet input in, open as pf (a file
// spooled into the inbox has no folders of its producer's).
func parquetHiveError(in input, pf *parquet.File) error {
	if in.inbox {
		return nil
	}
	return hiveError(in.path, func(c string) bool { _, ok := pf.Schema().Lookup(c); return ok })
}
