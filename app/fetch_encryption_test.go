package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestFetchEncryptionFlag: with the default --encryption, fetch gets the
// metadata of a peer that requires MSE (it hangs up on plaintext), says
// so in the ok result's detail and counts it in --stats-json; with
// --encryption off the same peer is peer_lacks_torrent; an unknown value
// is a usage error (exit 2) naming the flag.
func TestFetchEncryptionFlag(t *testing.T) {
	tor := badpeers.NewTorrent(61, 2, 30)
	peer := fetchPeer(t, badpeers.RequireMSE, tor)
	list := []byte(schema.Hex(tor.InfoHash) + "\n")
	tests := []struct {
		name    string
		args    []string
		outcome string
		detail  string
		mseOK   float64 // mse_handshakes_ok in --stats-json
	}{
		{"default", nil, schema.OutcomeOK, "metadata came over MSE (RC4)", 1},
		{"prefer", []string{"--encryption", "prefer"}, schema.OutcomeOK, "metadata came over MSE (RC4)", 1},
		{"off", []string{"--encryption", "off"}, schema.OutcomePeerLacksTorrent, "hung up on our handshake", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			statsPath := filepath.Join(t.TempDir(), "stats.json")
			args := append([]string{"fetch", "-", "-o", "-", "--no-dht", "--peer", peer.Addr(), "--stats-json", statsPath}, tt.args...)
			stdout, stderr, code := runMainIn(t, list, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			r, err := rowio.Open[schema.Result]("-", strings.NewReader(stdout))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := r.ReadAll()
			if err != nil || len(rows) != 1 {
				t.Fatalf("%d rows, err %v", len(rows), err)
			}
			if rows[0].Outcome != tt.outcome || !strings.Contains(rows[0].Detail, tt.detail) {
				t.Fatalf("outcome %s (%q), want %s with %q", rows[0].Outcome, rows[0].Detail, tt.outcome, tt.detail)
			}
			var st map[string]any
			b, err := os.ReadFile(statsPath)
			if err != nil || json.Unmarshal(b, &st) != nil {
				t.Fatalf("stats json: %v %s", err, b)
			}
			if st["mse_handshakes_ok"] != tt.mseOK {
				t.Errorf("mse_handshakes_ok %v, want %v in %s", st["mse_handshakes_ok"], tt.mseOK, b)
			}
		})
	}
	t.Run("unknown value", func(t *testing.T) {
		_, stderr, code := runMainIn(t, list, "fetch", "-", "-o", "-", "--no-dht", "--peer", peer.Addr(), "--encryption", "always")
		if code != 2 || !strings.Contains(stderr, "--encryption") || !strings.Contains(stderr, `"always"`) {
			t.Fatalf("exit %d, stderr %q; want 2 naming --encryption and the value", code, stderr)
		}
	})
}
