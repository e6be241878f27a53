package fetch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestRunNoJobs: a jobs input holding no job (the plan of an idle pass)
// ends the run at once with an empty output and zero counters, without
// starting a DHT node: the router hears nothing, and no DHT state is
// written. A jobs file is read before --dht-state is locked, so that the
// directory is not even made; a stream is read after the lock (a second
// fetch on the state is refused before it takes a job from the pipe).
func TestRunNoJobs(t *testing.T) {
	for _, tc := range []struct {
		name, input  string // input: the jobs' file name, "-" for stdin
		stateDirMade bool
	}{
		{"parquet file", "jobs.parquet", false},
		{"arrow file", "jobs.arrows", false},
		{"stdin", "-", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			router, packets := blackhole(t)
			var stdin bytes.Buffer
			input := tc.input
			if input != "-" {
				input = filepath.Join(dir, input)
			}
			if filepath.Ext(input) == ".arrows" { // an Arrow stream in a file
				writeJobsWithAvoid(t, "-", &stdin, nil, "")
				if err := os.WriteFile(input, stdin.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				writeJobsWithAvoid(t, input, &stdin, nil, "")
			}
			o := testOptions()
			o.Input, o.Stdin = input, &stdin
			o.Output = filepath.Join(dir, "results.parquet")
			o.DHTState = filepath.Join(dir, "dht-state")
			o.Bootstrap = []string{router}
			o.DHTQueryTimeout = 2 * time.Second
			st, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if st.Jobs != 0 || st.Attempted != 0 || st.Lookups != 0 {
				t.Errorf("stats %+v, want all 0", st)
			}
			// No bootstrap shows by the router's silence, not by how long
			// the run took (an upper bound of 1 s was a speed claim): one
			// that waited for the router's answer sent its query 2 s
			// (DHTQueryTimeout) before the run ended. The 50 ms let a query
			// sent just before the end land; a slow machine may let a
			// broken run pass by it, never fail a sound one.
			time.Sleep(50 * time.Millisecond)
			if n := packets.Load(); n != 0 {
				t.Errorf("the router got %d packets, want none", n)
			}
			if _, err := os.Stat(filepath.Join(o.DHTState, "fetch-dht.json")); !os.IsNotExist(err) {
				t.Errorf("DHT state written: %v", err)
			}
			if _, err := os.Stat(o.DHTState); os.IsNotExist(err) == tc.stateDirMade {
				t.Errorf("--dht-state made: %v, want %v", err == nil, tc.stateDirMade)
			}
			r, err := rowio.Open[schema.Result](o.Output, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if rows, err := r.ReadAll(); err != nil || len(rows) != 0 {
				t.Errorf("output: %d rows, %v; want 0", len(rows), err)
			}
		})
	}
}
