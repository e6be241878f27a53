package dedup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// waitForFile waits until pattern matches exactly one file and returns
// it; it fails the test if that takes more than a minute.
func waitForFile(t *testing.T, pattern string) string {
	t.Helper()
	for range 6000 {
		if got, _ := filepath.Glob(pattern); len(got) == 1 {
			return got[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no file %s appeared", pattern)
	return ""
}

// hasPath reports whether one of ins is the file at p.
func hasPath(ins []input, p string) bool {
	for _, in := range ins {
		if in.path == p {
			return true
		}
	}
	return false
}

// TestLiveSpoolIsNoLeftover: a run whose stdin is whole in the inbox but
// not committed yet (it waits for the writer lock, held here) keeps its
// spool locked: a run starting meanwhile does not take it for a dead
// run's leftover (it did, applied it too, and one of the two then failed
// on a spool the other had removed), and the owner then commits it. A
// leftover of a dead run is taken by one starting run only: another
// starting while the first applies it leaves it alone.
func TestLiveSpoolIsNoLeftover(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	obs := genObs(7, 600, 300)
	if _, err := run(t, data, nil, writeObs(t, dir, obs[:200])); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		stdin []byte // Arrow is read as it is spooled; Parquet is spooled whole first
	}{
		{"arrow", captureStream(t, obs[200:400], 64)},
		{"parquet", func() []byte {
			b, err := os.ReadFile(writeObs(t, dir, obs[400:]))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lk, err := dataset.LockWriter(ctx, data, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Release()
			owner := make(chan error, 1)
			go func() {
				o := DefaultOptions()
				o.Data, o.Inputs, o.Now = data, []string{"-"}, t0.Add(2*time.Hour)
				o.Stdin, o.LockWait = bytes.NewReader(tt.stdin), time.Hour
				_, err := Run(ctx, o)
				owner <- err
			}()
			spool := waitForFile(t, filepath.Join(data, "inbox", "part-*.spool"))

			d, err := dataset.Open(ctx, data, dataset.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			other := writeObs(t, dir, obs[:10])
			ins, _, err := resolveInputs(ctx, []string{other}, nil, d, nil)
			if err != nil {
				t.Fatal(err)
			}
			settleLive(ctx, ins)
			if hasPath(ins, spool) {
				lk.Release()
				<-owner // its run ends before the test removes its folder
				t.Fatalf("a starting run took the live run's spool %s for a leftover: inputs %v", spool, ins)
			}
			lk.Release()
			if err := <-owner; err != nil {
				t.Fatalf("the spool's run: %v", err)
			}
			if _, err := os.Stat(spool); !os.IsNotExist(err) {
				t.Fatalf("the spool's run left its spool: %v", err)
			}
		})
	}
	want := readState(t, data)
	for _, o := range obs {
		if _, ok := want[o.InfoHash]; !ok {
			t.Fatalf("%s was not applied", schema.Hex(o.InfoHash))
		}
	}

	// A dead run's leftover: the first starting run takes it and holds it
	// while it applies it; a second one starting then leaves it alone.
	left := filepath.Join(data, "inbox", "part-0123456789abcdef.spool")
	if err := os.WriteFile(left, []byte(schema.Hex(obs[0].InfoHash)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(ctx, data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := resolveInputs(ctx, []string{writeObs(t, dir, obs[:1])}, nil, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := resolveInputs(ctx, []string{writeObs(t, dir, obs[1:2])}, nil, d, nil)
	settleLive(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	settleLive(ctx, first)
	if !hasPath(first, left) || hasPath(second, left) {
		t.Fatalf("the leftover taken by the first run %v, by the second %v: want the first only", hasPath(first, left), hasPath(second, left))
	}
}
