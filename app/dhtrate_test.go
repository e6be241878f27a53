package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureDHTRateZero: capture's --dht-rate 0 (or --max-rps 0) lifted
// the crawl's limit, the opposite of what one writing 0 for "off" wants:
// it is refused with one line (exit 2) pointing at --passive. A rate
// above 0 runs, and fetch's 0 still means no limit.
func TestCaptureDHTRateZero(t *testing.T) {
	hashes := filepath.Join(t.TempDir(), "hashes.txt")
	if err := os.WriteFile(hashes, []byte(hexLines("rate", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	const refused = "infohash: capture: --dht-rate: 0 would not turn the crawl off (that is --passive) but lift its limit; give a rate above 0\n"
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string // all of stderr when exit 2, else a part of it
	}{
		{"capture 0", []string{"capture", "--dht-rate", "0"}, 2, refused},
		{"capture old name 0", []string{"capture", "--max-rps", "0"}, 2, refused},
		{"capture 0 with --passive", []string{"capture", "--passive", "--dht-rate=0"}, 2, refused},
		{"capture 0.5", []string{"capture", "--dht-rate", "0.5"}, 0, `msg="capture: done"`},
		{"capture default", []string{"capture"}, 0, `msg="capture: done"`},
		{"fetch 0: no limit", []string{"fetch", "--dht-rate", "0", "--peer", "127.0.0.1:1", "--timeout", "1s", hashes}, 0, "fetch: 1 job, 1 attempted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append(tt.args, "-o", filepath.Join(t.TempDir(), "out.parquet"), "--bootstrap", "", "--dht-listen", "127.0.0.1:0")
			if tt.args[0] == "capture" {
				args = append(args, "--duration", "1ms", "--dht-state", filepath.Join(t.TempDir(), "state"))
			}
			_, stderr, code := runMain(t, args...)
			if code != tt.code || (code == 2 && stderr != tt.want) || (code != 2 && !strings.Contains(stderr, tt.want)) {
				t.Fatalf("infohash %s: exit %d, stderr %q; want exit %d and %q", strings.Join(args, " "), code, stderr, tt.code, tt.want)
			}
		})
	}
}
