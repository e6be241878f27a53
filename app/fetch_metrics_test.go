package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/infohash/infohash/tools/badpeers"
)

// TestFetchMetricsLastSuccess: --metrics-file's last_success_timestamp_seconds
// moves only on a run that exits 0; a partial run (exit 3, --deadline)
// says so in exit_status and keeps the time the file it replaces had.
func TestFetchMetricsLastSuccess(t *testing.T) {
	stall := fetchPeer(t, badpeers.Stall)
	dir := t.TempDir()
	hashes := filepath.Join(dir, "h.txt")
	var list strings.Builder
	for i := range 4 {
		fmt.Fprintf(&list, "%02x%038x\n", 0x10+i, i)
	}
	if err := os.WriteFile(hashes, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := filepath.Join(dir, "fetch.prom")
	const old = "infohash_fetch_last_success_timestamp_seconds 1600000000\n"
	if err := os.WriteFile(prom, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		args     []string
		exit     int
		kept     bool
		statusIs string
	}{
		{"partial keeps it", []string{"--peer", stall.Addr(), "--deadline", "1s", "--peer-timeout", "1m", "--timeout", "1m"}, 3, true, "3"},
		{"success moves it", nil, 0, false, "0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Each run its own -o: an existing one is refused without --replace.
			args := append([]string{"fetch", "--no-dht", "-o", filepath.Join(t.TempDir(), "r.parquet"), "--metrics-file", prom}, tt.args...)
			if _, stderr, code := runMain(t, append(args, hashes)...); code != tt.exit {
				t.Fatalf("fetch: exit %d, want %d: %s", code, tt.exit, stderr)
			}
			b, err := os.ReadFile(prom)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "\ninfohash_fetch_exit_status "+tt.statusIs+"\n") {
				t.Errorf("exit_status is not %s:\n%s", tt.statusIs, b)
			}
			last := sample(t, string(b), "infohash_fetch_last_success_timestamp_seconds")
			if kept := last == 1600000000; kept != tt.kept {
				t.Errorf("last_success_timestamp_seconds %v (kept %v, want kept %v):\n%s", last, kept, tt.kept, b)
			}
		})
	}
}

// sample returns the value of the unlabelled sample name in text.
func sample(t *testing.T, text, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no sample %s in\n%s", name, text)
	return 0
}
