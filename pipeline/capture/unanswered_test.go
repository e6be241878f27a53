package capture

import (
	"bytes"
	"context"
	"log/slog"
	"net"
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
		name string
		boot []string
		warn int
	}{
		{"silent router", []string{silent.LocalAddr().String()}, 1},
		{"testnet", tn.Truth().Bootstrap, 0},
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
		})
	}
}
