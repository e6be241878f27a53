package dedup

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestAnnouncedPeersNullPort: with --announced-peers, announce_peer rows
// whose peer_port is null (some rows, a column all null, one of the NULL
// type) name no endpoint, and are counted in the warning an input
// without peer_port gives (TestAnnouncedPeersNoPortColumn), once per
// input, by every reader; the rows with a port give their peer as
// before. They were read without a peer, silently. A null port of
// another source's row is no announcement: not counted.
func TestAnnouncedPeersNullPort(t *testing.T) {
	at := t0.UnixMilli()
	port := func(p int32) *int32 { return &p }
	rows := func(ports ...*int32) []anyPortRow[int32] {
		out := make([]anyPortRow[int32], 0, len(ports)+1)
		out = append(out, anyPortRow[int32]{InfoHash: schema.Hash{9}, ObservedAt: at, Source: schema.SourceGetPeers,
			NodeAddr: "10.0.0.9:1"}) // null port, not an announcement
		for i, p := range ports {
			out = append(out, anyPortRow[int32]{InfoHash: schema.Hash{byte(i + 1)}, ObservedAt: at,
				Source: schema.SourceAnnouncePeer, NodeAddr: "10.0.0.1:1", PeerPort: p})
		}
		return out
	}
	parquetOf := func(r []anyPortRow[int32]) func(t *testing.T, dir string) string {
		return func(t *testing.T, dir string) string { return writeRows(t, filepath.Join(dir, "in.parquet"), r) }
	}
	arrowOf := func(r []anyPortRow[int32]) func(t *testing.T, dir string) string {
		return func(t *testing.T, dir string) string {
			var s bytes.Buffer
			w := rowio.NewArrowWriter[anyPortRow[int32]]("in", &s)
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return writeFile(t, filepath.Join(dir, "in.arrows"), s.Bytes())
		}
	}
	some, all, none := rows(port(6881), nil, port(6882), nil), rows(nil, nil, nil), rows(port(6881), port(6882))
	for _, tt := range []struct {
		name  string
		input func(t *testing.T, dir string) string
		want  int64 // the announce rows the warning counts; 0: no warning
		peers int   // hashes with a peer
	}{
		{"Parquet, some null", parquetOf(some), 2, 2},
		{"Parquet, all null", parquetOf(all), 3, 0},
		{"Parquet, NULL type", nullPortFile, 1, 0},
		{"Parquet, none null", parquetOf(none), 0, 2},
		{"Arrow, some null", arrowOf(some), 2, 2},
		{"Arrow, all null", arrowOf(all), 3, 0},
		{"Arrow, null type", func(t *testing.T, dir string) string {
			return writeFile(t, filepath.Join(dir, "in.arrows"), onePortStream(t, arrow.Null, array.NullValueStr))
		}, 1, 0},
		{"Arrow, none null", arrowOf(none), 0, 2},
	} {
		eachParquetReader(t, tt.name, func(t *testing.T) {
			in := tt.input(t, t.TempDir())
			var log bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})))
			data := filepath.Join(t.TempDir(), "ds")
			if _, err := run(t, data, func(o *Options) { o.AnnouncedPeers = true }, in); err != nil {
				t.Fatal(err)
			}
			peers := 0
			for _, s := range readState(t, data) {
				if len(s.Peers) > 0 {
					peers++
				}
			}
			if peers != tt.peers {
				t.Errorf("%d hashes with a peer, want %d", peers, tt.peers)
			}
			got := strings.Count(log.String(), "announce_peer rows were read without an endpoint")
			if tt.want == 0 {
				if got != 0 {
					t.Fatalf("log %q, want no warning", log.String())
				}
				return
			}
			want := "msg=\"dedup: announce_peer rows were read without an endpoint: their peer_port is null, or the input " +
				"has node_addr and source but no peer_port column (an announced peer is node_addr's IP with the port it " +
				"announced, peer_port, as capture writes them): write their port into peer_port\" input=" + in +
				" announce_rows=" + strconv.FormatInt(tt.want, 10) + "\n"
			if got != 1 || !strings.Contains(log.String(), want) {
				t.Fatalf("log %q\nwant one warning %q", log.String(), want)
			}
		})
	}
}

// writeFile writes b to p and returns p.
func writeFile(t *testing.T, p string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
