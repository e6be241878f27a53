package dedup

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestArrowSecondsOverflow: an Arrow timestamp[s] too large (or too
// small) for int64 milliseconds is bad input naming the row and the
// value, by both readers. Multiplied by 1000 it wrapped around, and one of year
// 584,556,052 was read as 2024-05-01T11:59:59.384Z.
func TestArrowSecondsOverflow(t *testing.T) {
	sec := t0.Unix()
	wrapsTo2024 := int64(math.MaxUint64/1000) + 1 + sec // *1000 wraps to about t0
	tests := []struct {
		name string
		at   int64 // the fourth row's observed_at (rows[3]), in seconds
		want string
	}{
		{"plausible", sec, ""},
		{"wraps to 2024", wrapsTo2024, strconv.FormatInt(wrapsTo2024, 10) + " s is outside"},
		{"max", math.MaxInt64, "9223372036854775807 s is outside"},
		{"min", math.MinInt64, "-9223372036854775808 s is outside"},
	}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Second}},
	}, nil)
	defer func() { fastPath = true }()
	for _, tt := range tests {
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
		b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		for i := range 5 {
			b.Field(0).(*array.BinaryBuilder).Append(bytes.Repeat([]byte{byte(i + 1)}, 20))
			at := sec
			if i == 3 {
				at = tt.at
			}
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(at))
		}
		rec := b.NewRecord()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
		w.Close()
		p := filepath.Join(t.TempDir(), "s.arrow")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, fast := range []bool{true, false} {
			name := tt.name + "/rows"
			if fast {
				name = tt.name + "/columns"
			}
			t.Run(name, func(t *testing.T) {
				fastPath = fast
				in, err := probe(p, "s.arrow", "")
				if err != nil {
					t.Fatal(err)
				}
				bt := newBatch(3600_000)
				defer bt.release()
				_, err = readInput(context.Background(), in, t0.UnixMilli()+86400_000, bt)
				switch {
				case tt.want == "" && err != nil:
					t.Fatalf("err = %v, want none", err)
				case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "row 4") ||
					!strings.Contains(err.Error(), "observed_at") || !strings.Contains(err.Error(), "s.arrow")):
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
			})
		}
	}
}
