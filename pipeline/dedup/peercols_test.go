package dedup

import (
	"bytes"
	"encoding/base64"
	"fmt"
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

// pcHash is the info_hash and observed_at of the rows of peerColsFile.
type pcHash struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
}

type pcPort struct {
	Port int32 `parquet:"port"`
}

type pcIP struct {
	IP string `parquet:"ip"`
}

// The inputs' shapes: peer_port a STRUCT or a LIST; node_addr missing,
// an INT64, a STRUCT or a BLOB; source missing.
type (
	pcStructPort struct {
		pcHash
		Source   string  `parquet:"source"`
		NodeAddr string  `parquet:"node_addr,optional"`
		PeerPort *pcPort `parquet:"peer_port,optional"`
	}
	pcListPort struct {
		pcHash
		Source   string  `parquet:"source"`
		NodeAddr string  `parquet:"node_addr,optional"`
		PeerPort []int32 `parquet:"peer_port,list"`
	}
	pcNoAddr struct {
		pcHash
		Source   string `parquet:"source"`
		PeerPort *int32 `parquet:"peer_port,optional"`
	}
	pcIntAddr struct {
		pcHash
		Source   string `parquet:"source"`
		NodeAddr *int64 `parquet:"node_addr,optional"`
		PeerPort *int32 `parquet:"peer_port,optional"`
	}
	pcStructAddr struct {
		pcHash
		Source   string `parquet:"source"`
		NodeAddr *pcIP  `parquet:"node_addr,optional"`
		PeerPort *int32 `parquet:"peer_port,optional"`
	}
	pcNoSource struct {
		pcHash
		NodeAddr string `parquet:"node_addr,optional"`
		PeerPort *int32 `parquet:"peer_port,optional"`
	}
	pcBlobAddr struct {
		pcHash
		Source   string `parquet:"source"`
		NodeAddr []byte `parquet:"node_addr,optional"`
		PeerPort *int32 `parquet:"peer_port,optional"`
	}
)

// peerColsFile writes two rows of T as a Parquet file in dir: hash {1}
// from a get_peers, hash {2} announced by 10.0.0.2:1 at port 6881 (as row
// makes them, given the hash, whether it is the announcement, and its
// source).
func peerColsFile[T any](row func(h pcHash, ann bool, src string) T) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		t.Helper()
		at := t0.UnixMilli()
		return writeRows(t, filepath.Join(dir, "in.parquet"), []T{
			row(pcHash{schema.Hash{1}, at}, false, schema.SourceGetPeers),
			row(pcHash{schema.Hash{2}, at}, true, schema.SourceAnnouncePeer),
		})
	}
}

