package merge

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// Comparing two merged datasets, as the splice tests do: one merged by the
// splice path, one by the full path.

// statsJSON is st as --stats-json writes it, but for what may differ
// between the paths: partitions_spliced and seconds.
func statsJSON(t *testing.T, st Stats) string {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "partitions_spliced")
	delete(m, "seconds")
	b, _ = json.Marshal(m) // sorted keys
	return string(b)
}

// tableJSON is every row of table in dir's current snapshot, sorted.
func tableJSON(t *testing.T, dir, table string) string {
	t.Helper()
	var rows []string
	switch table {
	case dataset.TableTorrents:
		rows = jsonRows(t, readTable[schema.Torrent](t, dir, table))
	case dataset.TableLeases:
		rows = jsonRows(t, readTable[schema.Lease](t, dir, table))
	case dataset.TablePeers:
		rows = jsonRows(t, readTable[schema.PeerPenalty](t, dir, table))
	}
	slices.Sort(rows)
	return fmt.Sprint(rows)
}

func jsonRows[T any](t *testing.T, rows []T) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i := range rows {
		b, err := json.Marshal(rows[i])
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// compareStates fails for any hash whose row differs between got and
// want (an empty list and none are the same).
func compareStates(t *testing.T, got, want map[schema.Hash]schema.State) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d hashes, want %d", len(got), len(want))
	}
	bad := 0
	for h, w := range want {
		g, ok := got[h]
		if !ok {
			t.Errorf("%x missing", h)
			continue
		}
		if !reflect.DeepEqual(normalState(g), normalState(w)) {
			if bad++; bad <= 5 {
				t.Errorf("%x:\nsplice %+v\nfull   %+v", h, g, w)
			}
		}
	}
	if bad > 5 {
		t.Errorf("... %d rows differ in all", bad)
	}
}

func normalState(st schema.State) schema.State {
	if len(st.InfoHashV2) == 0 {
		st.InfoHashV2 = nil
	}
	if len(st.AvoidPeers) == 0 {
		st.AvoidPeers = nil
	}
	if len(st.Peers) == 0 {
		st.Peers = nil
	}
	return st
}

// copyTree copies the dataset at src to dst (an empty folder): files,
// folders and the tables' current links; the copy is the same dataset
// (datasettest.Adopt), as if moved there.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case e.IsDir():
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	datasettest.Adopt(t, dst)
}
