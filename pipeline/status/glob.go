package status

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// duckRead is the DuckDB read_parquet call status prints for a state
// glob. hive_types pins the prefix column to VARCHAR: DuckDB otherwise
// infers its type from the partitions present, so a dataset whose
// folders all look numeric (prefix=12, or prefix=00 alone) reads it as
// BIGINT, 12 rather than '12', and prefix = 'ab' fails to convert.
const duckRead = "read_parquet(%s, hive_partitioning=true, hive_types={'prefix': VARCHAR})"

// sqlString is s as an SQL string literal: in quotes, a quote doubled
// (a DIR named "it's" would otherwise end the literal there, and the
// line would not run).
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// globUnder is the pattern of elems under dir with dir's own glob
// characters (*, ? and [) matched literally, as "[*]": DuckDB (as
// glob(3) and Python) globs the whole path, so a DIR named "runs [1]"
// matched no file and one named "a*" others' too. A backslash has no
// such escape in DuckDB, which splits a pattern at it as at a slash on
// every system (neither "\\" nor "[\]" matches one): see printRead.
func globUnder(dir string, elems ...string) string {
	var b strings.Builder
	for _, c := range filepath.Clean(dir) {
		if c == '*' || c == '?' || c == '[' {
			b.WriteString("[" + string(c) + "]")
			continue
		}
		b.WriteRune(c)
	}
	return filepath.Join(append([]string{b.String()}, elems...)...)
}

// printRead prints the line labelled label that reads, with DuckDB, the
// state files (prefix=*/*.parquet) of folder dir of DIR, by DIR's
// absolute path (absDir): DuckDB resolves a relative one against the
// folder it was started in. No glob under a DIR whose path holds a
// backslash matches in DuckDB: the line then gives the pattern relative
// to DIR, to run from there (DuckDB resolves it against its working
// directory, which it does not split), and says so.
func (r *Report) printRead(w io.Writer, label string, dir ...string) {
	elems := append(append([]string{}, dir...), "prefix=*", "*.parquet")
	if strings.Contains(r.absDir, `\`) {
		fmt.Fprintf(w, "%s: from DIR (DuckDB's globs cannot match the backslash in its path: cd there first) "+duckRead+"\n",
			label, sqlString(filepath.Join(elems...)))
		return
	}
	fmt.Fprintf(w, "%s: "+duckRead+"\n", label, sqlString(globUnder(r.absDir, elems...)))
}
