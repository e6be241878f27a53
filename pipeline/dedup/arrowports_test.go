package dedup

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/schema"
)

// portStream is an Arrow IPC stream of six announce_peer rows in two
// record batches, peer_port of type typ: rows[k] has hash {k+1}, node_addr
// 10.0.0.k:1 and port 100, but rows[4] (row 5, the second batch's second)
// port and rows[5] a null port.
func portStream(t *testing.T, typ arrow.DataType, port string) []byte {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "observed_at", Type: arrow.FixedWidthTypes.Timestamp_ms},
		{Name: "source", Type: arrow.BinaryTypes.String},
		{Name: "node_addr", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "peer_port", Type: typ, Nullable: true},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for batch := range 2 {
		for k := 3 * batch; k < 3*batch+3; k++ {
			h := schema.Hash{byte(k + 1)}
			b.Field(0).(*array.BinaryBuilder).Append(h[:])
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(t0.UnixMilli()))
			b.Field(2).(*array.StringBuilder).Append(schema.SourceAnnouncePeer)
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("10.0.0.%d:1", k))
			switch k {
			case 4:
				if err := b.Field(4).AppendValueFromString(port); err != nil {
					t.Fatal(err)
				}
			case 5:
				b.Field(4).AppendNull()
			default:
				if err := b.Field(4).AppendValueFromString("100"); err != nil {
					t.Fatal(err)
				}
			}
		}
		rec := b.NewRecord()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestArrowPeerPortTypes: an Arrow stream's peer_port of any integer type
// is read by value, by both readers, as the Parquet readers read theirs
// (TestPeerPortUnsigned): a port that fits is an announced peer; a value
// that is no port, in an int32 or past it (an int64's 2^31, a uint64's
// 2^64-1), names none and is counted as a bad port, every observation
// kept (one past int32 was bad input, the stream refused). Only an int32
// peer_port was read: one of another type was silently neither read nor
// refused.
func TestArrowPeerPortTypes(t *testing.T) {
	P := arrow.PrimitiveTypes
	tests := []struct {
		name string
		typ  arrow.DataType
		port string
		peer []string // hash {5}'s peers: none for a bad port (counted) or without --announced-peers
		off  bool     // without --announced-peers: the column is not read, nor refused
	}{
		{"int8", P.Int8, "127", []string{"10.0.0.4:127"}, false},
		{"int16", P.Int16, "6881", []string{"10.0.0.4:6881"}, false},
		{"int16 negative", P.Int16, "-5", nil, false},
		{"int32", P.Int32, "6881", []string{"10.0.0.4:6881"}, false},
		{"int64", P.Int64, "6881", []string{"10.0.0.4:6881"}, false},
		{"int64 past a port", P.Int64, "70000", nil, false},
		{"int64 2^31", P.Int64, "2147483648", nil, false},
		{"int64 -2^31-1", P.Int64, "-2147483649", nil, false},
		{"int64 2^32+6881", P.Int64, "4294973177", nil, false}, // not 6881, its low bits
		{"uint8", P.Uint8, "200", []string{"10.0.0.4:200"}, false},
		{"uint16 65535", P.Uint16, "65535", []string{"10.0.0.4:65535"}, false},
		{"uint32", P.Uint32, "6881", []string{"10.0.0.4:6881"}, false},
		{"uint32 2^32-1", P.Uint32, "4294967295", nil, false},
		{"uint64", P.Uint64, "6881", []string{"10.0.0.4:6881"}, false},
		{"uint64 2^63", P.Uint64, "9223372036854775808", nil, false},
		{"uint64 2^64-1", P.Uint64, "18446744073709551615", nil, false},
		{"uint64 2^64-1 without announced peers", P.Uint64, "18446744073709551615", nil, true},
	}
	for _, tt := range tests {
		in := filepath.Join(t.TempDir(), "in.arrows")
		if err := os.WriteFile(in, portStream(t, tt.typ, tt.port), 0o644); err != nil {
			t.Fatal(err)
		}
		eachParquetReader(t, tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			stats, err := run(t, data, func(o *Options) { o.AnnouncedPeers = !tt.off }, in)
			if err != nil {
				t.Fatal(err)
			}
			bad := int64(0)
			if tt.peer == nil && !tt.off { // row 5's port names none
				bad = 1
			}
			if stats.BadPeerPorts != bad {
				t.Errorf("bad_peer_ports = %d, want %d", stats.BadPeerPorts, bad)
			}
			st := readState(t, data)
			if _, ok := st[schema.Hash{5}]; !ok || len(st) != 6 {
				t.Errorf("%d hashes kept, hash 05 among them %v: want all 6", len(st), ok)
			}
			if got := st[schema.Hash{5}].Peers; !slices.Equal(got, tt.peer) {
				t.Errorf("row 5's peers %q, want %q", got, tt.peer)
			}
			if got, want := st[schema.Hash{1}].Peers, []string{"10.0.0.0:100"}; !slices.Equal(got, want) && !tt.off ||
				len(got) != 0 && tt.off {
				t.Errorf("row 1's peers %q, want %q", got, want)
			}
			if got := st[schema.Hash{6}].Peers; len(got) != 0 {
				t.Errorf("row 6 (a null port) has peers %q", got)
			}
		})
	}
}
