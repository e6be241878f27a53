package app

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio"
)

// flipInFooterValue flips the lowest bit of the last byte of the first of
// values found in the footer of the Parquet file at path: a column
// chunk's min or max statistic, which parquet-go decodes without
// complaint and DuckDB skips row groups by.
func flipInFooterValue(t *testing.T, path string, values ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	start := len(b) - 8 - n
	for _, v := range values {
		raw, err := hex.DecodeString(v)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(b[start:len(b)-8], raw); i >= 0 {
			b[start+i+len(raw)-1] ^= 0x01
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s: no statistic of the footer holds any of %d values", path, len(values))
}

// fileOfTable is the path of the only file of unpartitioned table name
// in the current snapshot of the dataset at data.
func fileOfTable(t *testing.T, data, name string) string {
	t.Helper()
	files := datasettest.Files(t, data, name, "")
	if len(files) != 1 {
		t.Fatalf("table %s has %d files", name, len(files))
	}
	return files[0]
}

// TestDamagedFooterStopsEveryCommand: one flipped bit in the statistics
// of a committed file's footer (which no page CRC covers, and which every
// reader decoded without complaint: dedup's splice copied it into the
// next snapshot) stops every command that opens the file, with one line
// naming it and the footer's checksum, exit 1, nothing committed; status
// --verify lists it. A state file and the leases' file.
func TestDamagedFooterStopsEveryCommand(t *testing.T) {
	for _, table := range []string{dataset.TableState, dataset.TableLeases} {
		t.Run(table, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ih")
			hs := seedHashes(t, data, 20, 12)
			list := filepath.Join(dir, "one.txt")
			if err := os.WriteFile(list, []byte(hs[0]+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var path string
			cmds := [][]string{
				{"status", "--data", data},
				{"status", "--data", data, "--verify"},
				{"plan-retries", "--data", data, "--far-now", "--now", "2026-03-02T00:00:00Z", "-o", filepath.Join(dir, "jobs2.parquet")},
			}
			if table == dataset.TableState {
				path = stateFileOf(t, data, hs[0])
				flipInFooterValue(t, path, hs[0])
				cmds = append(cmds,
					[]string{"export", "--data", data, "--table", "state", "--format", "csv", "-o", "-"},
					// hs[0] is known: dedup splices its file.
					[]string{"dedup", "--data", data, "--far-now", "--now", "2026-03-02T00:00:00Z", list},
					[]string{"merge", "--data", filepath.Join(dir, "other"), "--from", data})
			} else {
				mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", "2026-03-02T00:00:00Z", "-o", filepath.Join(dir, "jobs.parquet"))
				path = fileOfTable(t, data, table)
				flipInFooterValue(t, path, hs...)
				cmds = append(cmds, []string{"export", "--data", data, "--table", "leases", "--format", "csv", "-o", "-"})
			}
			before := committed(t, data)
			for _, args := range cmds {
				r := ih(t, nil, args...)
				lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
				last := lines[len(lines)-1]
				if args[len(args)-1] == "--verify" {
					if r.code != 1 || !strings.Contains(string(r.stdout), path+": ") || !strings.Contains(string(r.stdout), "; footer CRC-32C ") {
						t.Errorf("status --verify: exit %d, stdout:\n%s\nwant the file listed with its footer CRC-32C", r.code, r.stdout)
					}
					continue
				}
				if r.code != 1 || !strings.HasPrefix(last, "infohash: "+args[0]) ||
					!strings.Contains(last, "dataset: "+path+": footer CRC-32C ") || !strings.Contains(last, ", the manifest says ") ||
					strings.Count(r.stderr, path) != 1 {
					t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1 and one line …dataset: %s: footer CRC-32C …", strings.Join(args, " "), r.code, r.stderr, path)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "other", "CURRENT")); err == nil {
				t.Error("merge --from committed")
			}
			if _, err := os.Stat(filepath.Join(dir, "jobs2.parquet")); err == nil {
				t.Error("plan-retries wrote jobs")
			}
			sameTree(t, before, committed(t, data))
		})
	}
}

// TestSplicesKeepFooterChecksums: incremental dedup splices a state file
// again and again (a sighting of a known hash rewrites only its columns);
// each snapshot records the footer checksum of the file it wrote, every
// file of every snapshot matches what its manifest records (status
// --verify), and every reader opens them.
func TestSplicesKeepFooterChecksums(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	hs := seedHashes(t, data, 40, 13)
	for i, now := range []string{"2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z", "2026-03-04T00:00:00Z"} {
		// Known hashes only, in another order each time (an input of
		// the same content is applied once).
		list := filepath.Join(dir, fmt.Sprintf("again-%d.txt", i))
		again := append(slices.Clone(hs[i:5]), hs[:i]...)
		if err := os.WriteFile(list, []byte(strings.Join(again, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := stateFileOf(t, data, hs[0])
		mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", now, list)
		if nf := stateFileOf(t, data, hs[0]); nf == old {
			t.Fatalf("dedup %d left %s as it was", i, old)
		}
		mustRun(t, nil, "status", "--data", data, "--verify")
		checkFooters(t, data)
	}
	mustRun(t, nil, "export", "--data", data, "--table", "state", "--format", "csv", "-o", filepath.Join(dir, "state.csv"))
	mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", "2026-03-05T00:00:00Z", "-o", filepath.Join(dir, "jobs.parquet"))
}

// checkFooters checks that every data file of the current snapshot of
// the dataset at data has the footer checksum its manifest records.
func checkFooters(t *testing.T, data string) {
	t.Helper()
	cur, err := os.ReadFile(filepath.Join(data, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(data, "manifests", strings.TrimSpace(string(cur))))
	if err != nil {
		t.Fatal(err)
	}
	var m dataset.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	d := &dataset.Dataset{Dir: data}
	for name, tb := range m.Tables {
		for key, fs := range tb.Partitions {
			for _, f := range fs {
				p := d.FilePath(tb, key, f)
				fh, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := rowio.SumFooter(fh, f.Size)
				fh.Close()
				if err != nil || got != f.Footer() || !got.Recorded() {
					t.Errorf("%s %s: footer %+v (%v), the manifest says %+v", name, p, got, err, f.Footer())
				}
			}
		}
	}
}
