package dedup

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// int96Of is epoch ms ms as an INT96 timestamp (nanoseconds of the day,
// then the Julian day).
func int96Of(ms int64) deprecated.Int96 {
	days, rest := ms/86_400_000, ms%86_400_000
	if rest < 0 {
		days, rest = days-1, rest+86_400_000
	}
	ns := uint64(rest) * 1_000_000
	return deprecated.Int96{uint32(ns), uint32(ns >> 32), uint32(days + julianUnixEpoch)}
}

func TestInt96Millis(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    deprecated.Int96
		want int64
	}{
		// J2000.0: Julian day 2451545 begins at noon UTC on 2000-01-01;
		// the INT96 day starts at midnight, so noon is 43200 s into it.
		{"2000-01-01T12:00:00Z", deprecated.Int96{uint32(43_200_000_000_000 & 0xffffffff), uint32(43_200_000_000_000 >> 32), 2_451_545}, 946_728_000_000},
		{"1970-01-01T00:00:00.001Z", deprecated.Int96{1_000_000, 0, 2_440_588}, 1},
		{"2026-01-01T00:00:00.123Z, sub-ms dropped", deprecated.Int96{123_456_789, 0, 2_440_588 + 20_454}, 1_767_225_600_123},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := int96Millis(tt.v); got != tt.want {
				t.Fatalf("int96Millis(%v) = %d, want %d", tt.v, got, tt.want)
			}
		})
	}
}

// TestInt96ObservedAt: an INT96 observed_at, as Spark writes a TIMESTAMP
// by default (plain or dictionary-encoded), is read as the same times as
// the project's own TIMESTAMP(MILLIS) column. It was refused: 'wrong
// schema: column "observed_at" is INT96, want a TIMESTAMP or INT64 (epoch
// ms)'. A layout only the row reader takes (an info_hash of
// FIXED_LEN_BYTE_ARRAY(32)) is refused saying why, not misread.
func TestInt96ObservedAt(t *testing.T) {
	type own struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
	}
	type spark struct {
		InfoHash   []byte           `parquet:"info_hash"`
		ObservedAt deprecated.Int96 `parquet:"observed_at"`
		Source     string           `parquet:"source"`
	}
	type sparkDict struct {
		InfoHash   []byte           `parquet:"info_hash"`
		ObservedAt deprecated.Int96 `parquet:"observed_at,dict"`
		Source     string           `parquet:"source,dict"`
	}
	type wide struct {
		InfoHash   [32]byte         `parquet:"info_hash"`
		ObservedAt deprecated.Int96 `parquet:"observed_at"`
	}
	obs := genObs(31, 3000, 400)
	for i := range obs {
		obs[i].ObservedAt -= int64(i % 7) // times that repeat, for the dictionary
	}
	dir := t.TempDir()
	write := func(t *testing.T, name string, rows any) string {
		t.Helper()
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		var werr error
		switch rows := rows.(type) {
		case []own:
			werr = writeAll(f, rows)
		case []spark:
			werr = writeAll(f, rows, parquet.MaxRowsPerRowGroup(1000))
		case []sparkDict:
			werr = writeAll(f, rows, parquet.PageBufferSize(2048))
		case []wide:
			werr = writeAll(f, rows)
		}
		if err := f.Close(); werr != nil || err != nil {
			t.Fatal(werr, err)
		}
		return p
	}
	read := func(t *testing.T, p string) (string, error) {
		t.Helper()
		in, err := probe(p, filepath.Base(p), "")
		if err != nil {
			t.Fatal(err)
		}
		b := newBatch(3600_000)
		defer b.release()
		if _, err := readInput(context.Background(), in, t0.UnixMilli(), b); err != nil {
			return "", err
		}
		return describe(b), nil
	}
	var ownRows []own
	var sparkRows []spark
	var dictRows []sparkDict
	for _, o := range obs {
		ownRows = append(ownRows, own{o.InfoHash[:], o.ObservedAt, o.Source})
		sparkRows = append(sparkRows, spark{o.InfoHash[:], int96Of(o.ObservedAt), o.Source})
		dictRows = append(dictRows, sparkDict{o.InfoHash[:], int96Of(o.ObservedAt), o.Source})
	}
	want, err := read(t, write(t, "own.parquet", ownRows))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file string
		rows       any
		dict       bool // observed_at must be dictionary-encoded
		err        string
	}{
		{name: "INT96, plain, row groups of 1000", file: "spark.parquet", rows: sparkRows},
		{name: "INT96, dictionary-encoded, small pages", file: "dict.parquet", rows: dictRows, dict: true},
		{name: "INT96 beside a 32-byte fixed info_hash", file: "wide.parquet", rows: []wide{{ObservedAt: int96Of(t0.UnixMilli())}},
			err: `column "observed_at" is INT96 (a Spark timestamp), read only beside`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := write(t, tt.file, tt.rows)
			if got := atEncodings(t, p); slices.Contains(got, format.RLEDictionary) != tt.dict {
				t.Fatalf("observed_at's encodings %v: dictionary %v, want %v", got, !tt.dict, tt.dict)
			}
			got, err := read(t, p)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("got:\n%.1500s\nwant (TIMESTAMP(MILLIS)):\n%.1500s", got, want)
			}
		})
	}
}

// atEncodings are the encodings of observed_at (column 1) in the first
// row group of the Parquet file at p.
func atEncodings(t *testing.T, p string) []format.Encoding {
	t.Helper()
	return parquetFileAt(t, p).Metadata().RowGroups[0].Columns[1].MetaData.Encoding
}

// writeAll writes rows to f as a Parquet file with parquet-go's writer.
func writeAll[T any](f *os.File, rows []T, opts ...parquet.WriterOption) error {
	w := parquet.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		return err
	}
	return w.Close()
}
