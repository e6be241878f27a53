package status

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/progress/progresstest"
)

// TestStatusReportsProgress: status reports the rows it reads to count
// them on Options.ProgressTo, against the manifest's row count, to the
// last (finished=true), as it reports --verify's bytes; and says nothing
// without ProgressTo.
func TestStatusReportsProgress(t *testing.T) {
	logs := progresstest.Capture(t) // a line at every partition
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := d.Begin()
	for key, rows := range map[string][]schema.State{
		"00": {{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"},
			{InfoHash: schema.Hash{0, 2}, HashType: 1, MetadataStatus: "new", Tier: "hot"}},
		"09": {{InfoHash: schema.Hash{9, 1}, HashType: 1, MetadataStatus: "fetched", Tier: "hot"},
			{InfoHash: schema.Hash{9, 2}, HashType: 1, MetadataStatus: "new", Tier: "hot"}},
	} {
		fi, err := dataset.WriteStaged(tx, dataset.TableState, key, rows)
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(dataset.TableState, key, []dataset.FileInfo{fi})
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		to     *bytes.Buffer
		verify bool
		want   []string
	}{
		{"progress", &bytes.Buffer{}, false, []string{`msg="status: counting hashes" done=2 `,
			`msg="status: counting hashes" done=4 elapsed=0s total=4 percent=100 finished=true`,
			`msg="status: reading the leases table"`}},
		{"progress, verify", &bytes.Buffer{}, true, []string{`msg="status: verifying files (bytes)"`,
			`msg="status: counting hashes" done=4 elapsed=0s total=4 percent=100 finished=true`}},
		{"none", nil, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			o := Options{Verify: tc.verify}
			if tc.to != nil {
				o.ProgressTo = tc.to
			}
			r, err := Run(context.Background(), d.Dir, now, o)
			if err != nil || r.Hashes != 4 {
				t.Fatalf("status: %v, %d hashes", err, r.Hashes)
			}
			progresstest.Check(t, logs.String(), "status: ", tc.want)
		})
	}
}
