package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// manifestEdits are damages a manifest may take that still parse as
// JSON, each with what the error says of it. Each edit gets the manifest
// of a dataset whose state has rows in partition 00 and a Bloom filter,
// as a JSON object.
var manifestEdits = []struct {
	name string
	edit func(m map[string]any)
	want string
}{
	{"state null", setTable("state", nil), "table state is null"},
	{"dataset_id missing", func(m map[string]any) { delete(m, "dataset_id") }, `dataset_id "" is not 16 lowercase hex digits`},
	{"dataset_id short", func(m map[string]any) { m["dataset_id"] = "00a1" }, `dataset_id "00a1" is not 16 lowercase hex digits`},
	{"dataset_id upper case", func(m map[string]any) { m["dataset_id"] = "00000000000000A1" }, `dataset_id "00000000000000A1" is not 16 lowercase hex digits`},
	{"folder missing", func(m map[string]any) { delete(m, "folder") }, "no folder (every commit of format 9 records it)"},
	{"ancestor short", func(m map[string]any) { m["ancestor_ids"] = []any{"00a1"} }, `ancestor_ids[0] "00a1" is not 16 lowercase hex digits`},
	{"ancestor twice", func(m map[string]any) {
		m["ancestor_ids"] = []any{"00000000000000a2", "00000000000000a2"}
	}, "ancestor_ids[1] 00000000000000a2 is named twice"},
	{"ancestor is the dataset", func(m map[string]any) {
		m["dataset_id"], m["ancestor_ids"] = "00000000000000a1", []any{"00000000000000a1"}
	}, "ancestor_ids[0] 00000000000000a1 is the dataset's own id"},
	{"ancestors too many", func(m map[string]any) {
		m["ancestor_ids"] = []any{"00000000000000a1", "00000000000000a2", "00000000000000a3", "00000000000000a4",
			"00000000000000a5", "00000000000000a6", "00000000000000a7", "00000000000000a8", "00000000000000a9"}
	}, "ancestor_ids: 9, more than 8"},
	{"passes of no ancestor", func(m map[string]any) {
		m["ancestor_ids"], m["ancestor_passes"] = []any{"00000000000000a2"}, map[string]any{"00000000000000a3": []any{}}
	}, `ancestor_passes: "00000000000000a3" is not one of ancestor_ids`},
	{"pass short", func(m map[string]any) {
		m["ancestor_ids"], m["ancestor_passes"] = []any{"00000000000000a2"}, map[string]any{"00000000000000a2": []any{"0b1"}}
	}, `ancestor_passes[00000000000000a2][0] "0b1" is not 16 lowercase hex digits`},
	{"passes unsorted", func(m map[string]any) {
		m["ancestor_ids"] = []any{"00000000000000a2"}
		m["ancestor_passes"] = map[string]any{"00000000000000a2": []any{"00000000000000b2", "00000000000000b1"}}
	}, "ancestor_passes[00000000000000a2][1] 00000000000000b1 is not after the pass before it (sorted, each once)"},
	{"pass twice", func(m map[string]any) {
		m["ancestor_ids"] = []any{"00000000000000a2"}
		m["ancestor_passes"] = map[string]any{"00000000000000a2": []any{"00000000000000b1", "00000000000000b1"}}
	}, "ancestor_passes[00000000000000a2][1] 00000000000000b1 is not after the pass before it (sorted, each once)"},
	{"passes too many", func(m map[string]any) {
		passes := make([]any, MaxAncestorPasses+1)
		for i := range passes {
			passes[i] = fmt.Sprintf("%016x", i)
		}
		m["ancestor_ids"], m["ancestor_passes"] = []any{"00000000000000a2"}, map[string]any{"00000000000000a2": passes}
	}, "ancestor_passes[00000000000000a2]: 65 passes, more than 64"},
	{"passes in format 10", func(m map[string]any) {
		m["format_version"], m["ancestor_ids"] = 10, []any{"00000000000000a2"}
		m["ancestor_passes"] = map[string]any{"00000000000000a2": []any{}}
	}, "ancestor_passes in a manifest of format 10 (from 11 on)"},
	{"torrents null", setTable("torrents", nil), "table torrents is null"},
	{"dataset_id missing", func(m map[string]any) { delete(m, "dataset_id") }, `dataset_id "" is not 16 lowercase hex digits`},
	{"dataset_id short", func(m map[string]any) { m["dataset_id"] = "00a1" }, `dataset_id "00a1" is not 16 lowercase hex digits`},
	{"dataset_id upper case", func(m map[string]any) { m["dataset_id"] = "00000000000000A1" }, `dataset_id "00000000000000A1" is not 16 lowercase hex digits`},
	{"peers null", setTable("peers", nil), "table peers is null"},
	{"leases null", setTable("leases", nil), "table leases is null"},
	{"ledger null", setTable("ledger", nil), "table ledger is null"},
	{"ledger missing", func(m map[string]any) { delete(m["tables"].(map[string]any), "ledger") }, "table ledger is missing"},
	{"tables null", func(m map[string]any) { m["tables"] = nil }, "table state is missing"},
	{"partitions missing", func(m map[string]any) { delete(jsonTable(m, "state"), "partitions") }, "table state: no partitions (missing or null)"},
	{"partitions null", setField("state", "partitions", nil), "table state: no partitions (missing or null)"},
	{"partitions empty", setField("state", "partitions", map[string]any{}), "table state: no files (a committed table has at least one)"},
	{"partition null", setPartition("state", "00", nil), `table state: partition "00" has no files`},
	{"partition empty", setPartition("state", "00", []any{}), `table state: partition "00" has no files`},
	{"dir outside", setField("state", "dir", "../../.."), `table state: dir "../../.." is not state/v/NNNNNNNNNNNN`},
	{"dir absolute", setField("state", "dir", "/tmp"), `table state: dir "/tmp" is not state/v/NNNNNNNNNNNN`},
	{"dir of another table", setField("state", "dir", "torrents/v/000000000001"), `table state: dir "torrents/v/000000000001" is not state/v/NNNNNNNNNNNN`},
	{"dir short number", setField("state", "dir", "state/v/1"), `table state: dir "state/v/1" is not state/v/NNNNNNNNNNNN`},
	{"dir of a later snapshot", setField("state", "dir", "state/v/000000000002"), "table state: dir state/v/000000000002 is of snapshot 2, after this one"},
	{"key not hex", renamePartition("state", "00", "zz"), `table state: partition key "zz" is not two lowercase hex digits`},
	{"key upper case", renamePartition("state", "00", "0A"), `table state: partition key "0A" is not two lowercase hex digits`},
	{"key in an unpartitioned table", renamePartition("ledger", "", "00"), `table ledger: partition key "00" in a table that has only the partition ""`},
	{"no key in a partitioned table", renamePartition("state", "00", ""), `table state: partition key "" is not two lowercase hex digits`},
	{"file name with a path", setFile("state", "00", "name", "../../x.parquet"), `table state: partition "00": file name "../../x.parquet" is not a plain name ending in .parquet`},
	{"file name hidden", setFile("state", "00", "name", ".x.parquet"), `table state: partition "00": file name ".x.parquet" is not a plain name ending in .parquet`},
	{"file name not parquet", setFile("state", "00", "name", "part-1.csv"), `table state: partition "00": file name "part-1.csv" is not a plain name ending in .parquet`},
	{"file name empty", setFile("state", "00", "name", ""), `table state: partition "00": file name "" is not a plain name ending in .parquet`},
	{"file listed twice", func(m map[string]any) {
		p := jsonTable(m, "state")["partitions"].(map[string]any)
		p["00"] = append(p["00"].([]any), p["00"].([]any)[0])
	}, `table state: partition "00": file FILE is listed twice`},
	{"negative rows", setFile("state", "00", "rows", -1), `table state: partition "00": file FILE: rows -1`},
	{"negative size", setFile("state", "00", "size", -5), `table state: partition "00": file FILE: size -5`},
	{"no footer checksum", func(m map[string]any) {
		delete(jsonTable(m, "state")["partitions"].(map[string]any)["00"].([]any)[0].(map[string]any), "footer_size")
	}, `table state: partition "00": file FILE: no footer checksum (footer_size)`},
	{"footer larger than the file", func(m map[string]any) {
		setFile("state", "00", "size", 50)(m)
		setFile("state", "00", "footer_size", 47)(m)
	}, `table state: partition "00": file FILE: footer_size 47 in a file of 50 bytes`},
	{"footer too short", func(m map[string]any) {
		setFile("state", "00", "size", 50)(m)
		setFile("state", "00", "footer_size", 8)(m)
	}, `table state: partition "00": file FILE: footer_size 8 in a file of 50 bytes`},
	{"footer checksum of a Bloom filter", func(m map[string]any) {
		jsonTable(m, "state")["blooms"].(map[string]any)["00"].(map[string]any)["footer_size"] = 10
	}, `table state: Bloom filter of partition "00": file part-1.bloom: a footer checksum (Bloom filters have no footer)`},
	{"Bloom key not hex", func(m map[string]any) {
		b := jsonTable(m, "state")["blooms"].(map[string]any)
		b["g0"] = b["00"]
		delete(b, "00")
	}, `table state: Bloom filter: partition key "g0" is not two lowercase hex digits`},
	{"Bloom name with a path", func(m map[string]any) {
		jsonTable(m, "state")["blooms"].(map[string]any)["00"].(map[string]any)["name"] = "../x.bloom"
	}, `table state: Bloom filter of partition "00": file name "../x.bloom" is not a plain name ending in .bloom`},
	{"cold sweep cursor over 255", setCursor(CursorColdSweep, 9999), "cursor cold_sweep is 9999, not a state partition (0-255)"},
	{"cold sweep cursor 256", setCursor(CursorColdSweep, 256), "cursor cold_sweep is 256, not a state partition (0-255)"},
	{"cold sweep cursor negative", setCursor(CursorColdSweep, -1), "cursor cold_sweep is -1, not a state partition (0-255)"},
	{"inline ledger in format 4", func(m map[string]any) {
		m["applied"] = []any{map[string]any{"id": "a1", "name": "in.txt", "rows": 1, "at": "2026-02-01T00:00:00Z"}}
	}, "applied: ledger entries inline (1), which format 4 keeps in table ledger"},
	{"inline ledger entry without an id", func(m map[string]any) {
		m["format_version"] = 3
		m["applied"] = []any{map[string]any{"id": "a1", "name": "a.txt", "rows": 1, "at": "2026-02-01T00:00:00Z"},
			map[string]any{"id": "", "name": "in.txt", "rows": 1, "at": "2026-02-01T00:00:00Z"}}
	}, `applied: entry 1 ("in.txt") has no id`},
	{"inline ledger entry with negative rows", func(m map[string]any) {
		m["format_version"] = 3
		m["applied"] = []any{map[string]any{"id": "a1", "name": "in.txt", "rows": -1, "at": "2026-02-01T00:00:00Z"}}
	}, `applied: entry 0 ("in.txt") has -1 rows`},
}

