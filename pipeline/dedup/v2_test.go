package dedup

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestV2HashFromItsFullForm: observations that give a hash's full v2
// form (info_hash_v2, its first 20 bytes the info_hash) make it a v2 hash
// whatever their hash_type says, in whichever order and runs they come.
func TestV2HashFromItsFullForm(t *testing.T) {
	var plain, full []schema.Observation
	for i := range 30 {
		var v2 [32]byte
		v2[0], v2[1], v2[31] = 0x40+byte(i), byte(i), 9
		o := schema.Observation{HashType: schema.HashV1, ObservedAt: t0.Add(time.Duration(i) * time.Minute).UnixMilli(), Source: schema.SourceGetPeers}
		copy(o.InfoHash[:], v2[:20])
		plain = append(plain, o)
		o.InfoHashV2 = v2[:]
		o.ObservedAt += int64(time.Hour / time.Millisecond)
		full = append(full, o)
	}
	for name, runs := range map[string][][]int{
		"plain then full": {{0}, {1}},
		"full then plain": {{1}, {0}},
		"one run":         {{0, 1}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			ins := []string{writeObs(t, dir, plain), writeObs(t, dir, full)}
			for _, r := range runs {
				var args []string
				for _, k := range r {
					args = append(args, ins[k])
				}
				if _, err := run(t, data, nil, args...); err != nil {
					t.Fatal(err)
				}
			}
			s := readState(t, data)
			for _, o := range full {
				st := s[o.InfoHash]
				if st.HashType != schema.HashV2 || string(st.InfoHashV2) != string(o.InfoHashV2) || st.SeenCount != 2 {
					t.Fatalf("%x: hash_type %d info_hash_v2 %x seen %d; want 2, %x, 2", o.InfoHash, st.HashType, st.InfoHashV2, st.SeenCount, o.InfoHashV2)
				}
			}
		})
	}
}

// TestTooManySources: an input with more distinct source values than a
// batch can tell apart is bad input, not sources silently merged.
func TestTooManySources(t *testing.T) {
	dir := t.TempDir()
	obs := genObs(51, maxSources+10, maxSources+10)
	for i := range obs {
		obs[i].Source = fmt.Sprintf("src-%d", i)
	}
	in := writeObs(t, dir, obs)
	_, err := run(t, filepath.Join(dir, "ds"), nil, in)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "distinct source values") || !strings.Contains(err.Error(), filepath.Base(in)) {
		t.Fatalf("got %v", err)
	}
}

// wideTypeObs is an observation as another writer may lay it out: an
// INT32 hash_type and any source string.
type wideTypeObs struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	HashType   int32       `parquet:"hash_type"`
	ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
	Source     string      `parquet:"source"`
}

// bigTypeObs lays hash_type out as BIGINT (INT64), as DuckDB writes an
// untyped integer column.
type bigTypeObs struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	HashType   int64       `parquet:"hash_type"`
	ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
	Source     string      `parquet:"source"`
}

