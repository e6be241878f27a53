package status

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestUnpublishedListed: what a commit killed before its commit point
// left (its snapshot directory and manifest, numbered above CURRENT's
// snapshot) holds space that nothing else names: status lists it, with
// the bytes it holds, with and without --verify, in text and JSON, and
// says that the next writer removes it.
func TestUnpublishedListed(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		verify bool
	}{
		{"status", false},
		{"status --verify", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			datasettest.CommitState(t, dir, schema.State{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}, 3)
			r, err := Run(context.Background(), dir, now, Options{Verify: tt.verify})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Unpublished) != 0 || r.UnpublishedBytes != 0 {
				t.Fatalf("a clean dataset: unpublished %v, %d bytes", r.Unpublished, r.UnpublishedBytes)
			}
			manifest := filepath.Join(dir, "manifests", "000000000002.json")
			snapDir := filepath.Join(dir, "state", "v", "000000000002")
			if err := os.MkdirAll(filepath.Join(snapDir, "prefix=00"), 0o755); err != nil {
				t.Fatal(err)
			}
			for p, size := range map[string]int{manifest: 100, filepath.Join(snapDir, "prefix=00", dataset.NewName(".parquet")): 5000} {
				if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err = Run(context.Background(), dir, now, Options{Verify: tt.verify})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Unpublished, []string{manifest, snapDir}) || r.UnpublishedBytes != 5100 {
				t.Fatalf("unpublished %v, %d bytes; want the manifest and state directory of snapshot 2, 5100 bytes", r.Unpublished, r.UnpublishedBytes)
			}
			if r.Snapshot != 1 || (tt.verify && len(r.Verified.Problems) > 0) {
				t.Fatalf("snapshot %d, verified %+v", r.Snapshot, r.Verified)
			}
			var out bytes.Buffer
			r.Print(&out)
			want := "unpublished (above snapshot 1, 5.0 KiB: left by a commit that failed or was killed before CURRENT named them, " +
				"or being built by one now; the next dedup, plan-retries or merge removes them):\n  " + manifest + "\n  " + snapDir + "\n"
			if !strings.Contains(out.String(), want) {
				t.Fatalf("text lacks\n%s\n%s", want, out.String())
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Unpublished []string `json:"unpublished"`
				Bytes       int64    `json:"unpublished_bytes"`
			}
			if err := json.Unmarshal(b, &got); err != nil || len(got.Unpublished) != 2 || got.Bytes != 5100 {
				t.Fatalf("JSON %s: %v", b, err)
			}
			if m := string(r.Metrics(time.Second, now, 0)); !strings.Contains(m, "\ninfohash_status_unpublished_bytes 5100\n") {
				t.Fatalf("metrics lack the unpublished bytes:\n%s", m)
			}
			// The next writer removes them.
			if _, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{}); err != nil {
				t.Fatal(err)
			}
			if r, err = Run(context.Background(), dir, now, Options{Verify: tt.verify}); err != nil || len(r.Unpublished) != 0 {
				t.Fatalf("after a writer's open: unpublished %v, %v", r.Unpublished, err)
			}
		})
	}
}
