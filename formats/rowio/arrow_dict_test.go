package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// arrowDictRow is a row of the dictionary-encoded streams below.
type arrowDictRow struct {
	Hash [20]byte `parquet:"info_hash"`
	Src  *string  `parquet:"source,optional"`
	N    int32    `parquet:"n,optional"`
	At   int64    `parquet:"at,timestamp(millisecond)"`
}

// dictArray is a dictionary array of type dt: indexes idx (-1: null)
// into the values vals (an array of dt's value type).
func dictArray(t *testing.T, dt *arrow.DictionaryType, idx []int, vals arrow.Array) arrow.Array {
	t.Helper()
	ib := array.NewBuilder(memory.DefaultAllocator, dt.IndexType)
	defer ib.Release()
	for _, i := range idx {
		i = max(i, 0) // a null's slot; marked null below
		switch b := ib.(type) {
		case *array.Int8Builder:
			b.Append(int8(i))
		case *array.Uint32Builder:
			b.Append(uint32(i))
		case *array.Int16Builder:
			b.Append(int16(i))
		case *array.Int32Builder:
			b.Append(int32(i))
		default:
			t.Fatalf("index type %s", dt.IndexType)
		}
	}
	ix := ib.NewArray()
	defer ix.Release()
	if nulls := countNeg(idx); nulls > 0 { // the same indexes, the nulls marked
		d := ix.Data()
		valid := make([]byte, (len(idx)+7)/8)
		for i, v := range idx {
			if v >= 0 {
				valid[i/8] |= 1 << (i % 8)
			}
		}
		nd := array.NewData(dt.IndexType, len(idx), []*memory.Buffer{memory.NewBufferBytes(valid), d.Buffers()[1]}, nil, nulls, 0)
		defer nd.Release()
		ix = array.MakeFromData(nd)
		defer ix.Release()
	}
	return array.NewDictionaryArray(dt, ix, vals)
}

func countNeg(xs []int) (n int) {
	for _, x := range xs {
		if x < 0 {
			n++
		}
	}
	return n
}

// values builds an array of type typ holding vs.
func values(t *testing.T, typ arrow.DataType, vs ...any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, typ)
	defer b.Release()
	for _, v := range vs {
		switch b := b.(type) {
		case *array.StringBuilder:
			b.Append(v.(string))
		case *array.LargeStringBuilder:
			b.Append(v.(string))
		case *array.StringViewBuilder:
			b.Append(v.(string))
		case *array.BinaryBuilder:
			b.Append(v.([]byte))
		case *array.BinaryViewBuilder:
			b.Append(v.([]byte))
		case *array.FixedSizeBinaryBuilder:
			b.Append(v.([]byte))
		case *array.Int32Builder:
			b.Append(int32(v.(int)))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v.(int)))
		default:
			t.Fatalf("builder %T", b)
		}
	}
	return b.NewArray()
}

