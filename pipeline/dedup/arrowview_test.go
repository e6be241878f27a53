package dedup

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/schema"
)

// viewStream writes obs as an Arrow IPC stream with the given types for
// info_hash (binary or text: hex) and source, in batches of 700 rows:
// Polars (compat_level newest, its default) writes binary_view and
// utf8_view.
func viewStream(t *testing.T, obs []schema.Observation, hashType, srcType arrow.DataType) []byte {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: hashType},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "source", Type: srcType, Nullable: true},
		{Name: "hash_type", Type: arrow.PrimitiveTypes.Int8},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	type appender interface{ AppendString(string) }
	for i, o := range obs {
		h := o.InfoHash[:]
		if len(o.InfoHashV2) == 32 {
			h = o.InfoHashV2
		}
		switch hb := b.Field(0).(type) {
		case *array.StringBuilder, *array.StringViewBuilder:
			hb.(appender).AppendString(hex.EncodeToString(h))
		case *array.BinaryBuilder:
			hb.Append(h)
		case *array.BinaryViewBuilder:
			hb.Append(h)
		}
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(o.ObservedAt * 1000))
		if i%5 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(appender).AppendString(o.Source)
		}
		b.Field(3).(*array.Int8Builder).Append(o.HashType)
		if (i+1)%700 == 0 || i == len(obs)-1 {
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

// TestArrowViewTypes: binary_view and utf8_view columns (Polars') are read
// as binary and utf8 are, by both readers: hashes as bytes or hex, v2
// ones of 32 bytes, sources short (inline in the view) and long. They
// were refused: "column "info_hash": want binary, got binary_view".
func TestArrowViewTypes(t *testing.T) {
	obs := genObs(21, 5000, 900)
	sources := []string{"dht_get_peers", "import", "x", "dht_sample_infohashes"}
	for i := range obs {
		obs[i].Source = sources[(i/300)%len(sources)]
		if h := obs[i].InfoHash; h[1]%7 == 0 && i%3 == 0 { // v2 in some of its rows, one full hash each
			obs[i].InfoHashV2 = append(h[:], bytes.Repeat([]byte{h[2]}, 12)...)
			obs[i].HashType = schema.HashV2
		}
	}
	read := func(t *testing.T, stream []byte, fast bool) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "in.arrows")
		if err := os.WriteFile(p, stream, 0o644); err != nil {
			t.Fatal(err)
		}
		defer func() { fastPath = true }()
		fastPath = fast
		in, err := probe(p, "in.arrows", "")
		if err != nil {
			t.Fatal(err)
		}
		b := newBatch(3600_000)
		defer b.release()
		if _, err := readInput(context.Background(), in, t0.UnixMilli(), b); err != nil {
			t.Fatal(err)
		}
		return describe(b)
	}
	want := read(t, viewStream(t, obs, arrow.BinaryTypes.Binary, arrow.BinaryTypes.String), true)
	for _, tt := range []struct {
		name      string
		hash, src arrow.DataType
		readers   []bool // fastPath values
	}{
		{"binary_view, utf8_view", arrow.BinaryTypes.BinaryView, arrow.BinaryTypes.StringView, []bool{true, false}},
		{"hex utf8_view", arrow.BinaryTypes.StringView, arrow.BinaryTypes.StringView, []bool{true, false}},
		{"binary_view, utf8", arrow.BinaryTypes.BinaryView, arrow.BinaryTypes.String, []bool{true, false}},
		// A BLOB source, as Parquet's: it was refused ("column "source" is binary").
		{"binary, source binary", arrow.BinaryTypes.Binary, arrow.BinaryTypes.Binary, []bool{true, false}},
		{"binary, source large_binary", arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary, []bool{true, false}},
		{"binary_view, source binary_view", arrow.BinaryTypes.BinaryView, arrow.BinaryTypes.BinaryView,
			[]bool{true, false}},
	} {
		stream := viewStream(t, obs, tt.hash, tt.src)
		for _, fast := range tt.readers {
			t.Run(tt.name+map[bool]string{true: "/columns", false: "/rows"}[fast], func(t *testing.T) {
				if got := read(t, stream, fast); got != want {
					t.Fatalf("got:\n%.1500s\nwant (binary, utf8):\n%.1500s", got, want)
				}
			})
		}
	}
}

// TestArrowViewOutOfRange: a binary_view whose header points past its
// data buffer is bad input naming the column and row, never a panic
// inside arrow.
func TestArrowViewOutOfRange(t *testing.T) {
	obs := genObs(22, 10, 10)
	stream := viewStream(t, obs, arrow.BinaryTypes.BinaryView, arrow.BinaryTypes.String)
	// Row 3's header: 4 bytes length (20), 4 of prefix, 4 of buffer
	// index, 4 of offset (60). Move its offset far past the data.
	hdr := make([]byte, 16)
	copy(hdr, []byte{20, 0, 0, 0})
	copy(hdr[4:], obs[3].InfoHash[:4])
	at := bytes.Index(stream, append(hdr[:8:8], 0, 0, 0, 0, 60, 0, 0, 0))
	if at < 0 {
		t.Fatal("row 3's view header not found")
	}
	stream[at+12] = 0xf0
	p := filepath.Join(t.TempDir(), "in.arrows")
	if err := os.WriteFile(p, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() { fastPath = true }()
	for _, fast := range []bool{true, false} {
		fastPath = fast
		in, err := probe(p, "in.arrows", "")
		if err != nil {
			t.Fatal(err)
		}
		b := newBatch(3600_000)
		_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
		b.release()
		if err == nil || !strings.Contains(err.Error(), `column "info_hash": row 4: a view of 20 bytes at 240, past the`) {
			t.Fatalf("fast %v: err = %v", fast, err)
		}
	}
}
