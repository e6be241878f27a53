package app

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestExportJSONLRoundTripsThroughDedup: the output of export --format
// jsonl is an input dedup reads (its info_hash, or info_hash_v2 for a v2
// hash), so exporting one dataset and importing into another keeps the
// hashes and their types.
func TestExportJSONLRoundTripsThroughDedup(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	v1 := schema.Hash{0x01, 1}
	full := make([]byte, 32)
	full[0], full[31] = 0x02, 9
	var v2 schema.Hash
	copy(v2[:], full)
	obs := filepath.Join(dir, "obs.parquet")
	w, err := rowio.Create[schema.Observation](obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).UnixMilli()
	if err := w.Write([]schema.Observation{
		{InfoHash: v1, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceImport},
		{InfoHash: v2, InfoHashV2: full, HashType: schema.HashV2, ObservedAt: at, Source: schema.SourceImport},
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "dedup", "--data", src, obs)
	out := filepath.Join(dir, "ex.jsonl")
	mustRun(t, nil, "export", "--data", src, "--format", "jsonl", "-o", out)
	if r := ih(t, nil, "dedup", "--data", dst, out); r.code != 0 {
		t.Fatalf("dedup of export --format jsonl: exit %d\n%s", r.code, r.stderr)
	}
	a := ih(t, nil, "export", "--data", src, "--format", "magnet", "-o", "-")
	b := ih(t, nil, "export", "--data", dst, "--format", "magnet", "-o", "-")
	if string(a.stdout) != string(b.stdout) || len(a.stdout) == 0 {
		t.Errorf("magnets of the re-imported dataset:\n%s\nwant:\n%s", b.stdout, a.stdout)
	}
}
