package cron

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// passFolders returns the names of the pass folders under data/work.
func passFolders(t *testing.T, data string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(data, "work"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// KEEP_PASSES keeps the passes made last, whatever their names. By name,
// bytewise, a-2/ came before a/ and 10/ before 9/: the pass that had just
// run removed its own folder and kept the one before it.
func TestCrawlPassKeepPassesOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		passes []string // PASS of each pass, in the order run
		want   []string // the folders kept with KEEP_PASSES=1
	}{
		{"a name taken gets -2", []string{"a", "a"}, []string{"a-2"}},
		{"numbers", []string{"9", "10"}, []string{"10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			var log string
			for _, p := range tc.passes {
				log += runPass(t, data, p, "1s", 0, "KEEP_PASSES=1")
			}
			if got := passFolders(t, data); !slices.Equal(got, tc.want) {
				t.Errorf("pass folders %q after passes %q with KEEP_PASSES=1, want %q; log:\n%s", got, tc.passes, tc.want, log)
			}
		})
	}
}

// The catch-up applies the files earlier passes left in the order the
// passes were made: by name, bytewise, a-2's came before a's and 10's
// before 9's. Folders without a sequence number (made by an older
// crawl-pass.sh, or by hand) come first, by name with its digits as
// numbers.
func TestCrawlPassCatchupOrder(t *testing.T) {
	// Every dedup fails: each pass leaves its observations unapplied.
	failing := script(t, "infohash", `if [ "$1" = dedup ]; then echo "infohash: dedup: injected failure" >&2; exit 1; fi
exec `+bin+` "$@"`)
	for _, tc := range []struct {
		name   string
		legacy []string // folders made by hand first, each with a leftover
		passes []string // PASS of each pass that leaves its observations
		want   []string // the folders in the order the catch-up applies them
	}{
		{"a name taken gets -2", nil, []string{"a", "a"}, []string{"a", "a-2"}},
		{"numbers", nil, []string{"9", "10"}, []string{"9", "10"}},
		{"older folders first, by number", []string{"p10", "p9"}, []string{"a"}, []string{"p9", "p10", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			for _, l := range tc.legacy {
				obsParquet(t, filepath.Join(data, "work", l, "observations.parquet"), hashes(1, 2)...)
			}
			for _, p := range tc.passes {
				runPass(t, data, p, "1s", 1, "INFOHASH="+failing)
			}
			log := runPass(t, data, "z", "1s", 0)
			at := -1
			for _, w := range tc.want {
				i := strings.Index(log, "catch-up: "+w+"'s observations")
				if i < 0 {
					t.Fatalf("no catch-up of %s's observations; log:\n%s", w, log)
				}
				if i < at {
					t.Errorf("%s's observations were applied before an older pass's; want the order %q; log:\n%s", w, tc.want, log)
				}
				at = i
			}
		})
	}
}
