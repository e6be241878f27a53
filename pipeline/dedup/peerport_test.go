package dedup

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// uintPort is an observation as another tool may write it: peer_port a
// UINTEGER (DuckDB's, or parquet-go's uint32), which parquet-go reads
// into an int32 as its bits.
type uintPort struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	HashType   int8        `parquet:"hash_type,int(8)"`
	ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
	Source     string      `parquet:"source"`
	NodeAddr   string      `parquet:"node_addr,optional"`
	PeerPort   uint32      `parquet:"peer_port,optional"`
}

// TestPeerPortUnsigned: a UINTEGER peer_port is read by value. A port
// that fits is an announced peer; one past int32 (2^32-1 would read as
// -1) is no port, as 70000 is: its row is read without an endpoint and
// counted, also past the first read, and every observation is kept (it
// was bad input, the file refused). Without announced peers the column
// is not read, and nothing is counted.
func TestPeerPortUnsigned(t *testing.T) {
	h := schema.Hash{0x10, 1}
	rows := func(at int, port uint32) []uintPort {
		out := make([]uintPort, 2*readBatch)
		for k := range out {
			out[k] = uintPort{InfoHash: h, HashType: 1, ObservedAt: t0.UnixMilli() + int64(k), Source: schema.SourceGetPeers}
		}
		out[at].Source, out[at].NodeAddr, out[at].PeerPort = schema.SourceAnnouncePeer, "1.1.1.1:5000", port
		return out
	}
	tests := []struct {
		name  string
		rows  []uintPort
		peers bool     // --announced-peers
		bad   int64    // bad_peer_ports
		state []string // h's peers
	}{
		{"a port that fits", rows(3, 6881), true, 0, []string{"1.1.1.1:6881"}},
		{"2^32-1", rows(3, math.MaxUint32), true, 1, nil},
		{"2^31 past the first read", rows(readBatch+5, 1<<31), true, 1, nil},
		{"70000 past the first read", rows(readBatch+5, 70000), true, 1, nil},
		{"2^32-1 without announced peers", rows(3, math.MaxUint32), false, 0, nil},
	}
	for _, tt := range tests {
		in := writeRows(t, filepath.Join(t.TempDir(), "in.parquet"), tt.rows)
		eachParquetReader(t, tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			stats, err := run(t, data, func(o *Options) { o.AnnouncedPeers = tt.peers }, in)
			if err != nil {
				t.Fatal(err)
			}
			if stats.BadPeerPorts != tt.bad {
				t.Errorf("bad_peer_ports = %d, want %d", stats.BadPeerPorts, tt.bad)
			}
			st := readState(t, data)[h]
			if st.SeenCount != int64(len(tt.rows)) {
				t.Errorf("seen_count %d, want every row's %d", st.SeenCount, len(tt.rows))
			}
			if !slices.Equal(st.Peers, tt.state) {
				t.Fatalf("peers %q, want %q", st.Peers, tt.state)
			}
		})
	}
}

