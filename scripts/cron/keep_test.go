package cron

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// KEEP_PASSES sets how many pass folders are kept (default 10), and a work
// file once applied is removed, its marker kept (an .arrows is ~160 B a
// row: ten passes of them were kept in full). A file not applied stays,
// whatever its age.
func TestCrawlPassKeepPasses(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	left := filepath.Join(data, "work", "k0", "observations.parquet") // fails each pass: stays
	hexList(t, left, hashes(1, 3)...)
	// A dedup that fails on it (exit 1, an earlier pass's file: the pass
	// goes on, exit 3) leaves it unapplied.
	failing := script(t, "infohash", `case "$*" in *" `+left+`") echo "infohash: dedup: `+left+`: input/output error" >&2; exit 1 ;; esac
exec `+bin+` "$@"`)
	for _, p := range []string{"k1", "k2", "k3"} {
		runPass(t, data, p, "1s", 3, "KEEP_PASSES=2", "LIMIT=5", "INFOHASH="+failing)
	}
	ents, err := os.ReadDir(filepath.Join(data, "work"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, e := range ents {
		if e.IsDir() {
			kept = append(kept, e.Name())
		}
	}
	if want := []string{"k0", "k2", "k3"}; !slices.Equal(kept, want) {
		t.Errorf("pass folders %q with KEEP_PASSES=2, want %q (k0 holds a file left to apply)", kept, want)
	}
	for _, f := range []string{"observations.arrows", "results.arrows"} {
		p := filepath.Join(data, "work", "k3", f)
		if exists(p) || !exists(p+".applied") {
			t.Errorf("%s: applied, want it removed and its marker kept (exists %v, marker %v)", p, exists(p), exists(p+".applied"))
		}
	}
	if !exists(left) {
		t.Errorf("%s, not applied, was removed", left)
	}
}
