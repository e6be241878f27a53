package app

import (
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/fetch"
	"github.com/infohash/infohash/pipeline/merge"
)

// TestMergeMaxMetadataSizeIsFetchs: merge's cap and its bound are
// fetch's (merge cannot import fetch, whose tests import merge).
func TestMergeMaxMetadataSizeIsFetchs(t *testing.T) {
	if merge.DefaultOptions().MaxMetadataSize != fetch.DefaultMaxMetadataSize || merge.MaxMetadataSizeLimit != fetch.MaxMetadataSizeLimit {
		t.Fatalf("merge's cap %d (at most %d), fetch's %d (at most %d)", merge.DefaultOptions().MaxMetadataSize,
			merge.MaxMetadataSizeLimit, fetch.DefaultMaxMetadataSize, fetch.MaxMetadataSizeLimit)
	}
}

// TestMergeMaxMetadataSize: merge --max-metadata-size refuses a results
// file holding an info dictionary over it (exit 2, one line naming the
// file, the sizes and the flag; the file left where it is, nothing
// committed) and merges it once raised; its help says that a file of
// fetch --max-metadata-size N needs the same N.
func TestMergeMaxMetadataSize(t *testing.T) {
	help := strings.Join(strings.Fields(string(mustRun(t, nil, "merge", "--help"))), " ")
	if want := "a results file written by fetch --max-metadata-size N needs the same N here"; !strings.Contains(help, want) {
		t.Errorf("merge --help does not say %q", want)
	}
	data := filepath.Join(t.TempDir(), "ih")
	seedHashes(t, data, 1, 9)
	info := fmt.Appendf(nil, "d6:lengthi16384e4:name3:big12:piece lengthi16384e6:pieces20:%s7:paddingi0e8:zpadding8000:%se",
		strings.Repeat("p", 20), strings.Repeat("z", 8000))
	at := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "results.parquet")
	w, err := rowio.Create[schema.Result](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs := []schema.Result{{InfoHash: sha1.Sum(info), HashType: schema.HashV1, AttemptedAt: at.UnixMilli(), Outcome: schema.OutcomeOK,
		ResultMeta: schema.ResultMeta{InfoBytes: info}}}
	if err := w.Write(rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	snap, _ := currentManifest(t, data)
	now := at.Add(time.Minute).Format(time.RFC3339)
	_, stderr, code := runMain(t, "merge", "--data", data, "--far-now", "--now", now, "--max-metadata-size", "4096", path)
	// The page: the dictionary, its length and its definition level.
	want := fmt.Sprintf("infohash: merge: %s: rows 1-1: a page of info_bytes declares %d bytes for 1 value, over --max-metadata-size 4096 (", path, len(info)+8)
	if code != 2 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q\nwant exit 2 and one line starting %q", code, stderr, want)
	}
	if s, _ := currentManifest(t, data); s != snap {
		t.Fatalf("a refused file committed snapshot %d", s)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the refused file: %v", err)
	}
	mustRun(t, nil, "merge", "--data", data, "--far-now", "--now", now, "--max-metadata-size", "16384", path)
	if s, _ := currentManifest(t, data); s != snap+1 {
		t.Fatalf("merged with the cap raised: snapshot %d, want %d", s, snap+1)
	}
}
