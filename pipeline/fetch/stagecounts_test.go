package fetch

import (
	"context"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// stageCounts are a run's per-stage peer counters, in stage order.
type stageCounts struct {
	connects, connectsOK, handshakes, extension, extensionBad, utMetadata, received, verified int64
}

func stageCountsOf(s Stats) stageCounts {
	return stageCounts{s.Connects, s.ConnectsOK, s.Handshakes, s.ExtensionSupport, s.ExtensionBad,
		s.UTMetadata, s.MetadataReceived, s.Verified}
}

// TestStageCountsPerBehaviour: a job whose only peer misbehaves in one
// way counts that peer in every stage it got through and in none after.
// extension_support counts a peer whose BEP 10 extended handshake arrived
// and decoded, not one that merely set the reserved bit: a peer that sets
// it and sends an undecodable extended handshake (bad_ext_handshake) is
// in extension_bad instead, and the documented ordering holds for every
// peer.
func TestStageCountsPerBehaviour(t *testing.T) {
	tor := badpeers.NewTorrent(7, 2, 300)
	invalid := badpeers.InvalidTorrent(8)
	type row struct {
		name string
		b    badpeers.Behaviour
		tor  badpeers.Torrent
		want stageCounts
	}
	rows := []row{
		{"good", badpeers.Good, tor, stageCounts{1, 1, 1, 1, 0, 1, 1, 1}},
		{"refuse", badpeers.Refuse, tor, stageCounts{1, 0, 0, 0, 0, 0, 0, 0}},
		{"wrong_hash", badpeers.WrongHash, tor, stageCounts{1, 1, 0, 0, 0, 0, 0, 0}},
		// A peer that hangs up before a byte of its handshake, or answers
		// with something else, is dialled again over MSE (--encryption's
		// default): two connects.
		{"close", badpeers.Close, tor, stageCounts{2, 2, 0, 0, 0, 0, 0, 0}},
		{"not_bittorrent", badpeers.NotBitTorrent, tor, stageCounts{2, 2, 0, 0, 0, 0, 0, 0}},
		{"mse_garbage", badpeers.MSEGarbage, tor, stageCounts{2, 2, 0, 0, 0, 0, 0, 0}},
		{"require_mse", badpeers.RequireMSE, tor, stageCounts{2, 2, 1, 1, 0, 1, 1, 1}},
		{"stall", badpeers.Stall, tor, stageCounts{1, 1, 0, 0, 0, 0, 0, 0}},
		{"no_extension", badpeers.NoExtension, tor, stageCounts{1, 1, 1, 0, 0, 0, 0, 0}},
		{"bad_ext_handshake", badpeers.BadExtHandshake, tor, stageCounts{1, 1, 1, 0, 1, 0, 0, 0}},
		{"no_ut_metadata", badpeers.NoUTMetadata, tor, stageCounts{1, 1, 1, 1, 0, 0, 0, 0}},
		{"reject", badpeers.Reject, tor, stageCounts{1, 1, 1, 1, 0, 1, 0, 0}},
		{"too_large", badpeers.TooLarge, tor, stageCounts{1, 1, 1, 1, 0, 1, 0, 0}},
		{"garbage", badpeers.Garbage, tor, stageCounts{1, 1, 1, 1, 0, 1, 0, 0}},
		{"wrong_torrent", badpeers.WrongTorrent, tor, stageCounts{1, 1, 1, 1, 0, 1, 1, 0}},
		{"good peer, invalid info", badpeers.Good, invalid, stageCounts{1, 1, 1, 1, 0, 1, 1, 1}},
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFetcher(t, testOptions()) // counters of its own
			p := startPeer(t, tt.b, tt.tor)
			job := schema.Job{InfoHash: tt.tor.InfoHash, HashType: schema.HashV1, Peers: []string{p.Addr()}}
			if _, ok := f.Fetch(context.Background(), job); !ok {
				t.Fatal("attempt abandoned")
			}
			s := f.Stats()
			got := stageCountsOf(s)
			if got != tt.want {
				t.Errorf("stage counts %+v, want %+v", got, tt.want)
			}
			checkStageOrder(t, s)
		})
	}
}

// checkStageOrder checks the ordering Stats documents.
func checkStageOrder(t *testing.T, s Stats) {
	t.Helper()
	if s.MSEHandshakesOK > s.MSEHandshakes || s.MSEHandshakes > s.ConnectsOK {
		t.Errorf("mse_handshakes_ok %d, mse_handshakes %d, connects_ok %d: want them in that order, rising",
			s.MSEHandshakesOK, s.MSEHandshakes, s.ConnectsOK)
	}
	chain := []struct {
		name string
		n    int64
	}{{"connects", s.Connects}, {"connects_ok", s.ConnectsOK}, {"handshakes", s.Handshakes},
		{"extension_support + extension_bad", s.ExtensionSupport + s.ExtensionBad}}
	tail := []struct {
		name string
		n    int64
	}{{"extension_support", s.ExtensionSupport}, {"ut_metadata", s.UTMetadata},
		{"metadata_received", s.MetadataReceived}, {"verified", s.Verified}}
	for _, c := range [][]struct {
		name string
		n    int64
	}{chain, tail} {
		for i := 1; i < len(c); i++ {
			if c[i].n > c[i-1].n {
				t.Errorf("%s %d > %s %d", c[i].name, c[i].n, c[i-1].name, c[i-1].n)
			}
		}
	}
}
