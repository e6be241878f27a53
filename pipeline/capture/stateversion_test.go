package capture

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestStateVersion: a state file of a version this build does not know is
// refused (exit 2, naming the file and its version) and left as it was,
// not read as version 1 and overwritten at the end; version 1 runs. The
// saved contacts are all on loopback.
func TestStateVersion(t *testing.T) {
	const file = `{"version":%d,"nodes":[{"id":"0102030405060708090a0b0c0d0e0f1011121314",` +
		`"table":[{"id":"0102030405060708090a0b0c0d0e0f1011121315","addr":"127.0.0.9:6881"}]}],` +
		`"samplers":[{"id":"0102030405060708090a0b0c0d0e0f1011121316","addr":"127.0.0.10:6881"}]}`
	for _, tt := range []struct {
		name    string
		version int
		refused bool
	}{
		{"current", 1, false},
		{"newer", 9, true},
		{"next", 2, true},
		{"none", 0, true},
		{"negative", -1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, stateFileName)
			b := fmt.Appendf(nil, file, tt.version)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			o := testOptions()
			o.StateDir = dir
			o.NodeIDs = 1
			o.Crawl = false
			o.Duration = 100 * time.Millisecond
			_, err := Run(context.Background(), o, &memSink{})
			if !tt.refused {
				// Nobody listens at its saved contact: a silent run,
				// partial (TestSilentDHTIsPartial), not refused.
				if exitcode.Of(err) != exitcode.Partial {
					t.Fatalf("version %d: %v", tt.version, err)
				}
				return
			}
			want := fmt.Sprintf("capture: dht state %s: unknown version %d (this build reads version 1;", p, tt.version)
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("version %d: error %v (exit %d), want one line starting %q, exit 2", tt.version, err, exitcode.Of(err), want)
			}
			if after, _ := os.ReadFile(p); string(after) != string(b) {
				t.Fatalf("the refused state file was rewritten:\n%s", after)
			}
		})
	}
}