// TestPeerPortUnsignedLayout: the column reader serves a file whose
// peer_port is a UINTEGER, an INT64 or a UBIGINT, which it reads by value
// itself (portPageFor), as it serves a USMALLINT, whose values an int32
// holds; so does the row reader. Without a source column (no
// announce_peer row) the endpoint columns are read by neither, as an
// Arrow stream's are not.
func TestPeerPortUnsignedLayout(t *testing.T) {
	type shortPort struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		Source     string      `parquet:"source"`
		NodeAddr   string      `parquet:"node_addr,optional"`
		PeerPort   uint16      `parquet:"peer_port,optional"`
	}
	type noSource struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		NodeAddr   string      `parquet:"node_addr,optional"`
		PeerPort   int64       `parquet:"peer_port,optional"`
	}
	dir := t.TempDir()
	tests := []struct {
		name  string
		path  string
		fast  bool
		peers bool // the row reader reads the endpoint columns
	}{
		{"UINTEGER", writeRows(t, filepath.Join(dir, "u32.parquet"), []uintPort{{HashType: 1}}), true, true},
		{"USMALLINT", writeRows(t, filepath.Join(dir, "u16.parquet"), []shortPort{{}}), true, true},
		{"INT64", portFile[int64]("1")(t, filepath.Join(dir, "i64.parquet")), true, true},
		{"UBIGINT", portFile[uint64]("1")(t, filepath.Join(dir, "u64.parquet")), true, true},
		{"INT32", portFile[int32]("1")(t, filepath.Join(dir, "i32.parquet")), true, true},
		{"INT64 without a source column", writeRows(t, filepath.Join(dir, "nosrc.parquet"), []noSource{{}}), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pf := parquetFileAt(t, tt.path)
			if _, fast := fastLayout(pf); fast != tt.fast {
				t.Fatalf("column reader %v, want %v", fast, tt.fast)
			}
			if peers := rowPeers(pf, &batch{}); (peers != nil) != tt.peers {
				t.Fatalf("row reader reads peers %v, want %v", peers != nil, tt.peers)
			} else {
				peers.close()
			}
		})
	}
}

// portInt is the Go type of a peer_port column that parquet-go writes
// as each integer type of DuckDB's: TINYINT (int8), UTINYINT (uint8),
// SMALLINT, USMALLINT, INTEGER, UINTEGER, BIGINT, UBIGINT (uint64).
type portInt interface {
	int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64
}

// portRow is an announce_peer observation whose peer_port is a P: INT32
// (int8 to uint16 as INT(n), uint32: UINTEGER) or INT64 (uint64: UBIGINT).
type portRow[P portInt] struct {
	InfoHash   []byte `parquet:"info_hash"`
	ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	Source     string `parquet:"source"`
	NodeAddr   string `parquet:"node_addr,optional"`
	PeerPort   *P     `parquet:"peer_port,optional"`
}

// portFile writes the rows of portStream as a Parquet file at path, in
// two row groups of three rows (row 5, of port, is the second group's
// second), peer_port a P; port is parsed as a P's value.
func portFile[P portInt](port string) func(t *testing.T, path string) string {
	return func(t *testing.T, path string) string {
		t.Helper()
		return writeGroupsOf3(t, path, portRows[P](t, port))
	}
}

// portRows are the rows of portFile.
func portRows[P portInt](t testing.TB, port string) []portRow[P] {
	t.Helper()
	v, err := strconv.ParseInt(port, 10, 64)
	if err != nil {
		u, uerr := strconv.ParseUint(port, 10, 64)
		if uerr != nil {
			t.Fatal(err)
		}
		v = int64(u)
	}
	rows := make([]portRow[P], 6)
	for k := range rows {
		p := P(100)
		if k == 4 {
			p = P(v)
		}
		h := schema.Hash{byte(k + 1)}
		rows[k] = portRow[P]{InfoHash: h[:], ObservedAt: t0.UnixMilli(), Source: schema.SourceAnnouncePeer,
			NodeAddr: fmt.Sprintf("10.0.0.%d:1", k)}
		if k != 5 {
			rows[k].PeerPort = &p
		}
	}
	return rows
}