func setCursor(name string, v int64) func(map[string]any) {
	return func(m map[string]any) { m["cursors"] = map[string]any{name: v} }
}

// asFormat makes m, a manifest of this build's format as JSON, one of
// format v as its writers wrote it: before FooterFormat, without footer
// checksums.
func asFormat(m map[string]any, v int) {
	m["format_version"] = v
	if v >= FooterFormat {
		return
	}
	for _, tb := range m["tables"].(map[string]any) {
		for _, fs := range tb.(map[string]any)["partitions"].(map[string]any) {
			for _, f := range fs.([]any) {
				delete(f.(map[string]any), "footer_size")
				delete(f.(map[string]any), "footer_crc32c")
			}
		}
	}
}

func jsonTable(m map[string]any, name string) map[string]any {
	return m["tables"].(map[string]any)[name].(map[string]any)
}

func setTable(name string, v any) func(map[string]any) {
	return func(m map[string]any) { m["tables"].(map[string]any)[name] = v }
}

func setField(name, field string, v any) func(map[string]any) {
	return func(m map[string]any) { jsonTable(m, name)[field] = v }
}

func setPartition(name, key string, v any) func(map[string]any) {
	return func(m map[string]any) { jsonTable(m, name)["partitions"].(map[string]any)[key] = v }
}

