package capture

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzLoadState: any bytes in capture's state file load without a panic
// or are an error naming the file, and what loads gives node IDs and
// contacts within bounds, no ID given to two nodes.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"version":1,"nodes":[{"id":"0102030405060708090a0b0c0d0e0f1011121314","table":[{"id":"0102030405060708090a0b0c0d0e0f1011121314","addr":"127.0.0.1:6881"}]}]}`))
	f.Add([]byte(`{"version":1,"nodes":[{"id":"xyz","table":[{"id":"","addr":"[::1]:1"}]}],"samplers":[{"id":"00","addr":"1.2.3.4:0"}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte{0xff, 0xfe})
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, stateFileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := loadState(dir)
		if err != nil {
			return
		}
		const k = 4
		n := 0
		ids, tables, _ := nodeIDs(s, k, func() uint64 { n++; return uint64(n) })
		if len(ids) != k || len(tables) != k {
			t.Fatalf("%d node IDs and %d tables, want %d", len(ids), len(tables), k)
		}
		for i := range ids {
			if slices.Contains(ids[:i], ids[i]) {
				t.Fatalf("node ID %x given twice: %x", ids[i], ids)
			}
		}
		for _, sn := range s.Nodes {
			for _, c := range fromState(sn.Table) {
				if !c.Addr.Addr().Is4() {
					t.Fatalf("contact %v loaded with a non-IPv4 address", c)
				}
			}
		}
		_ = fromState(s.Samplers)
	})
}
