package dedup

import (
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// Spark writes a TIMESTAMP as an INT96 unless told otherwise
// (spark.sql.parquet.outputTimestampType), as Hive and Impala did: 12
// bytes, the nanoseconds of the day (8, little-endian) and then the
// Julian day (4). DuckDB and pyarrow read it as a timestamp; dedup
// refused it as wrong schema ('column "observed_at" is INT96, want a
// TIMESTAMP or INT64 (epoch ms)'). The column reader reads it
// (int96Page). The row reader does not (parquet-go converts an INT96 to
// an int64 by keeping its low 64 bits, the nanoseconds of the day):
// readParquet refuses such a file when only the row reader takes it.

// int96Time is fastColumns.atDiv for an INT96 observed_at.
const int96Time = -1

// julianUnixEpoch is the Julian day of 1970-01-01.
const julianUnixEpoch = 2_440_588

// int96Millis is the epoch ms of an INT96 timestamp (a crafted one may be
// any time: the plausible range refuses it).
func int96Millis(v deprecated.Int96) int64 {
	nanos := int64(uint64(v[1])<<32 | uint64(v[0]))
	return (int64(v[2])-julianUnixEpoch)*86_400_000 + nanos/1_000_000
}

// atUnits is how the column reader reads observed_at, of type at: its
// units per millisecond (an INT64 TIMESTAMP of any unit, or plain epoch
// ms) or int96Time; false when it does not read it.
func atUnits(at parquet.Type) (int64, bool) {
	switch at.Kind() {
	case parquet.Int96:
		return int96Time, true
	case parquet.Int64:
	default:
		return 0, false
	}
	if lt := at.LogicalType(); lt != nil && lt.Value != nil {
		ts, ok := lt.Value.(*format.TimestampType)
		if !ok {
			return 0, false
		}
		switch ts.Unit.Value.(type) {
		case *format.MilliSeconds:
			return 1, true
		case *format.MicroSeconds:
			return 1000, true
		case *format.NanoSeconds:
			return 1_000_000, true
		}
		return 0, false
	}
	if ct := at.ConvertedType(); ct != nil && *ct != deprecated.TimestampMillis {
		return 0, false // TIMESTAMP_MICROS without a logical type, or not a time
	}
	return 1, true
}

// int96Page reads an INT96 observed_at page in epoch ms.
func (r *rgBuf) int96Page(p parquet.Page) (func(row, v, n int), error) {
	if d := p.Dictionary(); d != nil {
		dict := dataOf(d.Page()).Int96()
		idx, err := dictIndexes(p, len(dict))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.at[row+i] = int96Millis(dict[ix])
			}
		}, nil
	}
	vals := dataOf(p).Int96()
	if err := checkCount(p, len(vals)); err != nil {
		return nil, err
	}
	return func(row, v, n int) {
		for i, x := range vals[v : v+n] {
			r.at[row+i] = int96Millis(x)
		}
	}, nil
}
