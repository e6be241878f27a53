package app

import (
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// stateFileOf is the path of the state file holding the hash hex in the
// current snapshot of the dataset at data (one file a partition).
func stateFileOf(t *testing.T, data, hex string) string {
	t.Helper()
	files := datasettest.Files(t, data, dataset.TableState, hex[:2])
	if len(files) != 1 {
		t.Fatalf("partition %s has %d files", hex[:2], len(files))
	}
	return files[0]
}

// rewriteState rewrites the state file at path of the dataset at data
// with parquet-go's writer (which checks no value), after set changed its
// rows, and records the new file in the current manifest: as a writer
// that wrote those values would have committed it.
func rewriteState(t *testing.T, data, path string, set func([]schema.State)) {
	t.Helper()
	rows, err := statecol.ReadStateFile(rowio.UnrecordedFile(path))
	if err != nil {
		t.Fatal(err)
	}
	set(rows)
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	setStateEntry(t, data, path, func(fi *dataset.FileInfo, b []byte, sum rowio.FooterSum) {
		fi.Size, fi.CRC32C = int64(len(b)), crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
		fi.FooterSize, fi.FooterCRC32C = sum.Size, sum.CRC32C
	})
}

// TestDamagedStateStopsEveryCommand: a state file whose footer lost a
// column to one flipped bit, or that holds a hash_type or tier no writer
// gives, stops every command that reads it: exit 1, one line naming the
// file, nothing committed. export used to write hash_type 0 for its rows
// and exit 0, and dedup to commit those zeros into a new snapshot that
// status --verify then found intact. (status reads no hash_type: a value
// there is for the commands that read it, and for --verify's CRC.)
func TestDamagedStateStopsEveryCommand(t *testing.T) {
	for _, dmg := range []struct {
		name       string
		damage     func(t *testing.T, data, path string)
		want       string
		statusSees bool
	}{
		// The footer's checksum in the manifest catches these first
		// (the column checks did before).
		{"hash_type renamed in the footer", func(t *testing.T, _, p string) { datasettest.RenameInFooter(t, p, "hash_type", 0) },
			"footer CRC-32C ", true},
		{"last_source renamed in the footer", func(t *testing.T, _, p string) { datasettest.RenameInFooter(t, p, "last_source", 0) },
			"footer CRC-32C ", true},
		{"a hash_type of 0", func(t *testing.T, data, p string) {
			rewriteState(t, data, p, func(r []schema.State) { r[0].HashType = 0 })
		}, "corrupt Parquet state file: row 1: hash_type 0, want 1 or 2", false},
		{"an unknown tier", func(t *testing.T, data, p string) {
			rewriteState(t, data, p, func(r []schema.State) { r[0].Tier = "warm" })
		}, `corrupt Parquet state file: row 1: tier "warm", want hot or cold`, true},
	} {
		t.Run(dmg.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ih")
			hs := seedHashes(t, data, 20, 11)
			path := stateFileOf(t, data, hs[0])
			dmg.damage(t, data, path)
			list := filepath.Join(dir, "one.txt")
			if err := os.WriteFile(list, []byte(hs[0]+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(dir, "other")
			before := committed(t, data)
			for _, args := range [][]string{
				{"export", "--data", data, "--table", "state", "--format", "csv", "-o", "-"},
				{"export", "--data", data, "--table", "catalog", "-o", filepath.Join(dir, "catalog.parquet")},
				{"status", "--data", data},
				{"status", "--data", data, "--format", "json"},
				{"dedup", "--data", data, "--far-now", "--now", "2026-03-02T00:00:00Z", list},
				{"plan-retries", "--data", data, "--far-now", "--now", "2026-03-02T00:00:00Z", "-o", filepath.Join(dir, "jobs.parquet")},
				{"merge", "--data", other, "--from", data},
			} {
				r := ih(t, nil, args...)
				if args[0] == "status" && !dmg.statusSees {
					if r.code != 0 {
						t.Errorf("%s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
					}
					continue
				}
				lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
				last := lines[len(lines)-1]
				if r.code != 1 || !strings.HasPrefix(last, "infohash: "+args[0]) || !strings.Contains(last, path+": "+dmg.want) ||
					strings.Count(r.stderr, path) != 1 {
					t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1 and one line …%s: %s", strings.Join(args, " "), r.code, r.stderr, path, dmg.want)
				}
				if _, err := os.Stat(filepath.Join(other, "CURRENT")); err == nil {
					t.Errorf("%s: merge --from committed into %s", strings.Join(args, " "), other)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "jobs.parquet")); err == nil {
				t.Error("plan-retries wrote jobs")
			}
			sameTree(t, before, committed(t, data))
		})
	}
}

// committed is the tree of what commits write under data: CURRENT, the
// manifests and the tables' files (a writer that fails still takes the
// LOCK file and clears staging/).
func committed(t *testing.T, data string) map[string]string {
	t.Helper()
	tree := fsutiltest.Tree(t, data)
	for p := range tree {
		rel, _ := filepath.Rel(data, p)
		if rel == "LOCK" || rel == "staging" || strings.HasPrefix(rel, "staging/") || rel == "inbox" || strings.HasPrefix(rel, "inbox/") {
			delete(tree, p)
		}
	}
	return tree
}
