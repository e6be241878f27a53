package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestExportMagnetCountsUnlinkableV2: export --format magnet leaves out a
// v2 hash known only by its 20-byte DHT key, and says so: a warning and
// unlinkable_v2 in the summary on stderr, unlinkable_v2 in --stats-json.
func TestExportMagnetCountsUnlinkableV2(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	v1, truncated := schema.Hash{0x01, 1}, schema.Hash{0xc0, 2}
	obs := filepath.Join(dir, "obs.parquet")
	w, err := rowio.Create[schema.Observation](obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).UnixMilli()
	if err := w.Write([]schema.Observation{
		{InfoHash: v1, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceImport},
		{InfoHash: truncated, HashType: schema.HashV2, ObservedAt: at, Source: schema.SourceImport},
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "dedup", "--data", data, obs)
	stats := filepath.Join(dir, "stats.json")
	r := ih(t, nil, "export", "--data", data, "--format", "magnet", "-o", "-", "--stats-json", stats)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if want := "magnet:?xt=urn:btih:" + schema.Hex(v1) + "\n"; string(r.stdout) != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	if !strings.Contains(r.stderr, "WARN") || !strings.Contains(r.stderr, "unlinkable_v2=1") {
		t.Errorf("stderr does not warn of the hash left out (unlinkable_v2=1):\n%s", r.stderr)
	}
	b, err := os.ReadFile(stats)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Rows         *int64 `json:"rows"`
		UnlinkableV2 *int64 `json:"unlinkable_v2"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Rows == nil || st.UnlinkableV2 == nil || *st.Rows != 1 || *st.UnlinkableV2 != 1 {
		t.Errorf("--stats-json %s (%v): want rows 1, unlinkable_v2 1", b, err)
	}
}
