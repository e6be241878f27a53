package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// stream returns an Arrow IPC stream of two batches of one row each, and
// the length of the stream up to the end of the first batch.
func stream(t *testing.T) ([]byte, int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "source", Type: arrow.BinaryTypes.String},
		{Name: "peer_port", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	first := 0
	at := time.Date(2026, 12, 4, 13, 15, 0, 123e6, time.UTC)
	for i, h := range [][]byte{{0xab, 0x01}, {0xcd, 0x02}} {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		b.Field(0).(*array.BinaryBuilder).Append(h)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(at.UnixMilli()))
		b.Field(2).(*array.StringBuilder).Append("dht_get_peers")
		b.Field(3).(*array.Int32Builder).AppendNull()
		rec := b.NewRecord()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
		if i == 0 {
			first = buf.Len()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), first
}

func TestConvert(t *testing.T) {
	whole, first := stream(t)
	const head = "info_hash,observed_at,source,peer_port\n"
	const row1 = "ab01,2026-12-04T13:15:00.123Z,dht_get_peers,\n"
	const row2 = "cd02,2026-12-04T13:15:00.123Z,dht_get_peers,\n"
	tests := map[string]struct {
		bytes    []byte
		want     string
		wantWarn bool
	}{
		"whole stream":              {whole, head + row1 + row2, false},
		"no end-of-stream marker":   {whole[:len(whole)-8], head + row1 + row2, false},
		"cut in the second batch":   {whole[:first+20], head + row1, true},
		"cut after the first batch": {whole[:first], head + row1, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "observations.arrows")
			if err := os.WriteFile(in, tc.bytes, 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errw bytes.Buffer
			if err := convert(in, &out, &errw); err != nil {
				t.Fatalf("convert: %v", err)
			}
			if out.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tc.want)
			}
			if warned := strings.Contains(errw.String(), "stream ends after 1 rows"); warned != tc.wantWarn {
				t.Errorf("stderr %q: warned %v, want %v", errw.String(), warned, tc.wantWarn)
			}
		})
	}
}

func TestConvertNoSchema(t *testing.T) {
	in := filepath.Join(t.TempDir(), "results.arrows")
	if err := os.WriteFile(in, []byte{0xff, 0xff}, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	err := convert(in, &out, &errw)
	if err == nil || !strings.Contains(err.Error(), in+": no schema") {
		t.Fatalf("convert of a stream without a schema: err %v, want one naming %s", err, in)
	}
}
