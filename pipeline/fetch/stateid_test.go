package fetch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDHTStateIDSavedAtStart: a fetch without a usable saved state saves
// its new node ID before its node sends anything (capture, on the same
// directory, reads it to leave this run's lookups out, see
// capture/ownlookups.go), and keeps that ID to the end.
func TestDHTStateIDSavedAtStart(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"no file", ""},
		{"corrupt file", `{"kind": "infohash fetch DHT st`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.content != "" {
				if err := os.WriteFile(filepath.Join(dir, stateFileName), []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			router, _ := blackhole(t)
			o := testOptions()
			o.DHTState = dir
			o.Bootstrap = []string{router}
			o.DHTQueryTimeout = 300 * time.Millisecond
			f := newFetcher(t, o)
			id := f.dht.s.ID()
			st, ok, err := loadDHTState(dir)
			if err != nil || !ok || st.ID != id {
				t.Fatalf("%s while the fetcher runs: id %x, found %v, err %v; want the running node's id %x", filepath.Join(dir, stateFileName), st.ID, ok, err, id)
			}
			f.Close()
			if st, ok, err = loadDHTState(dir); err != nil || !ok || st.ID != id {
				t.Fatalf("after Close: id %x, found %v, err %v; want %x", st.ID, ok, err, id)
			}
		})
	}
}
