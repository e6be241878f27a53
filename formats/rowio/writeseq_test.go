package rowio

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestWriteSeqWritesAsWrite checks that WriteSeq writes the bytes that
// one Write of all the rows writes: one Arrow record batch, and Parquet
// row groups ended at the same rows (the byte bound is made small so
// that they end inside WriteSeq's chunks).
func TestWriteSeqWritesAsWrite(t *testing.T) {
	defer func(n int64) { rowGroupBytes = n }(rowGroupBytes)
	rowGroupBytes = 4 << 10
	rows := make([]schema.Job, 3*seqChunk+100)
	for i := range rows {
		rows[i] = schema.Job{InfoHash: schema.Hash{byte(i), byte(i >> 8)}, Attempt: int32(i % 7), Reason: schema.ReasonRetry,
			LeaseID: "L1", LeaseUntil: int64(i)}
		if i%5 == 0 {
			rows[i].Peers = []string{fmt.Sprintf("127.0.0.%d:%d", i%250, i)}
		}
	}
	write := func(t *testing.T, path string, seq bool, rows []schema.Job) []byte {
		t.Helper()
		var pipe bytes.Buffer
		w, err := Create[schema.Job](path, &pipe)
		if err != nil {
			t.Fatal(err)
		}
		if seq {
			err = w.WriteSeq(slices.Values(rows))
		} else {
			err = w.Write(rows)
		}
		if err != nil {
			t.Fatal(err)
		}
		if w.Rows() != int64(len(rows)) {
			t.Errorf("Rows() = %d after %d rows", w.Rows(), len(rows))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if path == "-" {
			return pipe.Bytes()
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tt := range []struct {
		name, output string
		rows         []schema.Job
	}{
		{"parquet", "r.parquet", rows},
		{"parquet/whole chunks", "r.parquet", rows[:2*seqChunk]},
		{"parquet/none", "r.parquet", nil},
		{"arrow", "-", rows},
		{"arrow/none", "-", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := func() string {
				if tt.output == "-" {
					return "-"
				}
				return filepath.Join(t.TempDir(), tt.output)
			}
			want := write(t, path(), false, tt.rows)
			got := write(t, path(), true, tt.rows)
			if !bytes.Equal(got, want) {
				t.Errorf("WriteSeq wrote %d bytes, not the %d bytes of one Write", len(got), len(want))
			}
		})
	}
}
