package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// sampleManifest is a manifest as a commit of snapshot 1 writes it: every
// table, state with rows and a Bloom filter in partition 00.
func sampleManifest() *Manifest {
	file := func(name string, rows int64) []FileInfo {
		return []FileInfo{{Name: name, Rows: rows, Size: 300, CRC32C: 7, FooterSize: 120, FooterCRC32C: 9}}
	}
	m := &Manifest{FormatVersion: FormatVersion, Snapshot: 1, Writer: "dedup", DatasetID: "00000000000000a1",
		Folder: &FolderID{Dev: 2049, Ino: 131073}, AncestorIDs: []string{"00000000000000a0"},
		AncestorPasses: map[string][]string{"00000000000000a0": {"00000000000000b1"}}, Tables: map[string]*Table{
			TableState: {Dir: "state/v/000000000001", Partitions: map[string][]FileInfo{"00": file("part-00000000000000aa.parquet", 3)},
				Blooms: map[string]FileInfo{"00": {Name: "part-00000000000000ab.bloom", Rows: 3, Size: 64, Capacity: 100}}},
			TableTorrents: {Dir: "torrents/v/000000000001", Partitions: map[string][]FileInfo{"00": file("part-00000000000000ac.parquet", 0)}},
		}}
	for _, name := range []string{TablePeers, TableLeases, TableLedger} {
		m.Tables[name] = &Table{Dir: name + "/v/000000000001", Partitions: map[string][]FileInfo{"": file("part-00000000000000ad.parquet", 0)}}
	}
	return m
}

// manifestSeeds are the JSON of sampleManifest and of each of
// manifestEdits applied to it: the manifest fuzz targets' seeds.
func manifestSeeds(f *testing.F) (good []byte, edited [][]byte) {
	good, err := json.Marshal(sampleManifest())
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range manifestEdits {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			f.Fatal(err)
		}
		e.edit(m)
		b, err := json.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		edited = append(edited, b)
	}
	return good, edited
}

// FuzzReadManifest: no manifest makes parsing panic or fail with more
// than one line, and a manifest it accepts is safe to use: every table
// and partition list there, every file a plain name inside its table's
// snapshot directory under DIR, no negative count, the cold sweep's
// cursor a state partition, no ledger inline in format 4, and it writes
// back as a manifest that reads the same.
func FuzzReadManifest(f *testing.F) {
	good, edited := manifestSeeds(f)
	f.Add(good)
	for _, b := range edited {
		f.Add(b)
		f.Add([]byte(strings.Replace(string(b), fmt.Sprintf(`"format_version":%d`, FormatVersion), `"format_version":3`, 1)))
	}
	f.Add([]byte(`{"format_version":3,"snapshot":1,"tables":{"state":{"dir":"state/v/000000000001","partitions":{}}},"applied":[{"id":"x"}]}`))
	f.Add([]byte(`{"format_version":4,"snapshot":0,"tables":{}}`))
	f.Add([]byte(`{"format_version":5,"snapshot":0,"tables":{}}`))
	const path = "D/manifests/000000000001.json"
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseManifest(path, b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if m.FormatVersion < 1 || m.FormatVersion > FormatVersion || m.Snapshot != 1 {
			t.Fatalf("accepted format %d snapshot %d", m.FormatVersion, m.Snapshot)
		}
		for _, name := range tableNames {
			tb, ok := m.Tables[name]
			if !ok {
				continue
			}
			if tb == nil || tb.Partitions == nil {
				t.Fatalf("accepted table %s as %+v", name, tb)
			}
			if tb.Dir != filepath.Join(name, "v", "000000000001") {
				t.Fatalf("accepted table %s in %q", name, tb.Dir)
			}
			for key, fs := range tb.Partitions {
				if len(fs) == 0 {
					t.Fatalf("accepted table %s partition %q without files", name, key)
				}
				for _, fi := range fs {
					inside(t, tb.PartitionDir(key), filepath.Join(tb.PartitionDir(key), fi.Name))
					if fi.Rows < 0 || fi.Size < 0 {
						t.Fatalf("accepted %+v", fi)
					}
				}
			}
			for _, fi := range tb.Blooms {
				inside(t, filepath.Join(tb.Dir, "_bloom"), tb.BloomPath(fi))
			}
			_, _ = tb.Rows(), tb.PartitionKeys()
		}
		if c, ok := m.Cursors[CursorColdSweep]; ok && (c < 0 || c > 255) {
			t.Fatalf("accepted cold sweep cursor %d", c)
		}
		if m.FormatVersion >= 4 && len(m.Applied) > 0 {
			t.Fatalf("accepted a format %d manifest with %d ledger entries inline", m.FormatVersion, len(m.Applied))
		}
		_ = m.LedgerLen()
		again, err := json.Marshal(m.clone())
		if err != nil {
			return // a time json cannot write (year 10000)
		}
		if _, err := parseManifest(path, again); err != nil {
			t.Fatalf("accepted %s, but not itself written back: %v", b, err)
		}
	})
}

// inside fails t unless rel is a plain file name in dir, under DIR.
func inside(t *testing.T, dir, rel string) {
	t.Helper()
	if !filepath.IsLocal(rel) || filepath.Dir(rel) != dir || strings.HasPrefix(filepath.Base(rel), ".") {
		t.Fatalf("accepted file %q in %q", rel, dir)
	}
}

// TestSampleManifest: the fuzz target's seed is a manifest a commit
// writes, and one a commit made reads.
func TestSampleManifest(t *testing.T) {
	b, _ := json.Marshal(sampleManifest())
	if _, err := parseManifest("D/manifests/000000000001.json", b); err != nil {
		t.Fatal(err)
	}
	d := openNew(t)
	defer d.Close()
	commitRows(t, d, "ab", []schema.State{{InfoHash: schema.Hash{0xab}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
	r, err := OpenReadOnly(d.Dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	w, err := Open(context.Background(), d.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}
