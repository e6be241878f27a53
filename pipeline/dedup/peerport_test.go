package dedup

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

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
// -1 and its endpoint be dropped unsaid) is bad input naming the file,
// the column, the row and the value, also past the first read; nothing
// is committed. Without announced peers the column is not read.
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
		want  string   // the error after "dedup: FILE: ", "" for none
		state []string // h's peers, when no error
	}{
		{"a port that fits", rows(3, 6881), true, "", []string{"1.1.1.1:6881"}},
		{"2^32-1", rows(3, math.MaxUint32), true, `column "peer_port" row 4: 4294967295 is outside int32`, nil},
		{"2^31 past the first read", rows(readBatch+5, 1<<31), true,
			`column "peer_port" row 8198: 2147483648 is outside int32`, nil},
		{"2^32-1 without announced peers", rows(3, math.MaxUint32), false, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := writeRows(t, filepath.Join(t.TempDir(), "in.parquet"), tt.rows)
			data := filepath.Join(t.TempDir(), "ds")
			_, err := run(t, data, func(o *Options) { o.AnnouncedPeers = tt.peers }, in)
			if tt.want != "" {
				want := "dedup: " + in + ": " + tt.want
				if err == nil || !strings.Contains(err.Error(), want) || exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("err = %v (exit %d)\nwant bad input %q", err, exitcode.Of(err), want)
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
			if got := readState(t, data)[h].Peers; !slices.Equal(got, tt.state) {
				t.Fatalf("peers %q, want %q", got, tt.state)
			}
		})
	}
}

// TestPeerPortUnsignedLayout: the column reader leaves a file whose
// peer_port is a UINTEGER to the row reader, which reads it by value; a
// USMALLINT, whose values an int32 holds, stays with the column reader.
func TestPeerPortUnsignedLayout(t *testing.T) {
	type shortPort struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		NodeAddr   string      `parquet:"node_addr,optional"`
		PeerPort   uint16      `parquet:"peer_port,optional"`
	}
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		fast bool
	}{
		{"UINTEGER", writeRows(t, filepath.Join(dir, "u32.parquet"), []uintPort{{HashType: 1}}), false},
		{"USMALLINT", writeRows(t, filepath.Join(dir, "u16.parquet"), []shortPort{{}}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			pf, err := parquet.OpenFile(f, st.Size())
			if err != nil {
				t.Fatal(err)
			}
			if _, fast := fastLayout(pf); fast != tt.fast {
				t.Fatalf("column reader %v, want %v", fast, tt.fast)
			}
		})
	}
}