// TestOtherWritersValues: an empty source is an import (as on the Arrow
// path), and a hash_type beyond int8 is bad input rather than the type it
// wraps to (257 read as 1), on the fast column path and the row path, for
// INT32 and INT64 columns.
func TestOtherWritersValues(t *testing.T) {
	h := schema.Hash{0x11, 1}
	at := t0.UnixMilli()
	cases := []struct {
		name string
		typ  int64
		src  string
		err  string // "" for none
		want string // last_source
	}{
		{"empty source", 1, "", "", schema.SourceImport},
		{"a source", 1, "dht_get_peers", "", "dht_get_peers"},
		{"hash_type 257", 257, "x", "hash_type out of range", ""},
		{"hash_type -255", -255, "x", "hash_type out of range", ""},
		{"hash_type 2^32+1", 1<<32 + 1, "x", "hash_type out of range", ""},
		{"hash_type 3", 3, "x", "hash_type 3", ""},
	}
	defer func() { fastPath = true }()
	for _, fast := range []bool{true, false} {
		for _, width := range []string{"INT32", "INT64"} {
			for _, c := range cases {
				if width == "INT32" && int64(int32(c.typ)) != c.typ {
					continue
				}
				t.Run(fmt.Sprintf("fast=%v/%s/%s", fast, width, c.name), func(t *testing.T) {
					fastPath = fast
					dir := t.TempDir()
					in := filepath.Join(dir, "in.parquet")
					var body []byte
					if width == "INT32" {
						body = writeRowsBytes(t, dir, []wideTypeObs{{h, int32(c.typ), at, c.src}})
					} else {
						body = writeRowsBytes(t, dir, []bigTypeObs{{h, c.typ, at, c.src}})
					}
					if err := os.WriteFile(in, body, 0o644); err != nil {
						t.Fatal(err)
					}
					data := filepath.Join(dir, "ds")
					_, err := run(t, data, nil, in)
					if c.err != "" {
						if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), c.err) {
							t.Fatalf("got %v, want bad input %q", err, c.err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if got := readState(t, data)[h].LastSource; got != c.want {
						t.Fatalf("last_source %q, want %q", got, c.want)
					}
				})
			}
		}
	}
}

// TestArrowWideHashType: an Arrow hash_type of any integer width, signed
// or not, is read by value, by both readers: 257 is out of range (it was
// read as the int8 it wraps to, 1), 2 is v2. A uint64 one was refused
// ("column "hash_type" is uint64"), though Parquet's UBIGINT is read; one
// past 2^63 is out of range too, not the negative int64 it would wrap to,
// in the same words by both readers (the row reader said "more than an
// int64 holds").
func TestArrowWideHashType(t *testing.T) {
	types := []arrow.DataType{arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32,
		arrow.PrimitiveTypes.Uint64}
	const past63 = -1 // stands for 2^64-1 in a uint64 column
	defer func() { fastPath = true }()
	for _, typ := range types {
		for _, tc := range []struct {
			v    int64
			fast bool
		}{{257, true}, {257, false}, {2, true}, {2, false}, {past63, true}, {past63, false}} {
			v := tc.v
			if v == past63 && typ.ID() != arrow.UINT64 {
				continue
			}
			reader := map[bool]string{true: "columns", false: "rows"}[tc.fast]
			name := fmt.Sprint(v)
			if v == past63 {
				name = "2^64-1"
			}
			t.Run(typ.String()+"/"+name+"/"+reader, func(t *testing.T) {
				fastPath = tc.fast
				sch := arrow.NewSchema([]arrow.Field{
					{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
					{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
					{Name: "hash_type", Type: typ},
				}, nil)
				b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
				defer b.Release()
				b.Field(0).(*array.BinaryBuilder).Append(make([]byte, 20))
				b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(t0.UnixMilli()))
				switch fb := b.Field(2).(type) {
				case *array.Int16Builder:
					fb.Append(int16(v))
				case *array.Int32Builder:
					fb.Append(int32(v))
				case *array.Int64Builder:
					fb.Append(v)
				case *array.Uint16Builder:
					fb.Append(uint16(v))
				case *array.Uint32Builder:
					fb.Append(uint32(v))
				case *array.Uint8Builder:
					fb.Append(uint8(min(v, 255))) // 257: 255, beyond int8 too
				case *array.Uint64Builder:
					fb.Append(uint64(v)) // past63: 2^64-1
				}
				var buf bytes.Buffer
				w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
				rec := b.NewRecord()
				if err := w.Write(rec); err != nil {
					t.Fatal(err)
				}
				rec.Release()
				w.Close()
				p := filepath.Join(t.TempDir(), "in.arrow")
				if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				in, err := probe(p, "in.arrow", "")
				if err != nil {
					t.Fatal(err)
				}
				bt := newBatch(3600_000)
				defer bt.release()
				_, err = readInput(context.Background(), in, t0.UnixMilli(), bt)
				if v == 257 || v == past63 {
					if err == nil || !strings.Contains(err.Error(), "row 1: hash_type out of range, want 1 or 2") {
						t.Fatalf("err = %v, want hash_type out of range", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestV2NotTheRowsHash: a row whose info_hash_v2 is not its info_hash's
// full v2 hash is bad input named by row, in plain and dictionary pages,
// text columns and Arrow streams, through the column and the row
// readers: with a 32-byte info_hash, another 32 bytes (in its last byte,
// or whole); with a 20-byte one, 32 bytes that do not start with it (the
// DHT key is a v2 hash's first 20 bytes). The column readers took the
// other info_hash_v2 or dropped it, and every reader dropped the one that
// did not start with a 20-byte info_hash, keeping the row. Rows where
// both agree are read.
func TestV2NotTheRowsHash(t *testing.T) {
	long := bytes.Repeat([]byte{0x5a}, 32)
	hx := fmt.Sprintf("%x", long)
	defer func() { fastPath = true }()
	for _, other := range []struct {
		name string
		hash []byte // the bad row's info_hash: long, or its first 20 bytes
		v2   []byte
		want string // the error after "row N: "
	}{
		{"32 bytes, last byte", long, append(bytes.Clone(long[:31]), 0x5b),
			"info_hash_v2 differs from the row's 32-byte info_hash " + hx},
		{"32 bytes, whole", long, bytes.Repeat([]byte{0x6b}, 32),
			"info_hash_v2 differs from the row's 32-byte info_hash " + hx},
		{"20 bytes, another hash", long[:20], bytes.Repeat([]byte{0x6b}, 32),
			fmt.Sprintf("info_hash_v2 %x does not start with the row's info_hash %s", bytes.Repeat([]byte{0x6b}, 32), hx[:40])},
		{"20 bytes, byte 19", long[:20], append(append(bytes.Clone(long[:19]), 0x5b), long[20:]...),
			fmt.Sprintf("info_hash_v2 %s5b%s does not start with the row's info_hash %s", hx[:38], hx[40:], hx[:40])},
	} {
		at := t0.UnixMilli()
		plain := make([]blobMicros, 5000)
		dict := make([]blobNanosDict, 5000)
		text := make([]textObs, 5000)
		for i := range plain {
			plain[i] = blobMicros{InfoHash: make([]byte, 20), ObservedAt: at * 1000}
			dict[i] = blobNanosDict{InfoHash: make([]byte, 20), ObservedAt: at * 1_000_000}
			text[i] = textObs{InfoHash: hx[:40], ObservedAt: at}
			if i%3 == 0 { // 32-byte hashes that agree, between others
				plain[i].InfoHash, plain[i].InfoHashV2 = long, long
				dict[i].InfoHash, dict[i].InfoHashV2 = long, long
				text[i].InfoHash, text[i].InfoHashV2 = hx, hx
			}
		}
		plain[4322] = blobMicros{InfoHash: other.hash, InfoHashV2: other.v2, ObservedAt: at * 1000}
		dict[4322] = blobNanosDict{InfoHash: other.hash, InfoHashV2: other.v2, ObservedAt: at * 1_000_000}
		text[4322] = textObs{InfoHash: fmt.Sprintf("%x", other.hash), InfoHashV2: fmt.Sprintf("%x", other.v2), ObservedAt: at}
		dir := t.TempDir()
		want := func(row int) string { return fmt.Sprintf("dedup: in: row %d: %s", row+1, other.want) } // row from 0
		tests := []struct{ name, path, want string }{
			{"plain", writeRows(t, filepath.Join(dir, "a.parquet"), plain), want(4322)},
			{"dictionary", writeRows(t, filepath.Join(dir, "b.parquet"), dict), want(4322)},
			{"text", writeRows(t, filepath.Join(dir, "c.parquet"), text), want(4322)},
			{"Arrow", v2Arrow(t, dir, false, long, other.hash, other.v2), want(242)},
			{"Arrow utf8", v2Arrow(t, dir, true, long, other.hash, other.v2), want(242)},
		}
		for _, tt := range tests {
			for _, fast := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/fast=%v", other.name, tt.name, fast), func(t *testing.T) {
					fastPath = fast
					in, err := probe(tt.path, "in", "")
					if err != nil {
						t.Fatal(err)
					}
					b := newBatch(3600_000)
					defer b.release()
					_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
					if err == nil || !strings.Contains(err.Error(), tt.want) || exitcode.Of(err) != exitcode.Usage {
						t.Fatalf("err = %v, want bad input %q", err, tt.want)
					}
				})
			}
		}
	}
}

// v2Arrow writes an Arrow stream of 3 batches of 100 rows whose every
// third info_hash is the 32-byte hash long with info_hash_v2 the same,
// and whose row 242 has info_hash bad and info_hash_v2 other; hashes are
// binary, or hex text (utf8); it returns the file.
func v2Arrow(t *testing.T, dir string, text bool, long, bad, other []byte) string {
	t.Helper()
	typ := arrow.BinaryTypes.Binary
	if text {
		typ = arrow.BinaryTypes.String
	}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: typ},
		{Name: "info_hash_v2", Type: typ, Nullable: true},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
	}, nil)
	put := func(b array.Builder, v []byte) {
		if text {
			b.(*array.StringBuilder).Append(fmt.Sprintf("%x", v))
		} else {
			b.(*array.BinaryBuilder).Append(v)
		}
	}
	var stream bytes.Buffer
	w := ipc.NewWriter(&stream, ipc.WithSchema(sch))
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	for i := range 300 {
		switch {
		case i == 242:
			put(rb.Field(0), bad)
			put(rb.Field(1), other)
		case i%3 == 0:
			put(rb.Field(0), long)
			put(rb.Field(1), long)
		default:
			put(rb.Field(0), long[:20])
			rb.Field(1).AppendNull()
		}
		rb.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(t0.UnixMilli()))
		if i%100 == 99 {
			rec := rb.NewRecord()
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	name := "v2.arrow"
	if text {
		name = "v2-text.arrow"
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, stream.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInfoHashV2Source: info_hash_v2_source is the source of the
// observation that gave the full v2 hash dedup took: import for a 64-hex
// line of a list, the row's own source in Parquet; null for a hash
// without one, until a later run's claim, which a known row takes (the
// splice path) with its source.
func TestInfoHashV2Source(t *testing.T) {
	const (
		a = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1" // a 64-hex line: v2
		b = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2" + "0000000000000000000000aa"
		d = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4" // v1 only
	)
	full := func(s string) []byte { v, _ := hex.DecodeString(s); return v }
	key := func(s string) schema.Hash { return schema.Hash(full(s)[:20]) }
	c := bytes.Repeat([]byte{0xc3}, 32)
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte(a+"\n"+b[:40]+"\n"+d+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	obs := func(v2 []byte, src string) schema.Observation {
		return schema.Observation{InfoHash: schema.Hash(v2[:20]), InfoHashV2: v2, HashType: schema.HashV2,
			ObservedAt: t0.UnixMilli(), Source: src, RunID: "t"}
	}
	runs := []struct {
		inputs []string
		want   map[schema.Hash]string
	}{
		{[]string{list, writeObs(t, dir, []schema.Observation{obs(c, schema.SourceGetPeers)})},
			map[schema.Hash]string{key(a): schema.SourceImport, key(b): "", schema.Hash(c[:20]): schema.SourceGetPeers, key(d): ""}},
		{[]string{writeObs(t, dir, []schema.Observation{obs(full(b), "crawler-x"), obs(c, schema.SourceSampleInfohashes)})},
			map[schema.Hash]string{key(a): schema.SourceImport, key(b): "crawler-x", schema.Hash(c[:20]): schema.SourceGetPeers, key(d): ""}},
	}
	for i, r := range runs {
		if _, err := run(t, data, nil, r.inputs...); err != nil {
			t.Fatal(err)
		}
		st := readState(t, data)
		for h, want := range r.want {
			if got := st[h]; got.InfoHashV2Source != want || (want == "") != (got.InfoHashV2 == nil) {
				t.Errorf("run %d: %x: info_hash_v2 %x, info_hash_v2_source %q; want source %q", i+1, h[:2], got.InfoHashV2,
					got.InfoHashV2Source, want)
			}
		}
	}
}
