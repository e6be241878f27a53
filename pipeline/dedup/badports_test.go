package dedup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/infohash/infohash/formats/schema"
)

// Rows of portRow[int32]'s fields with peer_port declared narrower than
// its INT32 (UTINYINT, TINYINT, SMALLINT), as a damaged or hand-written
// file may hold it: a UTINYINT holding 300. parquet-go writes the int32 as
// it is.
type (
	u8PortRow struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
		NodeAddr   string `parquet:"node_addr,optional"`
		PeerPort   *int32 `parquet:"peer_port,optional,uint(8)"`
	}
	i8PortRow struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
		NodeAddr   string `parquet:"node_addr,optional"`
		PeerPort   *int32 `parquet:"peer_port,optional,int(8)"`
	}
	i16PortRow struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
		NodeAddr   string `parquet:"node_addr,optional"`
		PeerPort   *int32 `parquet:"peer_port,optional,int(16)"`
	}
)

// narrowPortFile is portFile[int32](port) with peer_port declared as R
// declares it.
func narrowPortFile[R u8PortRow | i8PortRow | i16PortRow](port string) func(t *testing.T, path string) string {
	return func(t *testing.T, path string) string {
		t.Helper()
		rows := portRows[int32](t, port)
		out := make([]R, len(rows))
		for k, r := range rows {
			out[k] = R(r)
		}
		return writeGroupsOf3(t, path, out)
	}
}

// portReaders are the readers of an announced peer_port: the Parquet
// column (page) reader and row reader of a file, and the Arrow column
// and row readers of a stream on stdin.
var portReaders = []struct {
	name        string
	fast, stdin bool
}{
	{"parquet-columns", true, false},
	{"parquet-rows", false, false},
	{"arrow-stdin-columns", true, true},
	{"arrow-stdin-rows", false, true},
}

