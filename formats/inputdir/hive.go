package inputdir

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// DuckDB's COPY ... (PARTITION_BY (col)), Spark's partitionBy and
// pyarrow's write_dataset(partitioning_flavor="hive") move a partition
// column out of the files into their folders' names:
// obs/source=dht_get_peers/hash_type=2/data_0.parquet holds neither
// source nor hash_type. dedup and merge read only the files' columns:
// such files were read as rows without them, silently (dedup: every
// source an import; merge: every lease_id, detail or served_by null).
// HiveError refuses such a file instead.

// HiveError is command cmd's error ("dedup", "merge") for the file at
// path when one of its folders is named, Hive style, name=value after one
// of the columns cmd reads (cols, lower case; the folder's name in any
// case) that the file lacks (has reports whether it has a column); nil
// otherwise. The folders are those of the absolute path (hivePaths): a
// file named from inside its partition folder (cd lease_id=X && merge
// data_0.parquet) is caught as the same file named from above is. Give
// it no path of a spool (a file the command copied into its inbox has no
// folders of its producer's).
func HiveError(cmd, path string, cols []string, has func(name string) bool) error {
	for _, p := range hivePaths(path) {
		for _, seg := range strings.Split(filepath.ToSlash(filepath.Dir(p)), "/") {
			k, _, ok := strings.Cut(seg, "=")
			if k = strings.ToLower(k); ok && slices.Contains(cols, k) && !has(k) {
				return fmt.Errorf("column %q is not in the file but in the name of its folder %q (Hive partitioning), "+
					"which %s does not read: write %s into the files (DuckDB: COPY without PARTITION_BY, or "+
					"WRITE_PARTITION_COLUMNS true)", k, seg, cmd, k)
			}
		}
	}
	return nil
}

// hivePaths are the paths whose folders HiveError reads for the file at
// path: path made absolute (from the working directory, as the shell
// gave it: through the links it was entered by), and, when a symbolic
// link is on the way, the path it resolves to. Both count: a partitioner
// writes real folders, which a link to one of them or to the file
// (latest -> out/lease_id=X) hides from the path as named, while a link
// named after a partition (lease_id=X -> elsewhere) says as much as a
// folder so named. A path that cannot be resolved (gone, unreadable) is
// read as named.
func hivePaths(path string) []string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return []string{path}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		return []string{abs, real}
	}
	return []string{abs}
}
