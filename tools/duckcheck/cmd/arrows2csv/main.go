// Command arrows2csv prints the whole record batches of an Arrow IPC
// stream as CSV, so that DuckDB (bin/duckq, read_csv) can read what
// infohash capture or fetch wrote with -o -: binary columns as lowercase
// hex (DuckDB: unhex), timestamps as RFC 3339 in UTC, nested columns
// left empty. A stream cut short (its writer killed) is printed up to its
// last whole batch, as dedup and merge apply it. scripts/soak.sh's cron
// mode reads the streams crawl-pass.sh applies with it.
//
//	arrows2csv work/3/observations.arrows >obs-3.csv
package main

import (
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: arrows2csv IN.arrows >OUT.csv")
		os.Exit(2)
	}
	if err := convert(os.Args[1], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "arrows2csv: %v\n", err)
		os.Exit(1)
	}
}

// convert writes IN's whole batches to out as CSV with a header line. A
// stream that ends in a torn batch is reported on errw, not an error.
func convert(in string, out, errw io.Writer) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := ipc.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: no schema: %w", in, err)
	}
	defer r.Release()
	w := csv.NewWriter(out)
	var head []string
	for _, fl := range r.Schema().Fields() {
		head = append(head, fl.Name)
	}
	if err := w.Write(head); err != nil {
		return err
	}
	rows := 0
	line := make([]string, len(head))
	for r.Next() {
		rec := r.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			for c := range line {
				line[c] = cell(rec.Column(c), i)
			}
			if err := w.Write(line); err != nil {
				return err
			}
		}
		rows += int(rec.NumRows())
	}
	if err := r.Err(); err != nil {
		fmt.Fprintf(errw, "arrows2csv: %s: stream ends after %d rows: %v\n", in, rows, err)
	}
	w.Flush()
	return w.Error()
}

// cell formats row i of column a ("" for null and nested values).
func cell(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	switch v := a.(type) {
	case *array.Binary:
		return hex.EncodeToString(v.Value(i))
	case *array.FixedSizeBinary:
		return hex.EncodeToString(v.Value(i))
	case *array.Timestamp:
		u := v.DataType().(*arrow.TimestampType).Unit
		return v.Value(i).ToTime(u).UTC().Format(time.RFC3339Nano)
	case *array.List, *array.LargeList, *array.Struct, *array.Map, *array.FixedSizeList:
		return ""
	default:
		return a.ValueStr(i)
	}
}
