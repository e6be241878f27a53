package dataset

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestDamagedManifestIsAnError: a manifest changed in one place that
// still parses (a misspelt key, a wrong snapshot number) stops Open with
// "corrupt manifest" instead of reading as a dataset without its ledger
// or its state, or leading the next commit to clear the live snapshot.
func TestDamagedManifestIsAnError(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
	}{
		{"misspelt table key", `"partitions"`, `"partitionr"`},
		{"misspelt field", `"format_version"`, `"format_versiom"`},
		{"misspelt table name", `"state": {`, `"statE": {`},
		{"wrong snapshot", `"snapshot": SNAP`, `"snapshot": 7`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openNew(t)
			commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
			m, err := d.Current()
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(d.Dir, "manifests", manifestName(m.Snapshot))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			c.old = strings.Replace(c.old, "SNAP", fmt.Sprint(m.Snapshot), 1)
			if !bytes.Contains(b, []byte(c.old)) {
				t.Fatalf("manifest has no %s:\n%s", c.old, b)
			}
			os.WriteFile(p, bytes.Replace(b, []byte(c.old), []byte(c.new), 1), 0o644)
			_, err = Open(context.Background(), d.Dir, OpenOptions{})
			if err == nil {
				var d2 *Dataset
				if d2, err = Open(context.Background(), d.Dir, OpenOptions{}); err == nil {
					_, err = d2.Current()
				}
			}
			if err == nil || !strings.Contains(err.Error(), "corrupt manifest") {
				t.Fatalf("damaged manifest: %v", err)
			}
		})
	}
}
