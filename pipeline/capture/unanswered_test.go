package capture

import (
	"bytes"
	"context"
	"encoding/hex"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/tools/testnet"
)

// TestWarnsWhenNoNodeAnswers: a capture whose bootstrap nobody answers
// (a firewall, a dead network) says so in one warning, as fetch does,
// instead of ending as a quiet pass; one that joins the DHT does not.
func TestWarnsWhenNoNodeAnswers(t *testing.T) {
	silent, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	tn := startTestnet(t, testnet.Config{Seed: 5, Nodes: 8, Torrents: 4})
	for _, tt := range []struct {
		name       string
		boot       []string
		warn, info int
	}{
		{"silent router", []string{silent.LocalAddr().String()}, 1, 0},
		{"testnet", tn.Truth().Bootstrap, 0, 0},
		// --bootstrap "": nobody was asked, so nobody failed to answer.
		{"no bootstrap", nil, 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			o := testOptions()
			o.Bootstrap, o.NodeIDs, o.Duration = tt.boot, 2, 4*time.Second
			o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			st, err := Run(context.Background(), o, &memSink{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(logs.String(), "no DHT node answered"); got != tt.warn {
				t.Errorf("%d warnings, want %d (responses_in %d); logs:\n%s", got, tt.warn, st.Responses, logs.String())
			}
			if got := strings.Count(logs.String(), "level=INFO msg=\"capture: no bootstrap: waiting for incoming queries\""); got != tt.info {
				t.Errorf("%d \"no bootstrap\" lines, want %d; logs:\n%s", got, tt.info, logs.String())
			}
		})
	}
}

// TestWarnsWhenNoSavedContactAnswers: a warm start from a saved table big
// enough to skip the bootstrap used to never warn, however silent the
// saved contacts were; now it warns once, warmCheckAfter into the run.
// A warm start whose contacts answer does not.
func TestWarnsWhenNoSavedContactAnswers(t *testing.T) {
	defer func(d time.Duration) { warmCheckAfter = d }(warmCheckAfter)
	warmCheckAfter = time.Second
	var silent []contact
	for i := 0; i < 12; i++ {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		silent = append(silent, contact{ID: [20]byte{byte(i * 20), byte(i)}, Addr: c.LocalAddr().(*net.UDPAddr).AddrPort()})
	}
	tn := startTestnet(t, testnet.Config{Seed: 6, Nodes: 12, Torrents: 4})
	var live []contact
	for i, a := range tn.Truth().Bootstrap {
		live = append(live, contact{ID: [20]byte{byte(i * 20), 1}, Addr: netip.MustParseAddrPort(a)})
	}
	for _, tt := range []struct {
		name  string
		saved []contact
		warn  int
	}{
		{"silent saved contacts", silent, 1},
		{"live saved contacts", live, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.saved) < 8 {
				t.Fatalf("%d saved contacts: too few to skip the bootstrap", len(tt.saved))
			}
			dir := t.TempDir()
			id := [20]byte{0x80}
			if err := saveState(dir, state{Nodes: []stateNode{{ID: hex.EncodeToString(id[:]), Table: toState(tt.saved)}}}); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			o := testOptions()
			o.StateDir, o.Bootstrap, o.NodeIDs, o.Duration = dir, nil, 1, 3*time.Second
			o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			st, err := Run(context.Background(), o, &memSink{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(logs.String(), "no DHT node answered"); got != tt.warn {
				t.Errorf("%d warnings, want %d (responses_in %d); logs:\n%s", got, tt.warn, st.Responses, logs.String())
			}
		})
	}
}
