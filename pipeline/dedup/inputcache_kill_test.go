package dedup

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// envKilledDedup holds "DATA|FOLDER" for TestKilledDedupHelper.
const envKilledDedup = "DEDUP_TEST_KILLED_RUN"

// TestKilledDedupHelper is the run TestInputCacheKill9 kills: dedup of a
// folder, with the input cache's short test window.
func TestKilledDedupHelper(t *testing.T) {
	arg := os.Getenv(envKilledDedup)
	if arg == "" {
		t.Skip("helper of TestInputCacheKill9")
	}
	data, in, _ := strings.Cut(arg, "|")
	racyWindow = 5 * time.Millisecond
	o := DefaultOptions()
	o.Data, o.Inputs, o.Now, o.BatchHashes = data, []string{in}, t0.Add(2*time.Hour), 300
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

// TestInputCacheKill9 kills dedup runs over a growing folder at random
// instants (reading, committing batches, writing the input cache), then
// runs it to the end: every file is applied exactly once, and the cache
// the kills left is one a re-run can trust.
func TestInputCacheKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills dedup at random instants")
	}
	shortRacyWindow(t)
	in := t.TempDir()
	data := filepath.Join(t.TempDir(), "ih")
	rnd := rand.New(rand.NewPCG(5, 6))
	var all [][]schema.Observation
	killed := 0
	for i := range 10 {
		for j := range 3 {
			obs := genObs(uint64(100+3*i+j), 400, 150)
			all = append(all, obs)
			writeObs(t, in, obs)
		}
		settle()
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledDedupHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), envKilledDedup+"="+data+"|"+in)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out.String())
			}
		case <-time.After(time.Duration(rnd.IntN(2500)) * time.Millisecond):
			cmd.Process.Signal(syscall.SIGKILL)
			var ee *exec.ExitError
			if err := <-done; errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
				killed++
			}
		}
	}
	cached, _ := readCache(filepath.Join(data, dataset.InputCacheFile))
	t.Logf("dedup killed %d of 10 times; the cache left holds %d entries", killed, len(cached))
	if _, err := run(t, data, nil, in); err != nil {
		t.Fatal(err)
	}
	compare(t, readState(t, data), truth(all...))
	st, err := run(t, data, nil, in)
	if err != nil || st.InputsSkipped != len(all) || st.Commits != 0 {
		t.Fatalf("re-run: %+v, %v; want all %d inputs skipped", st, err, len(all))
	}
}