func renamePartition(name, from, to string) func(map[string]any) {
	return func(m map[string]any) {
		p := jsonTable(m, name)["partitions"].(map[string]any)
		p[to] = p[from]
		delete(p, from)
	}
}

func setFile(name, key, field string, v any) func(map[string]any) {
	return func(m map[string]any) {
		jsonTable(m, name)["partitions"].(map[string]any)[key].([]any)[0].(map[string]any)[field] = v
	}
}

// damagedDataset makes a dataset of one commit (state rows and a Bloom
// filter in partition 00), applies edit to its manifest and returns the
// dataset's folder, the manifest's path and the name of the first state
// file.
func damagedDataset(t *testing.T, edit func(map[string]any)) (dir, path, file string) {
	t.Helper()
	d := openNew(t)
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	info, err := WriteStaged(tx, TableState, "00", []schema.State{{InfoHash: schema.Hash{0}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableState, "00", []FileInfo{info})
	p, err := tx.StagePath(TableState, "00", "part-1.bloom")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("bloom"), 0o644); err != nil {
		t.Fatal(err)
	}
	bi, err := tx.Stage(TableState, "00", "part-1.bloom", 1)
	if err != nil {
		t.Fatal(err)
	}
	tx.SetBloom(TableState, "00", bi)
	cm, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(d.Dir, "manifests", manifestName(cm.Snapshot))
	editManifest(t, path, edit)
	return d.Dir, path, info.Name
}

// editManifest rewrites the manifest at path through edit.
func editManifest(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestManifestDamage: a manifest a writer would never leave stops every
// way into the dataset (a reader's, a writer's) with one error, "dataset:
// PATH: corrupt manifest: WHAT" (exit 1, a damaged dataset, not bad
// input), before anything under DIR changes.
func TestManifestDamage(t *testing.T) {
	for _, c := range manifestEdits {
		t.Run(c.name, func(t *testing.T) {
			dir, path, file := damagedDataset(t, c.edit)
			want := "dataset: " + path + ": corrupt manifest: " + strings.ReplaceAll(c.want, "FILE", file)
			before := fsutiltest.Tree(t, dir)
			for _, open := range []struct {
				name string
				open func() (*Dataset, error)
			}{
				{"OpenReadOnly", func() (*Dataset, error) { return OpenReadOnly(dir) }},
				{"Open", func() (*Dataset, error) { return Open(context.Background(), dir, OpenOptions{}) }},
			} {
				d, err := open.open()
				if err == nil {
					d.Close()
					t.Fatalf("%s opened it", open.name)
				}
				if err.Error() != want || exitcode.Of(err) != exitcode.Error {
					t.Errorf("%s: %v (exit %d), want %s (exit 1)", open.name, err, exitcode.Of(err), want)
				}
			}
			sameTree(t, before, fsutiltest.Tree(t, dir))
		})
	}
}

func sameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, s := range after {
		if before[p] != s {
			t.Errorf("%s: %q, was %q", p, s, before[p])
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s removed", p)
		}
	}
}

// TestOlderFormatsNeedNoTable: a format 3 manifest may lack tables and
// have a table without partitions (its writers made a table when
// something first went in it), but what it has is checked as in format 4.
func TestOlderFormatsNeedNoTable(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		want string // "" for readable
	}{
		{"no ledger", func(m map[string]any) { delete(m["tables"].(map[string]any), "ledger") }, ""},
		{"no tables", func(m map[string]any) { m["tables"] = nil }, ""},
		{"state without partitions", setField("state", "partitions", map[string]any{}), ""},
		{"state null", setTable("state", nil), "table state is null"},
		{"misspelt table", func(m map[string]any) {
			ts := m["tables"].(map[string]any)
			ts["statE"] = ts["state"]
			delete(ts, "state")
		}, `unknown table "statE"`},
		{"partitions null", setField("state", "partitions", nil), "table state: no partitions (missing or null)"},
		{"dir outside", setField("state", "dir", "../../.."), `table state: dir "../../.." is not state/v/NNNNNNNNNNNN`},
	} {
		t.Run(c.name, func(t *testing.T) { openAsFormat(t, 3, c.edit, c.want) })
	}
}

