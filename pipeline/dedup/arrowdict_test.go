package dedup

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/schema"
)

// dictStream writes obs as an Arrow IPC stream whose info_hash is of type
// hashType (bytes, or hex when its values are text) and source of
// srcType, either possibly dictionary-encoded, in batches of 700 rows.
// arrow-go's dictionary builders keep their values from batch to batch:
// each batch's dictionary extends the last one's, and is written whole (a
// replacement), or as a delta with ipc.WithDictionaryDeltas.
func dictStream(t *testing.T, obs []schema.Observation, hashType, srcType arrow.DataType, opts ...ipc.Option) []byte {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: hashType},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{Name: "source", Type: srcType, Nullable: true},
		{Name: "hash_type", Type: arrow.PrimitiveTypes.Int8},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, append([]ipc.Option{ipc.WithSchema(sch)}, opts...)...)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	valueType := func(t arrow.DataType) arrow.DataType {
		if d, ok := t.(*arrow.DictionaryType); ok {
			return d.ValueType
		}
		return t
	}
	hexHash := rowioString(valueType(hashType))
	for i, o := range obs {
		h := o.InfoHash[:]
		if len(o.InfoHashV2) == 32 {
			h = o.InfoHashV2
		}
		var err error
		switch hb := b.Field(0).(type) {
		case *array.BinaryDictionaryBuilder:
			if hexHash {
				err = hb.AppendString(hex.EncodeToString(h))
			} else {
				err = hb.Append(h)
			}
		case *array.FixedSizeBinaryDictionaryBuilder:
			err = hb.Append(h)
		case *array.StringBuilder:
			hb.Append(hex.EncodeToString(h))
		case *array.BinaryBuilder:
			hb.Append(h)
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(o.ObservedAt))
		switch sb := b.Field(2).(type) {
		case *array.BinaryDictionaryBuilder:
			if i%5 == 0 {
				sb.AppendNull()
			} else if err := sb.AppendString(o.Source); err != nil {
				t.Fatal(err)
			}
		case *array.StringBuilder:
			if i%5 == 0 {
				sb.AppendNull()
			} else {
				sb.Append(o.Source)
			}
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

// readStream is what readInput gives of the Arrow stream (describe).
func readStream(t *testing.T, stream []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.arrows")
	if err := os.WriteFile(p, stream, 0o644); err != nil {
		t.Fatal(err)
	}
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

// rowioString reports whether t is an Arrow text type.
func rowioString(t arrow.DataType) bool {
	return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING || t.ID() == arrow.STRING_VIEW
}

// TestArrowDictionaryColumns: a dictionary-encoded info_hash (bytes,
// fixed-size or hex) or source, as pyarrow writes a Categorical, Polars
// its Categorical and DuckDB an ENUM, is read as its plain column is, by
// both readers, with a dictionary of its own in each batch (replacement
// dictionaries, or deltas). It was refused: "wrong schema: column
// "source" is dictionary<values=utf8, indices=int8, ordered=false>, want
// text or a BLOB (binary)".
func TestArrowDictionaryColumns(t *testing.T) {
	obs := genObs(23, 5000, 900)
	sources := []string{"dht_get_peers", "import", "x", "dht_sample_infohashes"}
	for i := range obs {
		obs[i].Source = sources[(i/300)%len(sources)]
		if h := obs[i].InfoHash; h[1]%7 == 0 && i%3 == 0 {
			obs[i].InfoHashV2 = append(h[:], bytes.Repeat([]byte{h[2]}, 12)...)
			obs[i].HashType = schema.HashV2
		}
	}
	read := func(t *testing.T, stream []byte, fast bool) string {
		t.Helper()
		defer func() { fastPath = true }()
		fastPath = fast
		return readStream(t, stream)
	}
	want := read(t, dictStream(t, obs, arrow.BinaryTypes.Binary, arrow.BinaryTypes.String), true)
	dict := func(idx, val arrow.DataType) arrow.DataType {
		return &arrow.DictionaryType{IndexType: idx, ValueType: val}
	}
	i8, i32 := arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32
	for _, tt := range []struct {
		name      string
		hash, src arrow.DataType
		opts      []ipc.Option
		readers   []bool // fastPath values
	}{
		{"source dictionary<int8, utf8>", arrow.BinaryTypes.Binary, dict(i8, arrow.BinaryTypes.String), nil, []bool{true, false}},
		{"source dictionary<uint32, utf8>", arrow.BinaryTypes.Binary, // arrow-go builds no large_utf8 dictionary
			dict(arrow.PrimitiveTypes.Uint32, arrow.BinaryTypes.String), nil, []bool{true, false}},
		{"source dictionary, deltas", arrow.BinaryTypes.Binary, dict(i8, arrow.BinaryTypes.String),
			[]ipc.Option{ipc.WithDictionaryDeltas(true)}, []bool{true, false}},
		{"info_hash dictionary<int32, binary>", dict(i32, arrow.BinaryTypes.Binary), arrow.BinaryTypes.String, nil,
			[]bool{true, false}},
		{"info_hash dictionary<int32, hex utf8>", dict(i32, arrow.BinaryTypes.String), arrow.BinaryTypes.String, nil,
			[]bool{true, false}},
		{"both dictionary-encoded", dict(arrow.PrimitiveTypes.Int16, arrow.BinaryTypes.Binary),
			dict(i8, arrow.BinaryTypes.String), nil, []bool{true, false}},
	} {
		stream := dictStream(t, obs, tt.hash, tt.src, tt.opts...)
		for _, fast := range tt.readers {
			t.Run(tt.name+map[bool]string{true: "/columns", false: "/rows"}[fast], func(t *testing.T) {
				if got := read(t, stream, fast); got != want {
					t.Fatalf("got:\n%.1500s\nwant (binary, utf8):\n%.1500s", got, want)
				}
			})
		}
	}
}
