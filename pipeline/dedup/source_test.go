package dedup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/internal/exitcode"
)

// Sources as DuckDB writes a BLOB column (plain BYTE_ARRAY without a
// string annotation), plain and dictionary-encoded, and as a string.
type (
	blobSource struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(microsecond)"`
		Source     []byte `parquet:"source,optional"`
	}
	blobSourceDict struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(microsecond)"`
		Source     []byte `parquet:"source,optional,dict"`
	}
	textSource struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(microsecond)"`
		Source     string `parquet:"source,optional,dict"`
	}
)

// sourceRows makes n rows of distinct hashes with source "dht_get_peers",
// but row bad's, which is src.
func sourceRows(n, bad int, src []byte) (hashes [][]byte, srcs [][]byte) {
	for i := range n {
		h := make([]byte, 20)
		h[0], h[1], h[2] = byte(i), byte(i>>8), 0x5c
		hashes = append(hashes, h)
		s := []byte("dht_get_peers")
		if i == bad {
			s = src
		}
		srcs = append(srcs, s)
	}
	return hashes, srcs
}

// sourceArrow is an Arrow IPC stream of such rows, 100 a batch, source
// of type srcType (text or binary).
func sourceArrow(t *testing.T, hashes, srcs [][]byte, srcType arrow.DataType) []byte {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
		{Name: "source", Type: srcType, Nullable: true},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := range hashes {
		b.Field(0).(*array.BinaryBuilder).Append(hashes[i])
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(t0.UnixMilli()))
		b.Field(2).(interface{ AppendString(string) }).AppendString(string(srcs[i]))
		if (i+1)%100 == 0 || i == len(hashes)-1 {
			rec := b.NewRecord()
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestInvalidSourceIsBadInput: a source that is not valid UTF-8 (a BLOB
// or string column holding other bytes), or longer than maxSourceLen, is
// bad input named by file and row, through the fast path and the row
// readers, in Parquet and Arrow, and commits nothing. It was stored as
// last_source, and DuckDB then refused the whole state glob.
func TestInvalidSourceIsBadInput(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	if _, err := run(t, data, nil, writeObs(t, dir, genObs(4, 100, 50))); err != nil {
		t.Fatal(err)
	}
	invalid := []byte("\xffsrc")
	// arrowFile writes 300 rows of source "dht_get_peers" but row bad's,
	// src, as an Arrow stream whose source is of type srcType.
	arrowFile := func(name string, bad int, src []byte, srcType arrow.DataType) string {
		p := filepath.Join(dir, name)
		hs, ss := sourceRows(300, bad, src)
		if err := os.WriteFile(p, sourceArrow(t, hs, ss, srcType), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const wantInvalid = `source "\xffsrc" is not valid UTF-8`
	tests := []struct {
		name, path, want string
	}{
		{"BLOB, plain pages", func() string {
			hs, ss := sourceRows(5000, 4321, invalid)
			rows := make([]blobSource, len(hs))
			for i := range rows {
				rows[i] = blobSource{InfoHash: hs[i], ObservedAt: t0.UnixMicro(), Source: ss[i]}
			}
			return writeRows(t, filepath.Join(dir, "blob.parquet"), rows)
		}(), "row 4322: " + wantInvalid},
		{"BLOB, dictionary", func() string {
			hs, ss := sourceRows(5000, 4321, invalid)
			rows := make([]blobSourceDict, len(hs))
			for i := range rows {
				rows[i] = blobSourceDict{InfoHash: hs[i], ObservedAt: t0.UnixMicro(), Source: ss[i]}
			}
			return writeRows(t, filepath.Join(dir, "blobdict.parquet"), rows)
		}(), "row 4322: " + wantInvalid},
		{"string", func() string {
			hs, ss := sourceRows(5000, 4321, invalid)
			rows := make([]textSource, len(hs))
			for i := range rows {
				rows[i] = textSource{InfoHash: hs[i], ObservedAt: t0.UnixMicro(), Source: string(ss[i])}
			}
			return writeRows(t, filepath.Join(dir, "text.parquet"), rows)
		}(), "row 4322: " + wantInvalid},
		{"too long", func() string {
			hs, ss := sourceRows(5000, 17, bytes.Repeat([]byte("x"), maxSourceLen+1))
			rows := make([]blobSource, len(hs))
			for i := range rows {
				rows[i] = blobSource{InfoHash: hs[i], ObservedAt: t0.UnixMicro(), Source: ss[i]}
			}
			return writeRows(t, filepath.Join(dir, "long.parquet"), rows)
		}(), "row 18: source has 257 bytes, more than 256"},
		{"Arrow stream", arrowFile("obs.arrow", 142, invalid, arrow.BinaryTypes.String), "row 143: " + wantInvalid},
		{"Arrow binary", arrowFile("bin.arrow", 142, invalid, arrow.BinaryTypes.Binary), "row 143: " + wantInvalid},
		{"Arrow large_binary", arrowFile("large.arrow", 7, invalid, arrow.BinaryTypes.LargeBinary),
			"row 8: " + wantInvalid},
		{"Arrow binary_view", arrowFile("view.arrow", 299, invalid, arrow.BinaryTypes.BinaryView),
			"row 300: " + wantInvalid},
		{"Arrow binary, too long", arrowFile("binlong.arrow", 17, bytes.Repeat([]byte("x"), maxSourceLen+1),
			arrow.BinaryTypes.Binary), "row 18: source has 257 bytes, more than 256"},
	}
	for _, tt := range tests {
		for _, fast := range []bool{true, false} {
			name := tt.name + ", fast path"
			if !fast {
				name = tt.name + ", row reader"
			}
			t.Run(name, func(t *testing.T) {
				fastPath = fast
				defer func() { fastPath = true }()
				good := writeObs(t, dir, genObs(99, 10, 10))
				_, err := run(t, data, nil, good, tt.path)
				want := "dedup: " + tt.path + ": " + tt.want
				if err == nil || err.Error() != want {
					t.Fatalf("err = %v\nwant %s", err, want)
				}
				if exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("exit code %d, want %d", exitcode.Of(err), exitcode.Usage)
				}
				d, _ := dataset.Open(context.Background(), data, dataset.OpenOptions{})
				if m, _ := d.Current(); m.Snapshot != 1 {
					t.Fatalf("bad input committed snapshot %d", m.Snapshot)
				}
			})
		}
	}
}

// TestBlobSourceRead: a BLOB source of valid UTF-8 is a source like a
// string one, through both readers.
func TestBlobSourceRead(t *testing.T) {
	hs, ss := sourceRows(3000, 1234, []byte("x-custom"))
	rows := make([]blobSourceDict, len(hs))
	for i := range rows {
		rows[i] = blobSourceDict{InfoHash: hs[i], ObservedAt: t0.UnixMicro(), Source: ss[i]}
	}
	p := writeRows(t, filepath.Join(t.TempDir(), "blob.parquet"), rows)
	in, err := probe(p, "blob.parquet", "")
	if err != nil {
		t.Fatal(err)
	}
	compareReaders(t, in)
	b := newBatch(3600_000)
	defer b.release()
	if _, err := readInput(context.Background(), in, t0.UnixMilli(), b); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b.srcs, ","); got != "import,dht_get_peers,x-custom" {
		t.Fatalf("sources %s", got)
	}
}
