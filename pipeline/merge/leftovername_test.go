package merge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestLeftoverNamedUnderData: a spool a killed merge left in the inbox is
// named "leftover D/inbox/merge/FILE", D being --data as given (relative
// or absolute), in an error (a bad leftover, set aside), and by DIR's
// absolute path in the ledger (a whole one, applied: the ledger names
// every input absolute, for people reading it elsewhere), as dedup's and
// merge's stdin are: it was "leftover inbox/merge/FILE", a path relative
// to a DIR the message did not name.
func TestLeftoverNamedUnderData(t *testing.T) {
	for _, tc := range []struct {
		name, content string
	}{
		{"whole", ""}, // the stream below
		{"bad", "garbage, not an Arrow stream\n"},
	} {
		for _, relative := range []bool{false, true} {
			t.Run(tc.name+"/"+map[bool]string{false: "absolute", true: "relative"}[relative], func(t *testing.T) {
				dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), t0)})
				jobs := planJobs(t, dir, t0, 10)
				content := []byte(tc.content)
				if tc.content == "" {
					stream := resultStream(t, []schema.Result{failure(jobs[0], schema.OutcomeNoPeers, t0+minute)})
					content = stream
				}
				if err := os.MkdirAll(filepath.Join(dir, inboxDir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, inboxDir, "part-1.results"), content, 0o644); err != nil {
					t.Fatal(err)
				}
				data := dir
				if relative {
					t.Chdir(filepath.Dir(dir))
					data = filepath.Base(dir)
				}
				want := "leftover " + filepath.Join(data, "inbox", "merge", "part-1.results")
				o := DefaultOptions()
				o.Data, o.Now = data, tm(t0+2*minute)
				_, err := Run(context.Background(), o)
				if tc.content != "" {
					if err == nil || !strings.Contains(err.Error(), want+":") {
						t.Fatalf("error %v: want it to name %q", err, want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				d, m := datasettest.OpenCurrent(t, dir)
				defer d.Close()
				want = "leftover " + filepath.Join(dir, "inbox", "merge", "part-1.results")
				a, err := d.LastApplied(m)
				if err != nil || a == nil || a.Name != want {
					t.Fatalf("ledger's last entry %+v, %v: want it named %q", a, err, want)
				}
			})
		}
	}
}
