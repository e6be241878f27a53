package fetch

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// FuzzLoadDHTState: any bytes in the state file load without a panic;
// what loads is within bounds, and saving it and loading it again gives
// the same state.
func FuzzLoadDHTState(f *testing.F) {
	f.Add([]byte(`{"kind":"infohash fetch DHT state","version":1,"id":"0102030405060708090a0b0c0d0e0f1011121314","nodes":[{"id":"0102030405060708090a0b0c0d0e0f1011121314","addr":"127.0.0.1:6881"}]}`))
	f.Add([]byte(`{"kind":"infohash fetch DHT state","version":1,"id":"zz","nodes":null}`))
	f.Add([]byte(`{"kind":"other","version":2}`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, stateFileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		st, ok, err := loadDHTState(dir)
		if err != nil || !ok {
			return
		}
		if len(st.Nodes) > maxSavedNodes {
			t.Fatalf("%d nodes loaded, more than %d", len(st.Nodes), maxSavedNodes)
		}
		for _, n := range st.Nodes {
			if !n.Addr.IsValid() || n.Addr.Port() == 0 {
				t.Fatalf("node %v loaded with an unusable address", n)
			}
		}
		again := t.TempDir()
		if err := saveDHTState(again, st.ID, st.Nodes, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		st2, ok, err := loadDHTState(again)
		if err != nil || !ok || !reflect.DeepEqual(st, st2) {
			t.Fatalf("round trip: %+v, %v, %v; want %+v", st2, ok, err, st)
		}
	})
}
