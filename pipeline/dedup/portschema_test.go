package dedup

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// anyPortRow is an observation whose peer_port is a P, of any type
// parquet-go writes: FLOAT, DOUBLE, BYTE_ARRAY (text or not), BOOLEAN,
// FIXED_LEN_BYTE_ARRAY, INT96.
type anyPortRow[P any] struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
	Source     string      `parquet:"source"`
	NodeAddr   string      `parquet:"node_addr,optional"`
	PeerPort   *P          `parquet:"peer_port,optional"`
}

// anyPortFile writes two rows as a Parquet file in dir, peer_port a P: a
// dht_get_peers row without a port, and an announce_peer one by
// 10.0.0.2:1 whose port is port.
func anyPortFile[P any](port P) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		t.Helper()
		return writeRows(t, filepath.Join(dir, "in.parquet"), []anyPortRow[P]{
			{InfoHash: schema.Hash{1}, ObservedAt: t0.UnixMilli(), Source: schema.SourceGetPeers},
			{InfoHash: schema.Hash{2}, ObservedAt: t0.UnixMilli(), Source: schema.SourceAnnouncePeer,
				NodeAddr: "10.0.0.2:1", PeerPort: &port},
		})
	}
}

// nullPortFile writes anyPortFile's rows with peer_port of the NULL
// logical type (all null), as pyarrow writes a column of its null type.
func nullPortFile(t *testing.T, dir string) string {
	t.Helper()
	sch := parquet.NewSchema("obs", parquet.Group{
		"info_hash":   parquet.Leaf(parquet.FixedLenByteArrayType(20)),
		"observed_at": parquet.Timestamp(parquet.Millisecond),
		"source":      parquet.String(),
		"node_addr":   parquet.Optional(parquet.String()),
		"peer_port":   parquet.Optional(parquet.Leaf(parquet.NullType)),
	})
	path := filepath.Join(dir, "in.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewWriter(f, sch)
	for _, r := range []anyPortRow[int32]{
		{InfoHash: schema.Hash{1}, ObservedAt: t0.UnixMilli(), Source: schema.SourceGetPeers},
		{InfoHash: schema.Hash{2}, ObservedAt: t0.UnixMilli(), Source: schema.SourceAnnouncePeer, NodeAddr: "10.0.0.2:1"},
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPeerPortWrongSchema: with --announced-peers, a peer_port beside
// node_addr text and source that is no integer (a Parquet FLOAT, DOUBLE,
// BYTE_ARRAY, BOOLEAN, FIXED_LEN_BYTE_ARRAY or INT96, from parquet-go or
// DuckDB; an Arrow float, string, binary or bool on stdin) is the wrong
// schema, as a DATE one is (TestPeerPortNotInteger): bad input in one
// line naming the input, the column and its type, and nothing is
// committed, by every reader. It was silently not read. Without
// --announced-peers the column is not read, nor refused: every
// observation is kept, with no peers and no bad port. A null-typed
// peer_port (all null) names no port and is not refused either way.
func TestPeerPortWrongSchema(t *testing.T) {
	F, B := arrow.PrimitiveTypes, arrow.BinaryTypes
	duck := func(name string) func(*testing.T, string) string {
		return func(*testing.T, string) string { return duckFile(name) }
	}
	tests := []struct {
		name   string
		file   func(t *testing.T, dir string) string // nil: an Arrow stream on stdin
		typ    arrow.DataType                        // the stream's peer_port (onePortStream)
		port   string                                // its value, as text
		is     string                                // the type the error names, "" for none
		hashes int                                   // the input's hashes
	}{
		{"Parquet FLOAT", anyPortFile[float32](6881), nil, "", "FLOAT", 2},
		{"Parquet DOUBLE", anyPortFile[float64](6881), nil, "", "DOUBLE", 2},
		{"Parquet BYTE_ARRAY text", anyPortFile("6881"), nil, "", "STRING", 2},
		{"Parquet BYTE_ARRAY", anyPortFile([]byte("6881")), nil, "", "BYTE_ARRAY", 2},
		{"Parquet BOOLEAN", anyPortFile(true), nil, "", "BOOLEAN", 2},
		{"Parquet FIXED_LEN_BYTE_ARRAY", anyPortFile([2]byte{0x1a, 0xe1}), nil, "", "FIXED_LEN_BYTE_ARRAY", 2},
		{"Parquet INT96", anyPortFile(deprecated.Int96{6881}), nil, "", "INT96", 2},
		{"Parquet NULL", nullPortFile, nil, "", "", 2},
		{"DuckDB DOUBLE", duck("peer_port_double.parquet"), nil, "", "DOUBLE", 8},
		{"DuckDB VARCHAR", duck("peer_port_varchar.parquet"), nil, "", "STRING", 8},
		{"Arrow float32", nil, F.Float32, "6881", "float32", 1},
		{"Arrow float64", nil, F.Float64, "6881", "float64", 1},
		{"Arrow string", nil, B.String, "6881", "utf8", 1},
		{"Arrow large_string", nil, B.LargeString, "6881", "large_utf8", 1},
		{"Arrow binary", nil, B.Binary, "Gvk=", "binary", 1},
		{"Arrow fixed_size_binary", nil, &arrow.FixedSizeBinaryType{ByteWidth: 2}, "Gvk=", "fixed_size_binary[2]", 1},
		{"Arrow bool", nil, arrow.FixedWidthTypes.Boolean, "true", "bool", 1},
		{"Arrow null", nil, arrow.Null, array.NullValueStr, "", 1},
	}
	for _, tt := range tests {
		in, named, stream := "-", "stdin (", []byte(nil)
		if tt.file != nil {
			in = tt.file(t, t.TempDir())
			named = in
		} else {
			stream = onePortStream(t, tt.typ, tt.port)
		}
		for _, peers := range []bool{true, false} {
			eachParquetReader(t, tt.name+map[bool]string{true: "/announced-peers", false: "/no-peers"}[peers], func(t *testing.T) {
				data := filepath.Join(t.TempDir(), "ds")
				stats, err := run(t, data, func(o *Options) {
					o.AnnouncedPeers, o.Stdin = peers, bytes.NewReader(stream)
				}, in)
				if peers && tt.is != "" { // stdin's is set aside, and says so
					want := `: wrong schema: column "peer_port" is ` + tt.is + `, want an integer (a port)`
					if err == nil || !strings.HasPrefix(err.Error(), "dedup: "+named) || !strings.Contains(err.Error(), want) ||
						strings.Contains(err.Error(), "\n") || exitcode.Of(err) != exitcode.Usage {
						t.Fatalf("err = %v (exit %d)\nwant one line of bad input: dedup: %s...%s", err, exitcode.Of(err), named, want)
					}
					if _, serr := os.Stat(filepath.Join(data, "CURRENT")); serr == nil {
						if st := readState(t, data); len(st) != 0 {
							t.Fatalf("the refused input committed %d hashes", len(st))
						}
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if stats.BadPeerPorts != 0 {
					t.Errorf("bad_peer_ports = %d, want 0 (the column is not read)", stats.BadPeerPorts)
				}
				st := readState(t, data)
				if len(st) != tt.hashes {
					t.Errorf("%d hashes kept, want every row's %d", len(st), tt.hashes)
				}
				for h, s := range st {
					if len(s.Peers) != 0 {
						t.Errorf("hash %x has peers %q", h[:2], s.Peers)
					}
				}
			})
		}
	}
}
