package dedup

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// dictPortRow is portRow with peer_port dictionary-encoded.
type dictPortRow[P portInt] struct {
	InfoHash   []byte `parquet:"info_hash"`
	ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	Source     string `parquet:"source"`
	NodeAddr   string `parquet:"node_addr,optional"`
	PeerPort   *P     `parquet:"peer_port,optional,dict"`
}

// dictPortFile is portFile with peer_port dictionary-encoded.
func dictPortFile[P portInt](port string) func(t *testing.T, path string) string {
	return func(t *testing.T, path string) string {
		t.Helper()
		return writeGroupsOf3(t, path, dictRows(portRows[P](t, port)))
	}
}

// dictRows are rows with peer_port dictionary-encoded.
func dictRows[P portInt](rows []portRow[P]) []dictPortRow[P] {
	dicts := make([]dictPortRow[P], len(rows))
	for k, r := range rows {
		dicts[k] = dictPortRow[P](r)
	}
	return dicts
}

// TestPeerPortPageTypes: a Parquet file whose peer_port is of any
// integer type (TINYINT to UBIGINT, as DuckDB names them), plain or
// dictionary-encoded, is read by the column reader (fastLayout takes it
// and its endpoint columns; a UINTEGER went to the row reader, 4.5x the
// CPU), by value: a port that fits is an announced peer; one that is no
// port, in an int32 or past it (a UINTEGER's 2^32-1, a BIGINT's 2^40),
// names none and is a bad port, its observation kept (one past int32 was
// bad input, the whole file refused). The row reader reads each the same.
func TestPeerPortPageTypes(t *testing.T) {
	peer := func(port string) []string { return []string{"10.0.0.4:" + port} }
	tests := []struct {
		name     string
		file     func(t *testing.T, path string) string
		unsigned bool     // read by value as unsigned (portUnsigned)
		peer     []string // hash {5}'s peers: none for a bad port
	}{
		{"TINYINT 127", portFile[int8]("127"), false, peer("127")},
		{"TINYINT -1", portFile[int8]("-1"), false, nil},
		{"UTINYINT 255", portFile[uint8]("255"), false, peer("255")},
		{"UTINYINT 0", portFile[uint8]("0"), false, nil},
		{"SMALLINT 6881", portFile[int16]("6881"), false, peer("6881")},
		{"USMALLINT 65535", portFile[uint16]("65535"), false, peer("65535")},
		{"USMALLINT dictionary 6881", dictPortFile[uint16]("6881"), false, peer("6881")},
		{"INTEGER 6881", portFile[int32]("6881"), false, peer("6881")},
		{"UINTEGER 6881", portFile[uint32]("6881"), true, peer("6881")},
		{"UINTEGER 65535", portFile[uint32]("65535"), true, peer("65535")},
		{"UINTEGER 70000", portFile[uint32]("70000"), true, nil},
		{"UINTEGER 2^31-1", portFile[uint32]("2147483647"), true, nil},
		{"UINTEGER 2^31", portFile[uint32]("2147483648"), true, nil},
		{"UINTEGER 2^32-1", portFile[uint32]("4294967295"), true, nil},
		{"UINTEGER dictionary 6881", dictPortFile[uint32]("6881"), true, peer("6881")},
		{"UINTEGER dictionary 2^32-1", dictPortFile[uint32]("4294967295"), true, nil},
		{"BIGINT 6881", portFile[int64]("6881"), false, peer("6881")},
		{"BIGINT dictionary 2^40", dictPortFile[int64]("1099511627776"), false, nil},
		{"UBIGINT 65535", portFile[uint64]("65535"), true, peer("65535")},
		{"UBIGINT dictionary 2^64-1", dictPortFile[uint64]("18446744073709551615"), true, nil},
		{"UBIGINT 2^63", portFile[uint64]("9223372036854775808"), true, nil},
		{"BIGINT 2^32+6881", portFile[int64]("4294973177"), false, nil}, // not its low bits' 6881
		{"BIGINT dictionary 2^32+6881", dictPortFile[int64]("4294973177"), false, nil},
		{"UINTEGER dictionary 2^31", dictPortFile[uint32]("2147483648"), true, nil},
	}
	for _, tt := range tests {
		in := tt.file(t, filepath.Join(t.TempDir(), "in.parquet"))
		t.Run(tt.name+"/layout", func(t *testing.T) {
			c, fast := fastLayoutOf(t, in)
			if !fast || c.port == nil || c.addr == nil {
				t.Fatalf("column reader %v, reads peer_port %v, node_addr %v: want all", fast, c.port != nil, c.addr != nil)
			}
			if c.portUnsigned != tt.unsigned {
				t.Fatalf("peer_port read as unsigned %v, want %v", c.portUnsigned, tt.unsigned)
			}
		})
		eachParquetReader(t, tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			stats, err := run(t, data, func(o *Options) { o.AnnouncedPeers = true }, in)
			if err != nil {
				t.Fatal(err)
			}
			want := int64(0)
			if tt.peer == nil { // row 5's port names none
				want = 1
			}
			if stats.BadPeerPorts != want {
				t.Errorf("bad_peer_ports = %d, want %d", stats.BadPeerPorts, want)
			}
			st := readState(t, data)
			if _, ok := st[schema.Hash{5}]; !ok || len(st) != 6 {
				t.Errorf("%d hashes kept, hash 05 among them %v: want all 6", len(st), ok)
			}
			if got := st[schema.Hash{5}].Peers; !slices.Equal(got, tt.peer) {
				t.Errorf("row 5's peers %q, want %q", got, tt.peer)
			}
			if got, want := st[schema.Hash{1}].Peers, []string{"10.0.0.0:100"}; !slices.Equal(got, want) {
				t.Errorf("row 1's peers %q, want %q", got, want)
			}
		})
	}
}

// fastLayoutOf is fastLayout of the Parquet file at path.
func fastLayoutOf(t *testing.T, path string) (fastColumns, bool) {
	t.Helper()
	return fastLayout(parquetFileAt(t, path))
}

// parquetFileAt opens the Parquet file at path, open until the test ends.
func parquetFileAt(t *testing.T, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}
