package status

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestVerifyDamagedReport: when --verify finds a damaged state file, the
// JSON report gives the manifest's hash count, and null (not 0, not {},
// not absent) for every count that would read the files, the last input
// too; text says the same.
func TestVerifyDamagedReport(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	counted := []string{"by_status", "by_tier", "by_last_failure", "by_status_and_tier", "leased", "leases_expired",
		"retry_waves", "retry_waves_by_tier_and_kind", "overdue_retries_by_tier_and_last_failure", "last_input"}
	for _, tt := range []struct {
		name     string
		damage   bool
		wantNull bool
		wantText string
	}{
		{"intact", false, false, "(0 leased to fetch jobs, 1 input applied)"},
		{"damaged", true, true, "3 per the manifest (1 input applied)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			rows := []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"},
				{InfoHash: schema.Hash{0, 2}, HashType: 1, MetadataStatus: "new", Tier: "hot"}, {InfoHash: schema.Hash{0, 3}, HashType: 1, MetadataStatus: "failed", Tier: "hot"}}
			fi, err := dataset.WriteStaged(tx, dataset.TableState, "00", rows)
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(dataset.TableState, "00", []dataset.FileInfo{fi})
			tx.AddApplied(dataset.Applied{ID: "a1", Name: "in.txt", Rows: 3, At: now})
			m, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.damage {
				st := m.Table(dataset.TableState)
				p := d.FilePath(st, "00", st.Partitions["00"][0])
				b, _ := os.ReadFile(p)
				b[len(b)/2] ^= 0xff
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Run(context.Background(), d.Dir, now, Options{Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got["hashes"] != float64(3) {
				t.Errorf("hashes %v, want 3", got["hashes"])
			}
			for _, k := range counted {
				if v, ok := got[k]; !ok || (v == nil) != tt.wantNull {
					t.Errorf("%s = %v (present %v), want null: %v", k, v, ok, tt.wantNull)
				}
			}
			var out bytes.Buffer
			r.Print(&out)
			if !strings.Contains(out.String(), tt.wantText) {
				t.Errorf("text lacks %q:\n%s", tt.wantText, out.String())
			}
		})
	}
}
