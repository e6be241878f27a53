package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/pipeline/dedup"
)

// TestBatchHashesDefaultCountsPeers: without --batch-hashes, dedup bounds
// its batches for what a hash costs, more with --announced-peers (its
// peer records); a --batch-hashes given wins either way. --help says both
// defaults.
func TestBatchHashesDefaultCountsPeers(t *testing.T) {
	without, with := dedup.DefaultBatchHashes(false), dedup.DefaultBatchHashes(true)
	if with >= without && without > 1<<20 {
		t.Fatalf("DefaultBatchHashes: %d with peers, %d without", with, without)
	}
	hashes := filepath.Join(t.TempDir(), "h.txt")
	if err := os.WriteFile(hashes, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		flags []string
		want  int64
	}{
		{"default", nil, without},
		{"announced peers", []string{"--announced-peers"}, with},
		{"given", []string{"--announced-peers", "--batch-hashes", "5"}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"dedup", "--debug", "--data", filepath.Join(t.TempDir(), "ds")}, tc.flags...)
			_, stderr, code := runMain(t, append(args, hashes)...)
			if want := fmt.Sprintf("batch_hashes=%d ", tc.want); code != 0 || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
			}
		})
	}
	if out, _, _ := runMain(t, "dedup", "--help"); without > 0 && !strings.Contains(out, fmt.Sprintf("(%d with --announced-peers)", with)) {
		t.Errorf("dedup --help does not give the default with --announced-peers (%d):\n%s", with, out)
	}
}
