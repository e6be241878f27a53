package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// tableFile is the path of the first file of partition key of table in
// the current snapshot of the dataset at dir.
func tableFile(t *testing.T, dir, table, key string) string {
	t.Helper()
	files := datasettest.Files(t, dir, table, key)
	if len(files) == 0 {
		t.Fatalf("%s: no %s file in partition %q", dir, table, key)
	}
	return files[0]
}

func currentName(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDamagedTableFooter: a flipped bit that renames a column in the
// footer of a file of any table merge reads (ours for results, the other
// dataset's for --from) fails the merge with an error naming the file,
// and nothing is committed. A missing optional column (served_by) used to
// read as nulls, and its rows were merged into ours without it; the
// column checks caught it then, the footer's checksum in the manifest
// now does, before the footer is decoded.
func TestDamagedTableFooter(t *testing.T) {
	// A torrent of partition 42 whose info_bytes are its hash's (merge
	// --from verifies them before it reads the peers).
	var info []byte
	var h schema.Hash
	for i := 0; h[0] != 0x42; i++ {
		info, h = torrentInfo(fmt.Sprintf("damaged-%d", i))
	}
	for _, tt := range []struct {
		name       string
		from       bool // damage the other dataset of merge --from
		table, key string
		column     string
		want       string
	}{
		{"their state", true, dataset.TableState, "42", "hash_type", "footer CRC-32C"},
		{"their torrents", true, dataset.TableTorrents, "42", "served_by", "footer CRC-32C"},
		{"their peers", true, dataset.TablePeers, "", "class", "footer CRC-32C"},
		{"our state", false, dataset.TableState, "42", "last_source", "footer CRC-32C"},
		{"our leases", false, dataset.TableLeases, "", "reason", "footer CRC-32C"},
		{"our peers", false, dataset.TablePeers, "", "class", "footer CRC-32C"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := makeDataset(t, []schema.State{newHash(h, t0)})
			addTables(t, src, []schema.Torrent{{InfoHash: h, HashType: 1, FetchedAt: t0 + hour, ServedBy: "127.0.0.1:1",
				MetadataSize: int64(len(info)), Meta: schema.Meta{Name: new("x"), NameRaw: []byte("x"), InfoBytes: info}}},
				[]schema.PeerPenalty{{Addr: "127.0.0.1:1", Class: "rejected", Until: t0 + 10*day, Failures: 1, LastAt: t0}},
				nil, nil)
			dir, inputs := makeDataset(t, []schema.State{newHash(hashAt(0x43, 1), t0)}), []string(nil)
			if !tt.from {
				dir = src
				jobs := planJobs(t, dir, t0+day, 10)
				inputs = []string{writeResults(t, []schema.Result{failure(jobs[0], schema.OutcomeNoPeers, t0+day+minute)})}
			}
			damaged := dir
			if tt.from {
				damaged = src
			}
			path := tableFile(t, damaged, tt.table, tt.key)
			datasettest.RenameInFooter(t, path, tt.column, 0)
			before := currentName(t, dir)

			o := DefaultOptions()
			o.Data, o.Now, o.Inputs = dir, tm(t0+day+hour), inputs
			if tt.from {
				o.From = src
			}
			_, err := Run(context.Background(), o)
			if err == nil {
				t.Fatal("merged a damaged file")
			}
			if got := err.Error(); !strings.Contains(got, path+": "+tt.want) || strings.Count(got, path) != 1 {
				t.Errorf("error %q\nwant …%s: %s…, naming the file once", got, path, tt.want)
			}
			if after := currentName(t, dir); after != before {
				t.Errorf("committed snapshot %s over %s", after, before)
			}
		})
	}
}
