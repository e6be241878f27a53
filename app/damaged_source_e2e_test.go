package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestWritersRefuseADamagedSource: one byte of a committed state file
// changed in place (same size) where no reader notices it (its full read
// decodes without an error): in a column chunk a splice copies byte for
// byte, in a column it re-encodes (a page header, which no page CRC
// covers), or in a statistic of its footer whose footer checksum the
// manifest recorded after the damage (as a migration to format 5 records
// a damaged footer's). dedup (splice of a hot file, thaw of a cold one)
// and merge (splice of either) must refuse it: exit 1, one line naming
// the file as damaged against its manifest's CRC-32C, nothing committed.
// They used to commit the damage under a new name with a new, valid
// checksum. An undamaged dataset is spliced as before.
func TestWritersRefuseADamagedSource(t *testing.T) {
	for _, place := range []struct {
		name   string
		damage func(t *testing.T, data, path, cmd string)
	}{
		{"undamaged", nil},
		// bad_metadata: neither dedup nor merge changes it on these
		// inputs, so a splice copies it.
		{"a copied chunk", func(t *testing.T, _, path, _ string) { flipUnnoticed(t, path, "bad_metadata") }},
		// What the command changes: a sighting seen_count, a failure
		// attempts.
		{"a re-encoded column", func(t *testing.T, _, path, cmd string) {
			flipUnnoticed(t, path, map[string]string{"dedup": "seen_count", "merge": "attempts"}[cmd])
		}},
		{"the footer", func(t *testing.T, data, path, _ string) {
			rows, err := statecol.ReadStateFile(rowio.UnrecordedFile(path))
			if err != nil {
				t.Fatal(err)
			}
			flipInFooterValue(t, path, schema.Hex(rows[0].InfoHash))
			recordFooter(t, data, path)
		}},
	} {
		for _, tier := range []string{schema.TierHot, schema.TierCold} {
			for _, cmd := range []string{"dedup", "merge"} {
				t.Run(place.name+"/"+tier+"/"+cmd, func(t *testing.T) {
					dir := t.TempDir()
					data := filepath.Join(dir, "ih")
					h, path := seedTiers(t, data, tier)
					if place.damage != nil {
						place.damage(t, data, path, cmd)
					}
					before := committed(t, data)
					now := "2026-03-02T00:00:00Z"
					var r cliRun
					if cmd == "dedup" {
						list := filepath.Join(dir, "one.txt")
						if err := os.WriteFile(list, []byte(schema.Hex(h)+"\n"), 0o644); err != nil {
							t.Fatal(err)
						}
						r = ih(t, nil, "dedup", "--data", data, "--far-now", "--now", now, list)
					} else {
						at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
						rs := fakeFetch([]schema.Job{{InfoHash: h, HashType: schema.HashV1, Attempt: 1}}, at)
						r = ih(t, resultsArrow(t, rs), "merge", "--data", data, "--far-now", "--now", now, "-")
					}
					if place.damage == nil {
						if r.code != 0 {
							t.Fatalf("%s: exit %d: %s", cmd, r.code, r.stderr)
						}
						if slicesContain(datasettest.Files(t, data, dataset.TableState, "aa"), path) {
							t.Fatalf("%s left %s as it was: no splice to check", cmd, path)
						}
						mustRun(t, nil, "status", "--data", data, "--verify")
						return
					}
					lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
					last := lines[len(lines)-1]
					if r.code != 1 || !strings.HasPrefix(last, "infohash: "+cmd) ||
						!strings.Contains(last, "dataset: "+path+": CRC-32C ") || !strings.Contains(last, "(the content changed): damaged") ||
						strings.Count(r.stderr, path) != 1 {
						t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1 and one line …dataset: %s: CRC-32C …: damaged", cmd, r.code, r.stderr, path)
					}
					sameTree(t, before, committed(t, data))
				})
			}
		}
	}
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// seedTiers makes the dataset at data with partition aa holding a hot
// file and a cold file (schedule.ColdFileName) of 5 hashes each, and
// returns a hash of the file of tier and that file's path.
func seedTiers(t *testing.T, data, tier string) (schema.Hash, string) {
	t.Helper()
	var list strings.Builder
	for i := range 10 {
		list.WriteString("aa" + strings.Repeat("0", 36) + string("0123456789"[i]) + "1\n")
	}
	p := filepath.Join(t.TempDir(), "seed.txt")
	if err := os.WriteFile(p, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", p)
	files := datasettest.Files(t, data, dataset.TableState, "aa")
	if len(files) != 1 {
		t.Fatalf("partition aa has %d files", len(files))
	}
	rows, err := statecol.ReadStateFile(rowio.UnrecordedFile(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	for i := 5; i < len(rows); i++ {
		rows[i].Tier = schema.TierCold
	}
	datasettest.CommitStateFiles(t, data, map[string][]datasettest.StateFile{
		"aa": {{Rows: rows[:5]}, {Name: schedule.ColdFileName(), Rows: rows[5:]}},
	})
	for _, f := range datasettest.Files(t, data, dataset.TableState, "aa") {
		if schedule.IsColdFile(filepath.Base(f)) == (tier == schema.TierCold) {
			if tier == schema.TierCold {
				return rows[5].InfoHash, f
			}
			return rows[0].InfoHash, f
		}
	}
	t.Fatal("no file of tier " + tier)
	return schema.Hash{}, ""
}

// flipUnnoticed flips one bit of the first byte of column col's chunk in
// the state file at path that a full read of the file does not notice
// (it decodes without an error): page data no reader of a copy decodes,
// or a page header's field no CRC covers.
func flipUnnoticed(t *testing.T, path, col string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	try := filepath.Join(t.TempDir(), "try.parquet")
	for _, c := range f.Metadata().RowGroups[0].Columns {
		if strings.Join(c.MetaData.PathInSchema, ".") != col {
			continue
		}
		start := c.MetaData.DataPageOffset
		if c.MetaData.DictionaryPageOffset != 0 {
			start = c.MetaData.DictionaryPageOffset
		}
		for off := start; off < start+c.MetaData.TotalCompressedSize; off++ {
			bad := bytes.Clone(b)
			bad[off] ^= 0x01
			if err := os.WriteFile(try, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := statecol.ReadStateFile(rowio.UnrecordedFile(try)); err == nil {
				if err := os.WriteFile(path, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
		t.Fatalf("%s: every byte of column %s's chunk flipped is noticed by a full read", path, col)
	}
	t.Fatalf("%s: no column %s", path, col)
}

// recordFooter records in the current manifest of the dataset at data
// the footer checksum of its file at path as it is now (its size and
// CRC-32C stay): as a migration to format 5, which reads each file's
// footer to record its checksum, records one damaged before.
func recordFooter(t *testing.T, data, path string) {
	t.Helper()
	setStateEntry(t, data, path, func(fi *dataset.FileInfo, _ []byte, sum rowio.FooterSum) {
		fi.FooterSize, fi.FooterCRC32C = sum.Size, sum.CRC32C
	})
}

// setStateEntry has set update the entry of the state file at path in
// the current manifest of the dataset at data, given the file's bytes and
// footer checksum as they are now, and writes the manifest back in
// place. It fails the test if the manifest has no entry for path.
func setStateEntry(t *testing.T, data, path string, set func(fi *dataset.FileInfo, b []byte, sum rowio.FooterSum)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := rowio.SumFooter(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile(filepath.Join(data, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(data, "manifests", strings.TrimSpace(string(cur)))
	mb, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	var m dataset.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	fs := m.Tables[dataset.TableState].Partitions[filepath.Base(filepath.Dir(path))[len("prefix="):]]
	found := false
	for i := range fs {
		if fs[i].Name == filepath.Base(path) {
			set(&fs[i], b, sum)
			found = true
		}
	}
	if !found {
		t.Fatalf("%s: not in the manifest", path)
	}
	if mb, err = json.Marshal(&m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mpath, mb, 0o644); err != nil {
		t.Fatal(err)
	}
}
