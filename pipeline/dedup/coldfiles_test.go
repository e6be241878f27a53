package dedup

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// Cold files (the archived tier) stay apart: untouched by a batch that
// does not see their hashes; written again without those it makes hot
// when it does.
func TestColdFilesStayApart(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	at := t0.UnixMilli()
	hot := schema.State{InfoHash: schema.Hash{0x42, 1}, HashType: 1, FirstSeen: at, LastSeen: at, SeenCount: 1, Tier: schema.TierHot, MetadataStatus: schema.StatusNew}
	cold1 := schema.State{InfoHash: schema.Hash{0x42, 2}, HashType: 1, FirstSeen: at, LastSeen: at, SeenCount: 1, Tier: schema.TierCold, MetadataStatus: schema.StatusFailed, Attempts: 6}
	cold2 := cold1
	cold2.InfoHash = schema.Hash{0x42, 3}
	tx, _ := d.Begin()
	hf, _ := dataset.WriteStaged(tx, dataset.TableState, "42", []schema.State{hot})
	cf, _ := dataset.WriteStagedAs(tx, dataset.TableState, "42", schedule.ColdFileName(), []schema.State{cold1, cold2})
	tx.SetPartition(dataset.TableState, "42", []dataset.FileInfo{hf, cf})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	// A kept file is linked into each snapshot under a name of its own:
	// it is told by its content's checksum.
	coldFiles := func() []dataset.FileInfo {
		m, _ := d.Current()
		var out []dataset.FileInfo
		for _, f := range m.Table(dataset.TableState).Partitions["42"] {
			if schedule.IsColdFile(f.Name) {
				out = append(out, f)
			}
		}
		return out
	}
	seen := func(h schema.Hash, d time.Duration) string {
		return writeObs(t, dir, []schema.Observation{{InfoHash: h, HashType: 1, ObservedAt: t0.Add(d).UnixMilli(), Source: schema.SourceGetPeers}})
	}
	// A sighting of the hot hash and a new one: the cold file is kept as is.
	if _, err := run(t, data, nil, seen(hot.InfoHash, time.Hour), seen(schema.Hash{0x42, 9}, time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := coldFiles(); len(got) != 1 || got[0].CRC32C != cf.CRC32C || got[0].Size != cf.Size {
		t.Fatalf("cold files after a hot-only batch: %+v, want [%+v]", got, cf)
	}
	hotFiles := func() map[uint32]bool {
		m, _ := d.Current()
		out := map[uint32]bool{}
		for _, f := range m.Table(dataset.TableState).Partitions["42"] {
			if !schedule.IsColdFile(f.Name) {
				out[f.CRC32C] = true
			}
		}
		return out
	}
	before := hotFiles()
	// A sighting of cold1: it is reactivated into a hot file, cold2 stays
	// cold; only the cold file is written again (thaw), the hot files are
	// kept as they were (no compaction).
	react := func(o *Options) {
		o.Reactivate = func(s *schema.State, at, _ int64) bool { s.Tier = schema.TierHot; return true }
	}
	if _, err := run(t, data, react, seen(cold1.InfoHash, 2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := coldFiles()
	if len(got) != 1 || got[0].CRC32C == cf.CRC32C || got[0].Rows != 1 {
		t.Fatalf("cold files after a cold sighting: %+v", got)
	}
	after := hotFiles()
	for crc := range before {
		if !after[crc] {
			t.Fatalf("a hot file was written again by a batch that sighted only a cold hash: %v -> %v", before, after)
		}
	}
	if len(after) != len(before)+1 {
		t.Fatalf("hot files %v -> %v: want one more (the thawed hash)", before, after)
	}
	st := readState(t, data)
	if len(st) != 4 || st[cold1.InfoHash].Tier != schema.TierHot || st[cold2.InfoHash].Tier != schema.TierCold || st[cold1.InfoHash].SeenCount != 2 {
		t.Fatalf("state %+v", st)
	}
	// A sighting of the last cold hash leaves no cold file.
	if _, err := run(t, data, react, seen(cold2.InfoHash, 3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := coldFiles(); len(got) != 0 {
		t.Fatalf("cold files after every cold hash was sighted: %+v", got)
	}
	if st := readState(t, data); len(st) != 4 || st[cold2.InfoHash].Tier != schema.TierHot || st[cold2.InfoHash].SeenCount != 2 {
		t.Fatalf("state %+v", st)
	}
}
