package dedup

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// boolDictPortStream is one announce_peer row by 10.0.0.2:1 whose
// peer_port is a dictionary of booleans (arrow-go's builders make none:
// built from its indices and values).
func boolDictPortStream(t *testing.T) []byte {
	t.Helper()
	mem := memory.DefaultAllocator
	typ := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.FixedWidthTypes.Boolean}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "observed_at", Type: arrow.FixedWidthTypes.Timestamp_ms},
		{Name: "source", Type: arrow.BinaryTypes.String},
		{Name: "node_addr", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "peer_port", Type: typ, Nullable: true},
	}, nil)
	hb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	hb.Append([]byte{2, 19: 0})
	ab := array.NewTimestampBuilder(mem, arrow.FixedWidthTypes.Timestamp_ms.(*arrow.TimestampType))
	ab.Append(arrow.Timestamp(t0.UnixMilli()))
	sb, nb := array.NewStringBuilder(mem), array.NewStringBuilder(mem)
	sb.Append(schema.SourceAnnouncePeer)
	nb.Append("10.0.0.2:1")
	ib, vb := array.NewInt8Builder(mem), array.NewBooleanBuilder(mem)
	ib.Append(0)
	vb.Append(true)
	idx, vals := ib.NewArray(), vb.NewArray()
	cols := []arrow.Array{hb.NewArray(), ab.NewArray(), sb.NewArray(), nb.NewArray(), array.NewDictionaryArray(typ, idx, vals)}
	idx.Release()
	vals.Release()
	rec := array.NewRecord(sch, cols, 1)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestArrowDictionaryPeerPort: an Arrow peer_port that is
// dictionary-encoded (pyarrow's categorical, arrow-go's dictionary
// builders) is checked as a plain one of its values' type is
// (TestArrowPeerPortTypes, TestPeerPortWrongSchema), by both readers: a
// dictionary of integers (int32, int64, uint16, uint64 values) is read by
// value, a port that fits an announced peer, one that is no port (70000,
// an int64's 2^32+6881, 0, a uint64's 2^64-1) counted as a bad port with
// every observation kept; a dictionary of anything else (float64, utf8,
// date32, bool values) is the wrong schema, exit 2, naming the column and
// its type. Without --announced-peers the column is not read, nor
// refused.
func TestArrowDictionaryPeerPort(t *testing.T) {
	P := arrow.PrimitiveTypes
	dict := func(idx, v arrow.DataType) arrow.DataType { return &arrow.DictionaryType{IndexType: idx, ValueType: v} }
	for _, tt := range []struct {
		name   string
		stream func(t *testing.T) []byte
		peer   []string // hash {5}'s peers (portStream's row 5); nil and no is for a bad port
		is     string   // the type the wrong-schema error names; "" for none
	}{
		{"int32", func(t *testing.T) []byte { return portStream(t, dict(P.Int8, P.Int32), "6881") }, []string{"10.0.0.4:6881"}, ""},
		{"int32 70000", func(t *testing.T) []byte { return portStream(t, dict(P.Int8, P.Int32), "70000") }, nil, ""},
		{"int64", func(t *testing.T) []byte { return portStream(t, dict(P.Int16, P.Int64), "6881") }, []string{"10.0.0.4:6881"}, ""},
		{"int64 2^32+6881", func(t *testing.T) []byte { return portStream(t, dict(P.Int16, P.Int64), "4294973177") }, nil, ""},
		{"uint16 65535", func(t *testing.T) []byte { return portStream(t, dict(P.Int8, P.Uint16), "65535") }, []string{"10.0.0.4:65535"}, ""},
		{"uint16 0", func(t *testing.T) []byte { return portStream(t, dict(P.Int8, P.Uint16), "0") }, nil, ""},
		{"uint64 2^64-1", func(t *testing.T) []byte { return portStream(t, dict(P.Int32, P.Uint64), "18446744073709551615") }, nil, ""},
		{"float64", func(t *testing.T) []byte { return onePortStream(t, dict(P.Int8, P.Float64), "6881") }, nil, "float64"},
		{"utf8", func(t *testing.T) []byte { return onePortStream(t, dict(P.Int8, arrow.BinaryTypes.String), "6881") }, nil, "utf8"},
		{"date32", func(t *testing.T) []byte {
			return onePortStream(t, dict(P.Int8, arrow.FixedWidthTypes.Date32), "2026-01-01")
		}, nil, "date32"},
		{"bool", boolDictPortStream, nil, "dictionary<values=bool, indices=int8, ordered=false>"},
	} {
		in := filepath.Join(t.TempDir(), "in.arrows")
		if err := os.WriteFile(in, tt.stream(t), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, peers := range []bool{true, false} {
			eachParquetReader(t, tt.name+map[bool]string{true: "/announced-peers", false: "/no-peers"}[peers], func(t *testing.T) {
				data := filepath.Join(t.TempDir(), "ds")
				stats, err := run(t, data, func(o *Options) { o.AnnouncedPeers = peers }, in)
				if peers && tt.is != "" {
					want := "dedup: " + in + `: wrong schema: column "peer_port" is ` + tt.is + `, want an integer (a port)`
					if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
						t.Fatalf("err = %v (exit %d)\nwant %s (exit 2)", err, exitcode.Of(err), want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				st := readState(t, data)
				if tt.is != "" { // onePortStream's one row, its port not read
					if len(st) != 1 || stats.BadPeerPorts != 0 || len(st[schema.Hash{2}].Peers) != 0 {
						t.Fatalf("%d hashes, bad_peer_ports %d, peers %q; want 1 hash without peers", len(st), stats.BadPeerPorts,
							st[schema.Hash{2}].Peers)
					}
					return
				}
				bad := int64(0)
				if tt.peer == nil && peers {
					bad = 1
				}
				if stats.BadPeerPorts != bad || len(st) != 6 {
					t.Errorf("bad_peer_ports = %d, %d hashes; want %d, all 6", stats.BadPeerPorts, len(st), bad)
				}
				want := tt.peer
				if !peers {
					want = nil
				}
				if got := st[schema.Hash{5}].Peers; !slices.Equal(got, want) {
					t.Errorf("row 5's peers %q, want %q", got, want)
				}
				if got := st[schema.Hash{1}].Peers; peers != (strings.Join(got, ",") == "10.0.0.0:100") {
					t.Errorf("row 1's peers %q (announced peers kept: %v)", got, peers)
				}
			})
		}
	}
}
