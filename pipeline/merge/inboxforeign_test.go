package merge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestInboxTakesOnlySpools: merge takes from DIR/inbox/merge/ only the
// whole spools runs wrote there (part-*.results), applies them and
// removes them; every other entry is left alone as it is (a dataset an
// older version made there, a file a person put there), which it took
// for leftovers and failed on as bad input, one a run.
func TestInboxTakesOnlySpools(t *testing.T) {
	foreign := map[string]string{
		"CURRENT": "000000000001.json\n", "LOCK": "", "policy.json": "{}\n", "notes.txt": "x\n",
		"manifests": "/", "part-1.results.keep": "x\n",
	}
	for _, spool := range []bool{false, true} {
		t.Run(map[bool]string{false: "foreign only", true: "a spool and foreign"}[spool], func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), t0)})
			jobs := planJobs(t, dir, t0, 10)
			inbox := filepath.Join(dir, inboxDir)
			if err := os.MkdirAll(inbox, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range foreign {
				var err error
				if content == "/" {
					err = os.Mkdir(filepath.Join(inbox, name), 0o755)
				} else {
					err = os.WriteFile(filepath.Join(inbox, name), []byte(content), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			left := filepath.Join(inbox, "part-0123456789abcdef.results")
			if spool {
				stream := resultStream(t, []schema.Result{failure(jobs[0], schema.OutcomeNoPeers, t0+minute)})
				if err := os.WriteFile(left, stream, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o := DefaultOptions()
			o.Data, o.Now = dir, tm(t0+2*minute)
			_, err := Run(context.Background(), o)
			if !spool {
				if err == nil || err.Error() != "merge: no input (name results files, folders, or - for stdin)" {
					t.Fatalf("err %v; want merge's no input", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				d, m := datasettest.OpenCurrent(t, dir)
				defer d.Close()
				if a, err := d.LastApplied(m); err != nil || a == nil || a.Name != "leftover "+left {
					t.Fatalf("ledger's last entry %+v, %v: want the spool", a, err)
				}
			}
			ents, err := os.ReadDir(inbox)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			for name, content := range foreign {
				want = append(want, name)
				if b, err := os.ReadFile(filepath.Join(inbox, name)); content != "/" && (err != nil || string(b) != content) {
					t.Errorf("%s holds %q (%v), want %q as it was", name, b, err, content)
				}
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("the inbox holds %q, want %q", got, want)
			}
		})
	}
}