// peerColsStream is peerColsFile's rows as an Arrow IPC stream whose
// columns beside info_hash and observed_at are fields, each row's values
// given as JSON by vals (ann: the announcement's row).
func peerColsStream(t *testing.T, fields []arrow.Field, vals func(ann bool) string) []byte {
	t.Helper()
	sch := arrow.NewSchema(append([]arrow.Field{{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "observed_at", Type: arrow.FixedWidthTypes.Timestamp_ms}}, fields...), nil)
	var rows []string
	for i, ann := range []bool{false, true} {
		h := base64.StdEncoding.EncodeToString(append([]byte{byte(i + 1)}, make([]byte, 19)...))
		rows = append(rows, fmt.Sprintf(`{"info_hash": %q, "observed_at": %d, %s}`, h, t0.UnixMilli(), vals(ann)))
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sch, strings.NewReader("["+strings.Join(rows, ",")+"]"))
	if err != nil {
		t.Fatal(err)
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

// annJSON is the JSON of a row's source, node_addr and peer_port (port
// as given) for peerColsStream; a column named in omit is left out.
func annJSON(port string, omit ...string) func(ann bool) string {
	return func(ann bool) string {
		src, addr, p := `"`+schema.SourceGetPeers+`"`, "null", "null"
		if ann {
			src, addr, p = `"`+schema.SourceAnnouncePeer+`"`, `"10.0.0.2:1"`, port
		}
		var kv []string
		for _, c := range [][2]string{{"source", src}, {"node_addr", addr}, {"peer_port", p}} {
			if !slices.Contains(omit, c[0]) {
				kv = append(kv, fmt.Sprintf("%q: %s", c[0], c[1]))
			}
		}
		return strings.Join(kv, ", ")
	}
}

// TestAnnouncedPeerColumns: with --announced-peers, an input whose
// peer_port is nested (a STRUCT or LIST), whose node_addr is missing, no
// text (an INT64, a STRUCT) or whose source column is missing is the
// wrong schema: bad input in one line naming the input and the column,
// nothing committed, Parquet or Arrow, by every reader. Its peers were
// silently not read (the run kept none, and said nothing). Without the
// flag nothing changes: every observation is kept, with no peers. A
// node_addr BLOB is read as text: a Parquet BYTE_ARRAY was, and an Arrow
// binary one, silently not read before, is now too.
func TestAnnouncedPeerColumns(t *testing.T) {
	port := new(int32(6881))
	i64, utf8, bin := arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary
	src, addr := arrow.Field{Name: "source", Type: utf8}, arrow.Field{Name: "node_addr", Type: utf8, Nullable: true}
	portF := arrow.Field{Name: "peer_port", Type: arrow.PrimitiveTypes.Int32, Nullable: true}
	tests := []struct {
		name   string
		file   func(t *testing.T, dir string) string // nil: fields and vals, an Arrow stream on stdin
		fields []arrow.Field
		vals   func(ann bool) string
		err    string // with --announced-peers; "": read, with the announced peer
	}{
		{name: "Parquet STRUCT peer_port", file: peerColsFile(func(h pcHash, ann bool, s string) pcStructPort {
			if ann {
				return pcStructPort{h, s, "10.0.0.2:1", &pcPort{6881}}
			}
			return pcStructPort{pcHash: h, Source: s}
		}), err: `column "peer_port" is a STRUCT, want an integer (a port)`},
		{name: "Parquet LIST peer_port", file: peerColsFile(func(h pcHash, ann bool, s string) pcListPort {
			if ann {
				return pcListPort{h, s, "10.0.0.2:1", []int32{6881}}
			}
			return pcListPort{pcHash: h, Source: s}
		}), err: `column "peer_port" is a LIST, want an integer (a port)`},
		{name: "Parquet no node_addr", file: peerColsFile(func(h pcHash, ann bool, s string) pcNoAddr {
			if ann {
				return pcNoAddr{h, s, port}
			}
			return pcNoAddr{pcHash: h, Source: s}
		}), err: `missing column "node_addr" beside peer_port: --announced-peers reads an announced peer as node_addr's IP`},
		{name: "Parquet INT64 node_addr", file: peerColsFile(func(h pcHash, ann bool, s string) pcIntAddr {
			if ann {
				return pcIntAddr{h, s, new(int64(167772162)), port}
			}
			return pcIntAddr{pcHash: h, Source: s}
		}), err: `column "node_addr" is INT64, want text ("ip:port") or a BLOB (BYTE_ARRAY)`},
		{name: "Parquet STRUCT node_addr", file: peerColsFile(func(h pcHash, ann bool, s string) pcStructAddr {
			if ann {
				return pcStructAddr{h, s, &pcIP{"10.0.0.2:1"}, port}
			}
			return pcStructAddr{pcHash: h, Source: s}
		}), err: `column "node_addr" is a STRUCT, want text ("ip:port") or a BLOB (BYTE_ARRAY)`},
		{name: "Parquet no source", file: peerColsFile(func(h pcHash, ann bool, _ string) pcNoSource {
			if ann {
				return pcNoSource{h, "10.0.0.2:1", port}
			}
			return pcNoSource{pcHash: h}
		}), err: `missing column "source" beside peer_port: --announced-peers reads the peers of the announce_peer rows`},
		{name: "Parquet BLOB node_addr", file: peerColsFile(func(h pcHash, ann bool, s string) pcBlobAddr {
			if ann {
				return pcBlobAddr{h, s, []byte("10.0.0.2:1"), port}
			}
			return pcBlobAddr{pcHash: h, Source: s}
		})},
		{name: "Arrow struct peer_port", fields: []arrow.Field{src, addr, {Name: "peer_port", Nullable: true,
			Type: arrow.StructOf(arrow.Field{Name: "port", Type: arrow.PrimitiveTypes.Int32})}},
			vals: annJSON(`{"port": 6881}`), err: `column "peer_port" is struct<port: int32>, want an integer (a port)`},
		{name: "Arrow list peer_port", fields: []arrow.Field{src, addr, {Name: "peer_port", Nullable: true,
			Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}},
			vals: annJSON(`[6881]`), err: `column "peer_port" is list<item: int32, nullable>, want an integer (a port)`},
		{name: "Arrow no node_addr", fields: []arrow.Field{src, portF}, vals: annJSON("6881", "node_addr"),
			err: `missing column "node_addr" beside peer_port`},
		{name: "Arrow int64 node_addr", fields: []arrow.Field{src, {Name: "node_addr", Type: i64, Nullable: true}, portF},
			vals: func(ann bool) string { return strings.Replace(annJSON("6881")(ann), `"10.0.0.2:1"`, "167772162", 1) },
			err:  `column "node_addr" is int64, want text ("ip:port") or a BLOB (binary)`},
		{name: "Arrow no source", fields: []arrow.Field{addr, portF}, vals: annJSON("6881", "source"),
			err: `missing column "source" beside peer_port`},
		{name: "Arrow binary node_addr", fields: []arrow.Field{src, {Name: "node_addr", Type: bin, Nullable: true}, portF},
			vals: func(ann bool) string {
				return strings.Replace(annJSON("6881")(ann), `"10.0.0.2:1"`, `"`+base64.StdEncoding.EncodeToString([]byte("10.0.0.2:1"))+`"`, 1)
			}},
	}
	for _, tt := range tests {
		in, named, stream := "-", "stdin (", []byte(nil)
		if tt.file != nil {
			in = tt.file(t, t.TempDir())
			named = in
		} else {
			stream = peerColsStream(t, tt.fields, tt.vals)
		}
		for _, peers := range []bool{true, false} {
			eachParquetReader(t, tt.name+map[bool]string{true: "/announced-peers", false: "/no-peers"}[peers], func(t *testing.T) {
				data := filepath.Join(t.TempDir(), "ds")
				_, err := run(t, data, func(o *Options) {
					o.AnnouncedPeers, o.Stdin = peers, bytes.NewReader(stream)
				}, in)
				if peers && tt.err != "" {
					if err == nil || !strings.HasPrefix(err.Error(), "dedup: "+named) || !strings.Contains(err.Error(), ": wrong schema: "+tt.err) ||
						strings.Contains(err.Error(), "\n") || exitcode.Of(err) != exitcode.Usage {
						t.Fatalf("err = %v (exit %d)\nwant one line of bad input: dedup: %s...wrong schema: %s", err, exitcode.Of(err), named, tt.err)
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
				st := readState(t, data)
				if len(st) != 2 {
					t.Fatalf("%d hashes kept, want every row's 2", len(st))
				}
				var want []string
				if peers {
					want = []string{"10.0.0.2:6881"}
				}
				if got := st[schema.Hash{2}].Peers; !slices.Equal(got, want) {
					t.Fatalf("the announced hash has peers %q, want %q", got, want)
				}
			})
		}
	}
}