// openAsFormat checks that a dataset whose manifest is made one of
// format version, then edited, opens (want "") or is refused as a
// corrupt manifest for want.
func openAsFormat(t *testing.T, version int, edit func(map[string]any), want string) {
	t.Helper()
	dir, path, _ := damagedDataset(t, func(m map[string]any) {
		asFormat(m, version)
		edit(m)
	})
	d, err := OpenReadOnly(dir)
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		return
	}
	if want := "dataset: " + path + ": corrupt manifest: " + want; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// TestCurrentNamesAMissingManifest: the error says that CURRENT names it.
func TestCurrentNamesAMissingManifest(t *testing.T) {
	d := openNew(t)
	d.Close()
	if err := os.WriteFile(filepath.Join(d.Dir, "CURRENT"), []byte(manifestName(99)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenReadOnly(d.Dir)
	want := "dataset: " + d.Dir + "/CURRENT names manifest 000000000099.json, which does not exist"
	if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Error {
		t.Fatalf("got %v, want %s (exit 1)", err, want)
	}
}

// TestGCKeepsWhatADamagedManifestNames: a kept manifest that readers
// refuse still keeps the directories it names from gc.
func TestGCKeepsWhatADamagedManifestNames(t *testing.T) {
	d := openNew(t)
	defer d.Close()
	m1 := commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0}, HashType: 1, SeenCount: 2, MetadataStatus: "new", Tier: "hot"}})
	editManifest(t, d.Path("manifests", manifestName(m1.Snapshot)), func(m map[string]any) {
		delete(m["tables"].(map[string]any), "ledger")
	})
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0}, HashType: 1, SeenCount: 3, MetadataStatus: "new", Tier: "hot"}}) // keeps 3
	if _, err := os.Stat(d.Path(m1.Table(TableState).Dir)); err != nil {
		t.Fatalf("gc removed the state of kept snapshot %d: %v", m1.Snapshot, err)
	}
}

