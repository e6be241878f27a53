package status

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestFrozenGlob: the DuckDB and frozen globs name the current state
// and the snapshot's state directory, and there are none at snapshot 0
// (a dataset with no state table yet, which a dedup of a bad input
// leaves): the text says so, and what writes the state, in both lines,
// and JSON has null for both. The DuckDB line printed a glob that
// matched no file, on which DuckDB fails ("No files found").
func TestFrozenGlob(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	read := func(glob string) string {
		return "read_parquet('" + glob + "', hive_partitioning=true, hive_types={'prefix': VARCHAR})\n"
	}
	for _, tt := range []struct {
		name        string
		withState   bool
		wantText    string // from the DuckDB line on
		wantInJSON  any    // frozen_state_glob
		wantCurrent any    // state_glob
	}{
		{"snapshot 0", false, "DuckDB: none (" + NoState + ")\nfrozen: none (" + NoState + ")\n", nil, nil},
		{"with a state table", true, "DuckDB: " + read("DIR/state/current/prefix=*/*.parquet") + "frozen: " + read("DIR/state/v/000000000001/prefix=*/*.parquet"),
			"DIR/state/v/000000000001/prefix=*/*.parquet", "DIR/state/current/prefix=*/*.parquet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			if tt.withState {
				tx, err := d.Begin()
				if err != nil {
					t.Fatal(err)
				}
				fi, err := dataset.WriteStaged(tx, dataset.TableState, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
				if err != nil {
					t.Fatal(err)
				}
				tx.SetPartition(dataset.TableState, "00", []dataset.FileInfo{fi})
				if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Run(context.Background(), d.Dir, now, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			r.Print(&out)
			text := strings.ReplaceAll(out.String(), d.Dir, "DIR")
			if i := strings.Index(text, "DuckDB:"); i < 0 || text[i:] != tt.wantText {
				t.Errorf("text ends\n%s\nwant\n%s", text[max(0, strings.Index(text, "DuckDB")):], tt.wantText)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(bytes.ReplaceAll(b, []byte(d.Dir), []byte("DIR")), &m); err != nil {
				t.Fatal(err)
			}
			// null, not absent: a script reading the key finds it.
			if got, ok := m["frozen_state_glob"]; !ok || got != tt.wantInJSON {
				t.Errorf("frozen_state_glob %v (present %v), want %v", got, ok, tt.wantInJSON)
			}
			if got, ok := m["state_glob"]; !ok || got != tt.wantCurrent {
				t.Errorf("state_glob %v (present %v), want %v", got, ok, tt.wantCurrent)
			}
			if got, ok := m["last_input"]; !ok || got != nil {
				t.Errorf("last_input %v (present %v), want null: the ledger is empty", got, ok)
			}
			// For jq and alerting: lists are [] when empty, and every
			// table and retry wave has its key, 0 included.
			for _, k := range []string{"partial_inputs", "rejected_inputs", "pending_inputs", "spooling_inputs", "foreign_files", "unpublished", "unapplied_work"} {
				if l, ok := m[k].([]any); !ok || len(l) != 0 {
					t.Errorf("%s = %v, want []", k, m[k])
				}
			}
			rows, _ := m["table_rows"].(map[string]any)
			bytesBy, _ := m["table_bytes"].(map[string]any)
			for tbl := range rows {
				if _, ok := bytesBy[tbl]; !ok {
					t.Errorf("table_bytes has no %s, which table_rows has", tbl)
				}
			}
			if waves, _ := m["retry_waves"].(map[string]any); tt.withState {
				for _, wv := range Waves {
					if _, ok := waves[wv.Name]; !ok {
						t.Errorf("retry_waves %v has no %q", waves, wv.Name)
					}
				}
			}
		})
	}
}