// TestBadPeerPorts: every reader drops an announce_peer row's peer_port
// that is not null but no port (0, negative, past 65535, past int32 in a
// wider column: a BIGINT's 2^40, a UINTEGER's 2^32-1, a UBIGINT's 2^64-1,
// or past the width its Parquet column declares: a UTINYINT's 300, a
// TINYINT's 200), and counts it the same way (bad_peer_ports), with one
// warning naming the input and the count; its observation is kept, and a
// port that fits its column is read. A null port, and a bad one in a row
// that is not announce_peer (DuckDB's row 7), is not counted. They were
// dropped unsaid, a narrow column's value past its width was read as a
// port, and one past int32 refused the whole input (exit 2).
func TestBadPeerPorts(t *testing.T) {
	P := arrow.PrimitiveTypes
	duck := func(name string) func(*testing.T, string) string {
		return func(*testing.T, string) string { return duckFile(name) }
	}
	h5 := schema.Hash{5} // portRows' row 5, whose port the case sets
	tests := []struct {
		name    string
		parquet func(t *testing.T, path string) string // nil: no Parquet input
		arrow   arrow.DataType                         // the same rows' stream (portStream), nil: none
		port    string                                 // row 5's port, in both
		bad     int64
		hash    schema.Hash // a hash whose peers are checked
		peers   []string
	}{
		{"INT32 6881", portFile[int32]("6881"), P.Int32, "6881", 0, h5, []string{"10.0.0.4:6881"}},
		{"INT32 65535", portFile[int32]("65535"), P.Int32, "65535", 0, h5, []string{"10.0.0.4:65535"}},
		{"INT32 0", portFile[int32]("0"), P.Int32, "0", 1, h5, nil},
		{"INT32 -1", portFile[int32]("-1"), P.Int32, "-1", 1, h5, nil},
		{"INT32 70000", portFile[int32]("70000"), P.Int32, "70000", 1, h5, nil},
		{"SMALLINT -1", portFile[int16]("-1"), P.Int16, "-1", 1, h5, nil},
		{"INT64 0", portFile[int64]("0"), P.Int64, "0", 1, h5, nil},
		{"INT64 70000", portFile[int64]("70000"), P.Int64, "70000", 1, h5, nil},
		{"UINTEGER 70000", portFile[uint32]("70000"), P.Uint32, "70000", 1, h5, nil},
		{"UBIGINT 0", portFile[uint64]("0"), P.Uint64, "0", 1, h5, nil},
		{"UBIGINT 65536", portFile[uint64]("65536"), P.Uint64, "65536", 1, h5, nil},
		// Past int32 in a wider column: no port, as 70000 (it was bad input).
		{"BIGINT 2^40", portFile[int64]("1099511627776"), P.Int64, "1099511627776", 1, h5, nil},
		{"BIGINT 2^32+6881", portFile[int64]("4294973177"), P.Int64, "4294973177", 1, h5, nil}, // not its low bits
		{"BIGINT -2^31-1", portFile[int64]("-2147483649"), P.Int64, "-2147483649", 1, h5, nil},
		{"UINTEGER 2^31", portFile[uint32]("2147483648"), P.Uint32, "2147483648", 1, h5, nil},
		{"UINTEGER 2^32-1", portFile[uint32]("4294967295"), P.Uint32, "4294967295", 1, h5, nil},
		{"UINTEGER dictionary 2^32-1", dictPortFile[uint32]("4294967295"), nil, "", 1, h5, nil},
		{"UBIGINT 2^63", portFile[uint64]("9223372036854775808"), P.Uint64, "9223372036854775808", 1, h5, nil},
		{"UBIGINT 2^64-1", portFile[uint64]("18446744073709551615"), P.Uint64, "18446744073709551615", 1, h5, nil},
		{"UBIGINT dictionary 2^64-1", dictPortFile[uint64]("18446744073709551615"), nil, "", 1, h5, nil},
		{"USMALLINT 65535", portFile[uint16]("65535"), P.Uint16, "65535", 0, h5, []string{"10.0.0.4:65535"}},
		{"UTINYINT 255", portFile[uint8]("255"), P.Uint8, "255", 0, h5, []string{"10.0.0.4:255"}},
		{"TINYINT 127", portFile[int8]("127"), P.Int8, "127", 0, h5, []string{"10.0.0.4:127"}},
		{"int8 -128", nil, P.Int8, "-128", 1, h5, nil},
		// Past the declared width: Parquet only (an Arrow type is its width).
		{"UTINYINT holding 300", narrowPortFile[u8PortRow]("300"), nil, "", 1, h5, nil},
		{"UTINYINT holding -1", narrowPortFile[u8PortRow]("-1"), nil, "", 1, h5, nil},
		{"TINYINT holding 200", narrowPortFile[i8PortRow]("200"), nil, "", 1, h5, nil},
		{"SMALLINT holding 40000", narrowPortFile[i16PortRow]("40000"), nil, "", 1, h5, nil},
		{"SMALLINT holding 32767", narrowPortFile[i16PortRow]("32767"), nil, "", 0, h5, []string{"10.0.0.4:32767"}},
		// DuckDB's own (testdata/duckdb/gen.sh): 0 in row 1, and row 2's.
		{"DuckDB INTEGER", duck("peer_port_integer.parquet"), nil, "", 2, duckHash(2), nil},
		{"DuckDB UINTEGER", duck("peer_port_uinteger.parquet"), nil, "", 2, duckHash(2), nil},
		{"DuckDB USMALLINT", duck("peer_port_usmallint.parquet"), nil, "", 1, duckHash(2), []string{"10.0.0.2:65535"}},
		{"DuckDB UTINYINT", duck("peer_port_utinyint.parquet"), nil, "", 1, duckHash(2), []string{"10.0.0.2:255"}},
		{"DuckDB BIGINT", duck("peer_port_bigint.parquet"), nil, "", 2, duckHash(2), nil},   // 2^32+6881
		{"DuckDB UBIGINT", duck("peer_port_ubigint.parquet"), nil, "", 2, duckHash(2), nil}, // 2^64-1
	}
	defer func() { fastPath = true }()
	for _, tt := range tests {
		dir := t.TempDir()
		var file string
		if tt.parquet != nil {
			file = tt.parquet(t, filepath.Join(dir, "in.parquet"))
		}
		var stream []byte
		if tt.arrow != nil {
			stream = portStream(t, tt.arrow, tt.port)
		}
		for _, rd := range portReaders {
			if rd.stdin && stream == nil || !rd.stdin && file == "" {
				continue
			}
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				fastPath = rd.fast
				in, named := file, "input="+file+" "
				if rd.stdin {
					in, named = "-", `input="stdin (`
				}
				st, log := runLogged(t, filepath.Join(t.TempDir(), "ds"), func(o *Options) {
					o.AnnouncedPeers, o.Stdin = true, bytes.NewReader(stream)
				}, in)
				if st.BadPeerPorts != tt.bad {
					t.Errorf("bad_peer_ports = %d, want %d", st.BadPeerPorts, tt.bad)
				}
				warned := strings.Count(log, "peer_port that is no port")
				if want := fmt.Sprintf("bad_peer_ports=%d\n", tt.bad); tt.bad > 0 &&
					(warned != 1 || !strings.Contains(log, want) || !strings.Contains(log, named)) {
					t.Errorf("want one warning naming the input (%s) and %s:\n%s", named, want, log)
				} else if tt.bad == 0 && warned != 0 {
					t.Errorf("a warning without bad ports:\n%s", log)
				}
				state := readState(t, st.data)
				rows := 6 // portRows'
				if tt.hash != h5 {
					rows = 8 // DuckDB's
				}
				if len(state) != rows {
					t.Errorf("%d hashes kept, want every row's %d", len(state), rows)
				}
				if s, ok := state[tt.hash]; !ok || s.SeenCount != 1 {
					t.Errorf("%x: kept %v, seen %d times: want its observation kept", tt.hash[:2], ok, s.SeenCount)
				}
				if got := state[tt.hash].Peers; !slices.Equal(got, tt.peers) {
					t.Errorf("%x's peers %q, want %q", tt.hash[:2], got, tt.peers)
				}
			})
		}
	}
}

