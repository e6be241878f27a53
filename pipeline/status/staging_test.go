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

// TestStagingListed: the staging folder a killed writer left (a killed
// dedup's can hold 100 MB) is listed by status, with the bytes it
// holds, in text, JSON and metrics, saying that the next writer removes
// it; and the next writer does. status used to say nothing of it.
func TestStagingListed(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	datasettest.CommitState(t, dir, schema.State{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}, 3)
	killed := filepath.Join(dir, "staging", "4242-0a0b0c0d0e0f")
	if err := os.MkdirAll(filepath.Join(killed, "state", "prefix=00"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, size := range map[string]int{filepath.Join(killed, ".owner"): 0, filepath.Join(killed, "state", "prefix=00", dataset.NewName(".parquet")): 7000} {
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Run(context.Background(), dir, now, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r.Print(&out)
	want := "staging (6.8 KiB: the files of a writer running now, or left by one that was killed; " +
		"the next dedup, plan-retries or merge removes a dead writer's):\n  " + killed + "\n"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("text lacks\n%s\n%s", want, out.String())
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Staging []string `json:"staging"`
		Bytes   int64    `json:"staging_bytes"`
	}
	if err := json.Unmarshal(b, &got); err != nil || !slices.Equal(got.Staging, []string{killed}) || got.Bytes != 7000 {
		t.Fatalf("JSON %s: %v", b, err)
	}
	if m := string(r.Metrics(time.Second, now, 0)); !strings.Contains(m, "\ninfohash_status_staging_bytes 7000\n") {
		t.Fatalf("metrics lack the staging bytes:\n%s", m)
	}
	// The next writer removes it (a folder is left alone for its first
	// minute: a writer may be setting it up).
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(killed, old, old); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	r, err = Run(context.Background(), dir, now, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	r.Print(&out)
	if b, _ := json.Marshal(r); strings.Contains(out.String(), "staging (") || !strings.Contains(string(b), `"staging":[]`) {
		t.Fatalf("after a writer's open:\n%s\n%s", out.String(), b)
	}
}
