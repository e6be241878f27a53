package dedup

import (
	"bytes"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// noPortObs is an observation with node_addr and source but no
// peer_port, as a rewrite that dropped the column leaves capture's;
// noPortDict has its source dictionary-encoded, noAddrObs no node_addr.
type (
	noPortObs struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		Source     string      `parquet:"source"`
		NodeAddr   string      `parquet:"node_addr,optional"`
	}
	noPortDict struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		Source     string      `parquet:"source,dict"`
		NodeAddr   string      `parquet:"node_addr,optional"`
	}
	noAddrObs struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		Source     string      `parquet:"source"`
	}
)

// TestAnnouncedPeersNoPortColumn: with --announced-peers, an input that
// has node_addr and source but no peer_port column (Parquet, its source
// plain or dictionary-encoded, or an Arrow stream) is read, every
// sighting kept, and its announce_peer rows, which name no endpoint, are
// counted in one warning for the input that says why. They were read
// without a peer, silently. It is not refused: its sightings are sound,
// and a run mixes such inputs with hash lists and imports, which have no
// peer_port by nature and give no warning, nor does an input without
// announce_peer rows, one with peer_port, or any input without
// --announced-peers.
func TestAnnouncedPeersNoPortColumn(t *testing.T) {
	at := t0.UnixMilli()
	obs := func(srcs ...string) []noPortObs {
		out := make([]noPortObs, len(srcs))
		for i, s := range srcs {
			out[i] = noPortObs{schema.Hash{byte(i + 1)}, at + int64(i), s, "10.0.0.1:6881"}
		}
		return out
	}
	ann, get := schema.SourceAnnouncePeer, schema.SourceGetPeers
	mixed := obs(ann, get, ann, ann)
	parquetOf := func(rows any) func(t *testing.T, dir string) string {
		return func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "in.parquet")
			switch r := rows.(type) {
			case []noPortObs:
				return writeRows(t, p, r)
			case []noPortDict:
				return writeRows(t, p, r)
			case []noAddrObs:
				return writeRows(t, p, r)
			}
			t.Fatalf("rows of %T", rows)
			return ""
		}
	}
	dict := make([]noPortDict, len(mixed))
	noAddr := make([]noAddrObs, len(mixed))
	for i, o := range mixed {
		dict[i] = noPortDict(o)
		noAddr[i] = noAddrObs{o.InfoHash, o.ObservedAt, o.Source}
	}
	for _, tt := range []struct {
		name   string
		input  func(t *testing.T, dir string) string
		hashes int
		want   int64 // the announce rows the warning counts; 0: no warning
	}{
		{"Parquet", parquetOf(mixed), 4, 3},
		{"Parquet, dictionary-encoded source", parquetOf(dict), 4, 3},
		{"Arrow stream", func(t *testing.T, dir string) string {
			var s bytes.Buffer
			w := rowio.NewArrowWriter[noPortObs]("in", &s)
			if err := w.Write(mixed); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "in.arrows")
			if err := os.WriteFile(p, s.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, 4, 3},
		{"no announce_peer row", parquetOf(obs(get, get)), 2, 0},
		{"no node_addr", parquetOf(noAddr), 4, 0},
		{"with peer_port", func(t *testing.T, dir string) string {
			return writeRows(t, filepath.Join(dir, "in.parquet"), []schema.Observation{{InfoHash: schema.Hash{1},
				ObservedAt: at, Source: ann, NodeAddr: "10.0.0.1:1", PeerPort: 6881}})
		}, 1, 0},
		{"hash list", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "hashes.txt")
			if err := os.WriteFile(p, []byte(hex.EncodeToString(make([]byte, 20))+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, 1, 0},
	} {
		for _, peers := range []bool{true, false} {
			eachParquetReader(t, tt.name+map[bool]string{true: "/announced-peers", false: "/no-peers"}[peers], func(t *testing.T) {
				in := tt.input(t, t.TempDir())
				var log bytes.Buffer
				defer slog.SetDefault(slog.Default())
				slog.SetDefault(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})))
				data := filepath.Join(t.TempDir(), "ds")
				if _, err := run(t, data, func(o *Options) { o.AnnouncedPeers = peers }, in); err != nil {
					t.Fatal(err)
				}
				if st := readState(t, data); len(st) != tt.hashes {
					t.Errorf("%d hashes kept, want every row's %d", len(st), tt.hashes)
				}
				got := strings.Count(log.String(), "no peer_port column")
				if tt.want == 0 || !peers {
					if got != 0 {
						t.Fatalf("log %q, want no warning of a missing peer_port", log.String())
					}
					return
				}
				want := "msg=\"dedup: announce_peer rows were read without an endpoint: their peer_port is null, or the input has " +
					"node_addr and source but no peer_port column (an announced peer is node_addr's IP with the port it announced, " +
					"peer_port, as capture writes them): write their port into peer_port\" input=" + in + " announce_rows=" + map[int64]string{3: "3"}[tt.want] + "\n"
				if got != 1 || !strings.Contains(log.String(), want) {
					t.Fatalf("log %q\nwant one warning %q", log.String(), want)
				}
			})
		}
	}
}