// loggedStats is a run's stats, and where its dataset is.
type loggedStats struct {
	Stats
	data string
}

// runLogged is run with slog's output (info and up) captured, and
// returned; the run must succeed.
func runLogged(t *testing.T, data string, mod func(*Options), inputs ...string) (loggedStats, string) {
	t.Helper()
	var log bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo})))
	st, err := run(t, data, mod, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	return loggedStats{st, data}, log.String()
}

// TestBadPeerPortsPerInput: the bad ports of a run's inputs add up in
// bad_peer_ports (--stats-json's name too), with one warning per input
// that had any, naming it and its own count; without --announced-peers
// the column is not read, and none is counted.
func TestBadPeerPortsPerInput(t *testing.T) {
	dir := t.TempDir()
	zero := portFile[int32]("0")(t, filepath.Join(dir, "zero.parquet"))
	good := portFile[int32]("6881")(t, filepath.Join(dir, "good.parquet"))
	duckInt := duckFile("peer_port_integer.parquet")
	for _, peers := range []bool{true, false} {
		t.Run(fmt.Sprintf("announced-peers=%v", peers), func(t *testing.T) {
			st, log := runLogged(t, filepath.Join(t.TempDir(), "ds"), func(o *Options) { o.AnnouncedPeers = peers },
				zero, good, duckInt)
			want := map[bool]int64{true: 3, false: 0}[peers]
			if st.BadPeerPorts != want {
				t.Errorf("bad_peer_ports = %d, want %d", st.BadPeerPorts, want)
			}
			js, err := json.Marshal(st.Stats)
			if err != nil {
				t.Fatal(err)
			}
			if w := fmt.Sprintf(`"bad_peer_ports":%d`, want); !bytes.Contains(js, []byte(w)) {
				t.Errorf("--stats-json %s lacks %s", js, w)
			}
			var warns []string
			for _, line := range strings.Split(log, "\n") {
				if strings.Contains(line, "peer_port that is no port") {
					warns = append(warns, line)
				}
			}
			if !peers {
				if len(warns) != 0 {
					t.Errorf("warnings without --announced-peers:\n%s", log)
				}
				return
			}
			if len(warns) != 2 || !strings.Contains(warns[0], "input="+zero+" bad_peer_ports=1") ||
				!strings.Contains(warns[1], "input="+duckInt+" bad_peer_ports=2") {
				t.Errorf("want one warning for %s (1) and one for %s (2), none for %s:\n%s", zero, duckInt, good, log)
			}
		})
	}
}