// writeGroupsOf3 writes rows as a Parquet file at path in row groups of
// three rows.
func writeGroupsOf3[T any](t testing.TB, path string, rows []T) string {
	t.Helper()
	w, err := rowio.Create[T](path, nil, parquet.MaxRowsPerRowGroup(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestParquetPeerPortTypes: a Parquet peer_port of any integer type
// (INT32, INT64, UINTEGER, UBIGINT, SMALLINT) is read by value, by the
// column reader where it serves the file and by the row reader, with the
// Arrow readers' outcome for the same values in an Arrow stream
// (TestArrowPeerPortTypes): a port that fits is an announced peer; a
// value that is no port (0, -1, 70000, or past int32: 2^40, 2^64-1)
// names none and is counted as a bad port, every observation kept (one
// past int32 was bad input, the file refused). Without --announced-peers
// the column is not read, nor refused, and nothing is counted. An INT64
// or UBIGINT peer_port was silently neither read nor refused (parquet-go
// reads an INT64's 2^40 into an int32 as 0).
func TestParquetPeerPortTypes(t *testing.T) {
	P := arrow.PrimitiveTypes
	tests := []struct {
		name  string
		file  func(t *testing.T, path string) string
		typ   arrow.DataType // the Arrow stream's type of the same values
		port  string
		peer  []string // hash {5}'s peers: none for a bad port (counted) or without --announced-peers
		noArg bool     // without --announced-peers
	}{
		{"INT32", portFile[int32]("6881"), P.Int32, "6881", []string{"10.0.0.4:6881"}, false},
		{"INT32 0", portFile[int32]("0"), P.Int32, "0", nil, false},
		{"INT32 65535", portFile[int32]("65535"), P.Int32, "65535", []string{"10.0.0.4:65535"}, false},
		{"INT32 70000", portFile[int32]("70000"), P.Int32, "70000", nil, false},
		{"INT32 -1", portFile[int32]("-1"), P.Int32, "-1", nil, false},
		{"SMALLINT", portFile[int16]("6881"), P.Int16, "6881", []string{"10.0.0.4:6881"}, false},
		{"SMALLINT -1", portFile[int16]("-1"), P.Int16, "-1", nil, false},
		{"INT64", portFile[int64]("6881"), P.Int64, "6881", []string{"10.0.0.4:6881"}, false},
		{"INT64 0", portFile[int64]("0"), P.Int64, "0", nil, false},
		{"INT64 65535", portFile[int64]("65535"), P.Int64, "65535", []string{"10.0.0.4:65535"}, false},
		{"INT64 70000", portFile[int64]("70000"), P.Int64, "70000", nil, false},
		{"INT64 -1", portFile[int64]("-1"), P.Int64, "-1", nil, false},
		{"INT64 2^40", portFile[int64]("1099511627776"), P.Int64, "1099511627776", nil, false},
		{"INT64 -2^31-1", portFile[int64]("-2147483649"), P.Int64, "-2147483649", nil, false},
		{"INT64 2^32+6881", portFile[int64]("4294973177"), P.Int64, "4294973177", nil, false}, // not 6881, its low bits
		{"INT64 2^40 without announced peers", portFile[int64]("1099511627776"), P.Int64, "1099511627776", nil, true},
		{"UINTEGER", portFile[uint32]("6881"), P.Uint32, "6881", []string{"10.0.0.4:6881"}, false},
		{"UINTEGER 70000", portFile[uint32]("70000"), P.Uint32, "70000", nil, false},
		{"UINTEGER 2^32-1", portFile[uint32]("4294967295"), P.Uint32, "4294967295", nil, false},
		{"UBIGINT", portFile[uint64]("6881"), P.Uint64, "6881", []string{"10.0.0.4:6881"}, false},
		{"UBIGINT 0", portFile[uint64]("0"), P.Uint64, "0", nil, false},
		{"UBIGINT 65535", portFile[uint64]("65535"), P.Uint64, "65535", []string{"10.0.0.4:65535"}, false},
		{"UBIGINT 2^40", portFile[uint64]("1099511627776"), P.Uint64, "1099511627776", nil, false},
		{"UBIGINT 2^64-1", portFile[uint64]("18446744073709551615"), P.Uint64, "18446744073709551615", nil, false},
		{"UBIGINT 2^64-1 without announced peers", portFile[uint64]("18446744073709551615"), P.Uint64,
			"18446744073709551615", nil, true},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		stream := filepath.Join(dir, "in.arrows")
		if err := os.WriteFile(stream, portStream(t, tt.typ, tt.port), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs := []string{tt.file(t, filepath.Join(dir, "in.parquet")), stream}
		eachParquetReader(t, tt.name, func(t *testing.T) {
			for _, in := range inputs {
				data := filepath.Join(t.TempDir(), "ds")
				stats, err := run(t, data, func(o *Options) { o.AnnouncedPeers = !tt.noArg }, in)
				if err != nil {
					t.Fatal(err)
				}
				bad := int64(0)
				if tt.peer == nil && !tt.noArg { // row 5's port names none
					bad = 1
				}
				if stats.BadPeerPorts != bad {
					t.Errorf("%s: bad_peer_ports = %d, want %d", in, stats.BadPeerPorts, bad)
				}
				st := readState(t, data)
				if _, ok := st[schema.Hash{5}]; !ok || len(st) != 6 {
					t.Errorf("%s: %d hashes kept, hash 05 among them %v: want all 6", in, len(st), ok)
				}
				if got := st[schema.Hash{5}].Peers; !slices.Equal(got, tt.peer) {
					t.Errorf("%s: row 5's peers %q, want %q", in, got, tt.peer)
				}
				want := []string{"10.0.0.0:100"}
				if tt.noArg {
					want = nil
				}
				if got := st[schema.Hash{1}].Peers; !slices.Equal(got, want) {
					t.Errorf("%s: row 1's peers %q, want %q", in, got, want)
				}
				if got := st[schema.Hash{6}].Peers; len(got) != 0 {
					t.Errorf("%s: row 6 (a null port) has peers %q", in, got)
				}
			}
		})
	}
}

// TestParquetPeerPortNullsBefore: a value past int32 in an INT64 or a
// UINTEGER peer_port page, plain or dictionary-encoded, after null ports
// in the same page is its own row's bad port (row 8), not another's: the
// rows with a port after it keep theirs, by both readers.
func TestParquetPeerPortNullsBefore(t *testing.T) {
	tests := []struct {
		name  string
		files func(t *testing.T, dir string) []string
	}{
		{"INT64", nullsBefore[int64](1 << 40)},
		{"UINTEGER", nullsBefore[uint32](math.MaxUint32)},
	}
	for _, tt := range tests {
		for _, in := range tt.files(t, t.TempDir()) {
			eachParquetReader(t, tt.name+"/"+filepath.Base(in), func(t *testing.T) {
				data := filepath.Join(t.TempDir(), "ds")
				stats, err := run(t, data, func(o *Options) { o.AnnouncedPeers = true }, in)
				if err != nil {
					t.Fatal(err)
				}
				if stats.BadPeerPorts != 1 {
					t.Errorf("bad_peer_ports = %d, want 1", stats.BadPeerPorts)
				}
				st := readState(t, data)
				if len(st) != 10 {
					t.Errorf("%d hashes kept, want all 10", len(st))
				}
				for k := byte(1); k <= 10; k++ {
					var want []string
					if k >= 5 && k != 8 {
						want = []string{"10.0.0.1:100"}
					}
					if got := st[schema.Hash{k}].Peers; !slices.Equal(got, want) {
						t.Errorf("row %d's peers %q, want %q", k, got, want)
					}
				}
			})
		}
	}
}

// nullsBefore writes ten rows in one page, rows 1-4 without a port and
// row 8's port bad, as plain.parquet and dict.parquet (peer_port
// dictionary-encoded) in dir.
func nullsBefore[P portInt](bad P) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		rows := make([]portRow[P], 10)
		dicts := make([]dictPortRow[P], len(rows))
		for k := range rows {
			h := schema.Hash{byte(k + 1)}
			rows[k] = portRow[P]{InfoHash: h[:], ObservedAt: t0.UnixMilli(), Source: schema.SourceGetPeers}
			if k >= 4 { // rows 1-4: no port
				p := P(100)
				if k == 7 {
					p = bad
				}
				rows[k].Source, rows[k].NodeAddr, rows[k].PeerPort = schema.SourceAnnouncePeer, "10.0.0.1:1", &p
			}
			dicts[k] = dictPortRow[P](rows[k])
		}
		return []string{writeRows(t, filepath.Join(dir, "plain.parquet"), rows),
			writeRows(t, filepath.Join(dir, "dict.parquet"), dicts)}
	}
}

// datePort is an observation whose peer_port is a DATE, as DuckDB writes
// a DATE column (an INT32 of days).
type datePort struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
	Source     string      `parquet:"source"`
	NodeAddr   string      `parquet:"node_addr,optional"`
	PeerPort   int32       `parquet:"peer_port,optional,date"`
}

// TestPeerPortNotInteger: a peer_port stored as integers that are no
// integers (a Parquet DATE, an Arrow date32, time32, timestamp or
// decimal) is the wrong schema with --announced-peers: bad input in one
// line naming the input, the column and its type, and nothing is
// committed, by every reader. A Parquet DATE's days were read as ports,
// an Arrow date32 was left unread. Without --announced-peers the column
// is not read, nor refused.
func TestPeerPortNotInteger(t *testing.T) {
	F := arrow.FixedWidthTypes
	tests := []struct {
		name  string
		typ   arrow.DataType // nil: the Parquet DATE file
		port  string
		want  string // the error after "dedup: FILE: wrong schema: ", "" for none
		peers bool
	}{
		{"Parquet DATE", nil, "", `column "peer_port" is DATE, want an integer (a port)`, true},
		{"Parquet DATE without announced peers", nil, "", "", false},
		{"Arrow date32", F.Date32, "1988-11-02", `column "peer_port" is date32, want an integer (a port)`, true},
		{"Arrow time32", F.Time32ms, "01:54:41", `column "peer_port" is time32[ms], want an integer (a port)`, true},
		{"Arrow timestamp", F.Timestamp_ms, "1970-01-01 00:00:06.881", `column "peer_port" is timestamp[ms, tz=UTC], want an integer (a port)`, true},
		{"Arrow decimal", &arrow.Decimal128Type{Precision: 9}, "6881", `column "peer_port" is decimal(9, 0), want an integer (a port)`, true},
		{"Arrow date32 without announced peers", F.Date32, "1988-11-02", "", false},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.arrows")
		if tt.typ == nil {
			in = writeRows(t, filepath.Join(dir, "in.parquet"), []datePort{
				{InfoHash: schema.Hash{1}, ObservedAt: t0.UnixMilli(), Source: schema.SourceGetPeers},
				{InfoHash: schema.Hash{2}, ObservedAt: t0.UnixMilli(), Source: schema.SourceAnnouncePeer,
					NodeAddr: "10.0.0.2:1", PeerPort: 6881},
			})
		} else if err := os.WriteFile(in, onePortStream(t, tt.typ, tt.port), 0o644); err != nil {
			t.Fatal(err)
		}
		eachParquetReader(t, tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			_, err := run(t, data, func(o *Options) { o.AnnouncedPeers = tt.peers }, in)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				for h, s := range readState(t, data) {
					if len(s.Peers) != 0 {
						t.Errorf("hash %x has peers %q", h, s.Peers)
					}
				}
				return
			}
			want := "dedup: " + in + ": wrong schema: " + tt.want
			if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d)\nwant bad input %q", err, exitcode.Of(err), want)
			}
			if _, serr := os.Stat(filepath.Join(data, "CURRENT")); serr == nil {
				if st := readState(t, data); len(st) != 0 {
					t.Fatalf("the refused input committed %d hashes", len(st))
				}
			}
		})
	}
}

// onePortStream is an Arrow IPC stream of one announce_peer row, hash {2}
// by 10.0.0.2:1, whose peer_port of type typ is port (as text).
func onePortStream(t *testing.T, typ arrow.DataType, port string) []byte {
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
	b.Field(0).(*array.BinaryBuilder).Append([]byte{2, 19: 0})
	b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(t0.UnixMilli()))
	b.Field(2).(*array.StringBuilder).Append(schema.SourceAnnouncePeer)
	b.Field(3).(*array.StringBuilder).Append("10.0.0.2:1")
	if err := b.Field(4).AppendValueFromString(port); err != nil {
		t.Fatal(err)
	}
	rec := b.NewRecord()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
