package fetch

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestFailureRowNamesItsPeer: a results row names in served_by the peer
// its metadata_size and per-stage timings come from, failure or not. A
// too_large row's metadata_size (10 MiB + 1) is one peer's claim, a
// hash_mismatch or invalid_metadata row's timings are the exchange with
// the peer that sent the bytes: that peer's ip:port was only in the
// free-text detail, served_by was null. A row no peer's exchange got
// into past the dial (connect_failed, peer_lacks_torrent, a peer that
// never answered the BEP 3 handshake) has no such peer: served_by stays
// null, with connect_ms. Jobs through Run into Parquet and read back, so
// the column itself is checked.
func TestFailureRowNamesItsPeer(t *testing.T) {
	type row struct {
		name  string
		b     badpeers.Behaviour
		tor   badpeers.Torrent
		want  string // outcome
		named bool   // served_by is the peer's ip:port (else null)
		size  int64  // metadata_size (0: null)
	}
	tor := func(n byte) badpeers.Torrent { return badpeers.NewTorrent(0x50+uint64(n), 2, 300) }
	rows := []row{
		{"good", badpeers.Good, tor(0), schema.OutcomeOK, true, int64(len(tor(0).Info))},
		{"too_large", badpeers.TooLarge, tor(1), schema.OutcomeTooLarge, true, 10<<20 + 1},
		{"wrong_torrent", badpeers.WrongTorrent, tor(2), schema.OutcomeHashMismatch, true, int64(len(badpeers.NewTorrent(0xbad, 3, 40).Info))},
		{"garbage", badpeers.Garbage, tor(3), schema.OutcomeInvalidMetadata, true, int64(len(tor(3).Info))},
		// The bytes match the infohash: the hash's fault, so no
		// peer_failures entry, yet the row's size and timings are
		// still that peer's.
		{"good peer, invalid info", badpeers.Good, badpeers.InvalidTorrent(0x58), schema.OutcomeInvalidMetadata, true, int64(len(badpeers.InvalidTorrent(0x58).Info))},
		{"reject", badpeers.Reject, tor(4), schema.OutcomeRejected, true, int64(len(tor(4).Info))},
		{"no_ut_metadata", badpeers.NoUTMetadata, tor(5), schema.OutcomeNoUTMetadata, true, 0},
		{"no_extension", badpeers.NoExtension, tor(6), schema.OutcomeNoExtension, true, 0},
		{"bad_ext_handshake", badpeers.BadExtHandshake, tor(7), schema.OutcomeHandshakeFailed, true, 0},
		{"refuse", badpeers.Refuse, tor(8), schema.OutcomeConnectFailed, false, 0},
		{"close", badpeers.Close, tor(9), schema.OutcomePeerLacksTorrent, false, 0},
		{"not_bittorrent", badpeers.NotBitTorrent, tor(10), schema.OutcomeHandshakeFailed, false, 0},
		{"stall", badpeers.Stall, tor(11), schema.OutcomeTimeout, false, 0},
	}
	peers := map[schema.Hash]*badpeers.Peer{}
	var jobs []schema.Job
	for _, tt := range rows {
		p := startPeer(t, tt.b, tt.tor)
		peers[tt.tor.InfoHash] = p
		jobs = append(jobs, schema.Job{InfoHash: tt.tor.InfoHash, HashType: schema.HashV1, Attempt: 1, Peers: []string{p.Addr()}})
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	writeRows(t, in, jobs)
	o := testOptions()
	o.Input, o.Output = in, out
	if _, err := Run(context.Background(), o); err != nil && exitcode.Of(err) != exitcode.OK {
		t.Fatalf("run: %v", err)
	}
	got := readResults(t, out)
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := got[tt.tor.InfoHash]
			if !ok {
				t.Fatal("no result row")
			}
			if r.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", r.Outcome, r.Detail, tt.want)
			}
			want := ""
			if tt.named {
				want = peers[tt.tor.InfoHash].Addr()
			}
			if r.ServedBy != want {
				t.Errorf("served_by %q, want %q (detail %q)", r.ServedBy, want, r.Detail)
			}
			if r.MetadataSize != tt.size {
				t.Errorf("metadata_size %d, want %d", r.MetadataSize, tt.size)
			}
			if (r.ServedBy != "") != (r.ConnectMs != nil) {
				t.Errorf("served_by %q with connect_ms %s: the timings must name their peer", r.ServedBy, msText(r.ConnectMs))
			}
		})
	}
}