// dictBatches writes an Arrow stream of schema fields whose batches are
// the columns of each of batches, with opts (ipc.WithDictionaryDeltas).
func dictBatches(t *testing.T, fields []arrow.Field, batches [][]arrow.Array, opts ...ipc.Option) []byte {
	t.Helper()
	s := arrow.NewSchema(fields, nil)
	var out bytes.Buffer
	w := ipc.NewWriter(&out, append([]ipc.Option{ipc.WithSchema(s)}, opts...)...)
	for _, cols := range batches {
		rec := array.NewRecord(s, cols, int64(cols[0].Len()))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		for _, c := range cols {
			c.Release()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// deltaDictionaries counts the dictionary batches of stream s that are
// deltas (isDelta, slot 2 of the DictionaryBatch table).
func deltaDictionaries(t *testing.T, s []byte) (n int) {
	t.Helper()
	for off := 0; off+8 <= len(s); {
		size := int(binary.LittleEndian.Uint32(s[off+4:]))
		if size == 0 {
			return n
		}
		meta := fbBytes(s[off+8 : off+8+size])
		body, err := checkMessage(meta)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := meta.table(0)
		if typ, _ := msg.field(1); typ > 0 && meta[typ] == 2 {
			hp, _ := msg.field(2)
			hdr, _ := meta.table(hp)
			if p, _ := hdr.field(2); p > 0 && meta[p] != 0 {
				n++
			}
		}
		off += 8 + size + int(body)
	}
	return n
}

func h20(c byte) []byte { return bytes.Repeat([]byte{c}, 20) }

// TestArrowDictionaryColumns: a dictionary-encoded column is read as the
// plain column of its values (pyarrow's Categorical, Polars' Categorical
// with uint32 indexes and large_utf8 values, DuckDB's ENUM), through
// replacement and delta dictionaries, a null index or a null value a
// null. They were refused: "column "source": want utf8, got
// dictionary<values=utf8, indices=int8, ordered=false>".
func TestArrowDictionaryColumns(t *testing.T) {
	str := func(s string) *string { return &s }
	dict := func(idx, val arrow.DataType) *arrow.DictionaryType {
		return &arrow.DictionaryType{IndexType: idx, ValueType: val}
	}
	fsb := &arrow.FixedSizeBinaryType{ByteWidth: 20}
	ms := arrow.FixedWidthTypes.Timestamp_ms
	plain := func(t *testing.T, n int) []arrow.Array { // n rows of hash 'a'+i, at 1000+i
		var hs []any
		var at []any
		for i := range n {
			hs = append(hs, h20(byte('a'+i)))
			at = append(at, 1000+i)
		}
		return []arrow.Array{values(t, fsb, hs...), values(t, ms, at...)}
	}
	base := []arrow.Field{{Name: "info_hash", Type: fsb}, {Name: "at", Type: ms}}
	tests := []struct {
		name   string
		stream func(t *testing.T) []byte
		want   []arrowDictRow
		deltas int // delta dictionary batches the stream must hold
		schema string
	}{
		{name: "utf8 values, int8 indexes, null index", stream: func(t *testing.T) []byte {
			dt := dict(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String)
			cols := append(plain(t, 3), dictArray(t, dt, []int{1, -1, 0}, values(t, arrow.BinaryTypes.String, "x", "dht_get_peers")))
			return dictBatches(t, append(base, arrow.Field{Name: "source", Type: dt, Nullable: true}), [][]arrow.Array{cols})
		}, want: []arrowDictRow{{Hash: [20]byte(h20('a')), Src: str("dht_get_peers"), At: 1000}, {Hash: [20]byte(h20('b')), At: 1001},
			{Hash: [20]byte(h20('c')), Src: str("x"), At: 1002}}, schema: "source: type=utf8"},
		{name: "large_utf8 values, uint32 indexes (Polars)", stream: func(t *testing.T) []byte {
			dt := dict(arrow.PrimitiveTypes.Uint32, arrow.BinaryTypes.LargeString)
			cols := append(plain(t, 2), dictArray(t, dt, []int{0, 0}, values(t, arrow.BinaryTypes.LargeString, "import")))
			return dictBatches(t, append(base, arrow.Field{Name: "source", Type: dt}), [][]arrow.Array{cols})
		}, want: []arrowDictRow{{Hash: [20]byte(h20('a')), Src: str("import"), At: 1000}, {Hash: [20]byte(h20('b')), Src: str("import"), At: 1001}},
			schema: "source: type=utf8"},
		{name: "utf8_view values", stream: func(t *testing.T) []byte {
			dt := dict(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.StringView)
			long := strings.Repeat("s", 30) // not inline in its view
			cols := append(plain(t, 2), dictArray(t, dt, []int{1, 0}, values(t, arrow.BinaryTypes.StringView, long, "v")))
			return dictBatches(t, append(base, arrow.Field{Name: "source", Type: dt}), [][]arrow.Array{cols})
		}, want: []arrowDictRow{{Hash: [20]byte(h20('a')), Src: str("v"), At: 1000}, {Hash: [20]byte(h20('b')), Src: str(strings.Repeat("s", 30)), At: 1001}}},
		{name: "binary and fixed_size_binary hashes, int32 and timestamp values", stream: func(t *testing.T) []byte {
			hb := dict(arrow.PrimitiveTypes.Int16, fsb)
			nb := dict(arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32)
			ab := dict(arrow.PrimitiveTypes.Int32, arrow.FixedWidthTypes.Timestamp_us)
			cols := []arrow.Array{
				dictArray(t, hb, []int{2, 0, 2}, values(t, fsb, h20('x'), h20('y'), h20('z'))),
				dictArray(t, ab, []int{0, 1, 1}, values(t, arrow.FixedWidthTypes.Timestamp_us, 5_000_000, 7_000_000)),
				dictArray(t, nb, []int{1, -1, 0}, values(t, arrow.PrimitiveTypes.Int32, 40, 41)),
			}
			return dictBatches(t, []arrow.Field{{Name: "info_hash", Type: hb}, {Name: "at", Type: ab},
				{Name: "n", Type: nb, Nullable: true}}, [][]arrow.Array{cols})
		}, want: []arrowDictRow{{Hash: [20]byte(h20('z')), N: 41, At: 5000}, {Hash: [20]byte(h20('x')), At: 7000},
			{Hash: [20]byte(h20('z')), N: 40, At: 7000}}, schema: "info_hash: type=fixed_size_binary[20]"},
		{name: "binary hashes, a replacement dictionary each batch", stream: func(t *testing.T) []byte {
			dt := dict(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.Binary)
			one := []arrow.Array{dictArray(t, dt, []int{0, 1}, values(t, arrow.BinaryTypes.Binary, h20('p'), h20('q'))),
				values(t, ms, 1, 2)}
			two := []arrow.Array{dictArray(t, dt, []int{0, 1}, values(t, arrow.BinaryTypes.Binary, h20('r'), h20('p'))),
				values(t, ms, 3, 4)}
			return dictBatches(t, []arrow.Field{{Name: "info_hash", Type: dt}, {Name: "at", Type: ms}}, [][]arrow.Array{one, two},
				ipc.WithDictionaryDeltas(true))
		}, want: []arrowDictRow{{Hash: [20]byte(h20('p')), At: 1}, {Hash: [20]byte(h20('q')), At: 2}, {Hash: [20]byte(h20('r')), At: 3},
			{Hash: [20]byte(h20('p')), At: 4}}, schema: "info_hash: type=binary"},
		{name: "a delta dictionary", stream: func(t *testing.T) []byte {
			dt := dict(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String)
			one := append(plain(t, 2), dictArray(t, dt, []int{0, 0}, values(t, arrow.BinaryTypes.String, "a")))
			two := append(plain(t, 2), dictArray(t, dt, []int{1, 0}, values(t, arrow.BinaryTypes.String, "a", "b")))
			return dictBatches(t, append(base, arrow.Field{Name: "source", Type: dt}), [][]arrow.Array{one, two},
				ipc.WithDictionaryDeltas(true))
		}, deltas: 1, want: []arrowDictRow{{Hash: [20]byte(h20('a')), Src: str("a"), At: 1000}, {Hash: [20]byte(h20('b')), Src: str("a"), At: 1001},
			{Hash: [20]byte(h20('a')), Src: str("b"), At: 1000}, {Hash: [20]byte(h20('b')), Src: str("a"), At: 1001}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.stream(t)
			if got := deltaDictionaries(t, s); got != tt.deltas {
				t.Fatalf("the stream holds %d delta dictionaries, want %d", got, tt.deltas)
			}
			r, err := OpenArrow[arrowDictRow]("in", bytes.NewReader(s))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if tt.schema != "" && !strings.Contains(r.ArrowSchema().String(), tt.schema) {
				t.Errorf("schema %s, want %q in it", r.ArrowSchema(), tt.schema)
			}
			got, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d rows, want %d", len(got), len(tt.want))
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Hash != w.Hash || g.N != w.N || g.At != w.At || (g.Src == nil) != (w.Src == nil) ||
					(g.Src != nil && *g.Src != *w.Src) {
					t.Errorf("row %d: got %x %v %d %d, want %x %v %d %d", i, g.Hash[:2], g.Src, g.N, g.At, w.Hash[:2], w.Src, w.N, w.At)
				}
			}
			// Record gives the decoded batches too (dedup's column reader).
			r2, err := OpenArrow[arrowDictRow]("in", bytes.NewReader(s))
			if err != nil {
				t.Fatal(err)
			}
			defer r2.Close()
			rec, err := r2.Record()
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range rec.Schema().Fields() {
				if f.Type.ID() == arrow.DICTIONARY || rec.Column(i).DataType().ID() == arrow.DICTIONARY {
					t.Errorf("Record's column %q is still %s", f.Name, rec.Column(i).DataType())
				}
			}
		})
	}
}

// TestArrowDictionaryBad: an index past its dictionary is a corrupt
// stream naming the column and row; a dictionary that decodes past the
// limits is ErrLimit, before the decoded column is allocated.
func TestArrowDictionaryBad(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	ms := arrow.FixedWidthTypes.Timestamp_ms
	fields := []arrow.Field{{Name: "info_hash", Type: arrow.BinaryTypes.Binary}, {Name: "at", Type: ms},
		{Name: "source", Type: dt}}
	big := strings.Repeat("v", 1000)
	rows := make([]int, 2000)
	hashes, ats := make([]any, len(rows)), make([]any, len(rows))
	for i := range rows {
		hashes[i], ats[i] = h20(1), i
	}
	tests := []struct {
		name  string
		idx   []int
		vals  []any
		lim   func(*Limits)
		patch func(t *testing.T, s []byte)
		want  string
		isErr error
	}{
		{name: "index past the dictionary", idx: []int{0, 3, 0}, vals: []any{"a", "b"},
			want: `column "source" row 2: dictionary index 3, past the 2 values of its dictionary`},
		{name: "dictionary offsets decrease", idx: []int{0, 1}, vals: []any{"a", "b"},
			patch: func(t *testing.T, s []byte) { // the dictionary batch's offsets 0, 1, 2 become 0, 2, 1
				at := bytes.Index(s, []byte{0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 'a', 'b'}) // padded to 8 bytes
				if at < 0 {
					t.Fatal("no dictionary offsets 0, 1, 2 in the stream")
				}
				s[at+4], s[at+8] = 2, 1
			},
			want: `column "source (its dictionary)": the value offsets decrease at row 2 (2, then 1)`},
		{name: "one value 2000 times past MaxArrowBuffer", idx: rows, vals: []any{big},
			lim: func(l *Limits) { l.MaxArrowBuffer = 1 << 20 }, isErr: ErrLimit,
			want: `dictionary-encoded column "source" decodes to 2000000 bytes in a record batch (limit 1048576)`},
		{name: "past MaxArrowLive", idx: rows, vals: []any{big},
			lim: func(l *Limits) { l.MaxArrowLive = 1 << 20 }, isErr: ErrLimit, want: "decode to over 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.idx)
			cols := []arrow.Array{values(t, arrow.BinaryTypes.Binary, hashes[:n]...), values(t, ms, ats[:n]...),
				dictArray(t, dt, tt.idx, values(t, arrow.BinaryTypes.String, tt.vals...))}
			s := dictBatches(t, fields, [][]arrow.Array{cols})
			if tt.patch != nil {
				tt.patch(t, s)
			}
			lim := DefaultLimits()
			if tt.lim != nil {
				tt.lim(&lim)
			}
			r, err := OpenArrowLimited[arrowDictRow]("in.arrows", bytes.NewReader(s), lim)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = r.ReadAll()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "in.arrows: ") {
				t.Fatalf("got %v, want an error naming in.arrows with %q", err, tt.want)
			}
			if tt.isErr != nil && !errors.Is(err, tt.isErr) {
				t.Errorf("%v is not %v", err, tt.isErr)
			}
			if tt.isErr == nil && !errors.As(err, new(*CorruptError)) {
				t.Errorf("%v is not a CorruptError", err)
			}
		})
	}
}
