package capture

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/tools/testnet"
)

// lockedLog is a log a test reads while the run writes it.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runLogged runs capture with o and returns its log and stats. With a
// line to wait for, the run goes on until its log has it (hangGuard
// bounds the wait), not for o.Duration: a run cut short on a loaded
// machine ended before its bootstrap had, and said nothing. With none,
// it runs for o.Duration: the window in which a line must not come.
func runLogged(t *testing.T, o Options, line string) (*lockedLog, Stats) {
	t.Helper()
	logs := &lockedLog{}
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	if line == "" {
		st, err := Run(context.Background(), o, &memSink{})
		if err != nil {
			t.Fatal(err)
		}
		return logs, st
	}
	o.Duration = 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, wait := runAsync(t, ctx, o, &memSink{})
	waitFor(t, fmt.Sprintf("the log line %q", line), func() bool { return strings.Contains(logs.String(), line) })
	cancel()
	st, err := wait()
	if err != nil && st.StopReason != StopInterrupted {
		t.Fatal(err)
	}
	return logs, st
}

const (
	noAnswerLine = "no DHT node answered"
	noBootLine   = "level=INFO msg=\"capture: no bootstrap: waiting for incoming queries\""
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
			o := testOptions()
			// The testnet's run has no line to wait for: 4 s is the
			// window in which no warning may come.
			o.Bootstrap, o.NodeIDs, o.Duration = tt.boot, 2, 4*time.Second
			var line string
			switch {
			case tt.warn > 0:
				line = noAnswerLine
			case tt.info > 0:
				line = noBootLine
			}
			logs, st := runLogged(t, o, line)
			if got := strings.Count(logs.String(), noAnswerLine); got != tt.warn {
				t.Errorf("%d warnings, want %d (responses_in %d); logs:\n%s", got, tt.warn, st.Responses, logs.String())
			}
			if got := strings.Count(logs.String(), noBootLine); got != tt.info {
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
			o := testOptions()
			// 3 s is the window in which the live contacts' run may not
			// warn; the silent contacts' run goes on until it does.
			o.StateDir, o.Bootstrap, o.NodeIDs, o.Duration = dir, nil, 1, 3*time.Second
			line := ""
			if tt.warn > 0 {
				line = noAnswerLine
			}
			logs, st := runLogged(t, o, line)
			if got := strings.Count(logs.String(), noAnswerLine); got != tt.warn {
				t.Errorf("%d warnings, want %d (responses_in %d); logs:\n%s", got, tt.warn, st.Responses, logs.String())
			}
		})
	}
}
