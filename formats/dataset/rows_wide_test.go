package dataset

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// widePenalty is schema.PeerPenalty as another tool may write it:
// failures a UINTEGER. widePenaltyShort has it a SMALLINT, whose values
// an int32 always holds.
type widePenalty struct {
	Addr     string `parquet:"addr"`
	Class    string `parquet:"class,dict"`
	Until    int64  `parquet:"until,timestamp(millisecond)"`
	Failures uint32 `parquet:"failures"`
	LastAt   int64  `parquet:"last_at,timestamp(millisecond)"`
}

type widePenaltyShort struct {
	Addr     string `parquet:"addr"`
	Class    string `parquet:"class,dict"`
	Until    int64  `parquet:"until,timestamp(millisecond)"`
	Failures int16  `parquet:"failures"`
	LastAt   int64  `parquet:"last_at,timestamp(millisecond)"`
}

// writeWide writes rows with parquet-go's own writer (its types, not
// rowio's) to a file in t's temp dir, and returns its path.
func writeWide[T any](t *testing.T, rows []T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wide.parquet")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadFileWideInts: a file whose integer columns are wider than the
// fields they are read into (unsigned) is read by value: a value past its
// field is bad input naming the file, the column, the row and the value,
// not its bits (2^32-1 as -1); values that fit are read as they are,
// after rows read in more than one batch.
func TestReadFileWideInts(t *testing.T) {
	pen := func(n int, failures uint32) []widePenalty {
		rows := make([]widePenalty, n)
		for i := range rows {
			rows[i] = widePenalty{Addr: "127.0.0.1:1", Class: "connect_failed", Until: 2, Failures: 7, LastAt: 1}
		}
		rows[n-1].Failures = failures
		return rows
	}
	tests := []struct {
		name string
		path func(t *testing.T) string
		want string // after "FILE: "; "" to be read
		last int32  // the last row's failures, when read
	}{
		{"uinteger that fits", func(t *testing.T) string { return writeWide(t, pen(3, math.MaxInt32)) }, "", math.MaxInt32},
		{"uinteger 2^32-1", func(t *testing.T) string { return writeWide(t, pen(3, math.MaxUint32)) },
			`column "failures" row 3: 4294967295 is outside int32`, 0},
		{"uinteger 2^31 after a batch", func(t *testing.T) string { return writeWide(t, pen(5000, 1<<31)) },
			`column "failures" row 5000: 2147483648 is outside int32`, 0},
		{"smallint", func(t *testing.T) string {
			return writeWide(t, []widePenaltyShort{{Addr: "a:1", Class: "c", Failures: math.MinInt16}})
		}, "", math.MinInt16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.path(t)
			rows, err := ReadFile[schema.PeerPenalty](p)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := rows[len(rows)-1].Failures; got != tt.last {
					t.Fatalf("failures = %d, want %d", got, tt.last)
				}
				return
			}
			if want := p + ": " + tt.want; err == nil || !strings.HasSuffix(err.Error(), want) || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d)\nwant bad input ending %q", err, exitcode.Of(err), want)
			}
			if rows != nil {
				t.Fatalf("%d rows returned with the error", len(rows))
			}
		})
	}
}