// TestCommitPublishesNoManifestReadersRefuse: a transaction that would
// leave a manifest readers refuse (here a file name no writer makes)
// fails its commit, and the dataset stays at its snapshot.
func TestCommitPublishesNoManifestReadersRefuse(t *testing.T) {
	d := openNew(t)
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	info, err := WriteStagedAs(tx, TableState, "00", "rows.bin", []schema.State{{InfoHash: schema.Hash{0}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableState, "00", []FileInfo{info})
	_, err = tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	want := "dataset: " + d.Dir + `: publishing snapshot 1: table state: partition "00": file name "rows.bin" is not a plain name ending in .parquet`
	if err == nil || err.Error() != want {
		t.Fatalf("commit: %v, want %s", err, want)
	}
	if m, err := d.Current(); err != nil || m.Snapshot != 0 {
		t.Fatalf("after the failed commit: %+v, %v", m, err)
	}
}

// TestFormat4BeforeEveryTableKeptAFile: format 4 predates the rule that a
// commit leaves every table a file. A snapshot an earlier build committed
// lacks torrents, leases or peers, or has them without partitions, and
// stays readable; the state and the ledger it always had are required.
func TestFormat4BeforeEveryTableKeptAFile(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		want string // "" for readable
	}{
		{"no torrents", func(m map[string]any) { delete(m["tables"].(map[string]any), "torrents") }, ""},
		{"no leases", func(m map[string]any) { delete(m["tables"].(map[string]any), "leases") }, ""},
		{"peers empty", setField("peers", "partitions", map[string]any{}), ""},
		{"leases empty", setField("leases", "partitions", map[string]any{}), ""},
		{"no ledger", func(m map[string]any) { delete(m["tables"].(map[string]any), "ledger") }, "table ledger is missing"},
		{"state empty", setField("state", "partitions", map[string]any{}), "table state: no files (a committed table has at least one)"},
		{"leases null", setField("leases", "partitions", nil), "table leases: no partitions (missing or null)"},
	} {
		t.Run(c.name, func(t *testing.T) { openAsFormat(t, 4, c.edit, c.want) })
	}
}

// TestManifestWithinItsFormat: what the checks refuse in format 4 has
// values its writers do leave, which read. The cold sweep's cursor takes
// every state partition; format 3 kept its whole ledger in the manifest
// (Manifest.Applied), which the readers find there until the migration
// moves it.
func TestManifestWithinItsFormat(t *testing.T) {
	applied := func(m map[string]any) {
		m["format_version"] = 3
		m["applied"] = []any{map[string]any{"id": "a1", "name": "in.txt", "rows": 1, "at": "2026-02-01T00:00:00Z"}}
	}
	for _, c := range []struct {
		name    string
		edit    func(map[string]any)
		cursor  int64
		ledgers int64
	}{
		{"cold sweep at the first partition", setCursor(CursorColdSweep, 0), 0, 0},
		{"cold sweep at the last partition", setCursor(CursorColdSweep, 255), 255, 0},
		{"inline ledger in format 3", applied, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _, _ := damagedDataset(t, c.edit)
			d, err := OpenReadOnly(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			m, err := d.Current()
			if err != nil {
				t.Fatal(err)
			}
			if m.Cursor(CursorColdSweep) != c.cursor || m.LedgerLen() != c.ledgers {
				t.Fatalf("cursor %d, ledger of %d; want %d and %d", m.Cursor(CursorColdSweep), m.LedgerLen(), c.cursor, c.ledgers)
			}
		})
	}
}
