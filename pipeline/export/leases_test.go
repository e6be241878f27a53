package export

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestStateExportHasLeases: the state's lease_id and lease_until, null in
// its files (leases have a table of their own), are filled from the
// leases table in every format: a live lease, an ended one (lease_until
// says so), and nulls for a hash with none. They used to be empty always,
// reading as if nothing were leased.
func TestStateExportHasLeases(t *testing.T) {
	data, hashes := fixture(t)
	var hs [3]schema.Hash
	for i, x := range hashes {
		h, _, _, err := schema.ParseHex(x)
		if err != nil {
			t.Fatal(err)
		}
		hs[i] = h
	}
	live := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	ended := time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC).UnixMilli()
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := leases.Write(tx, leases.Set{
		hs[0]: {InfoHash: hs[0], LeaseID: "live-1", LeaseUntil: live, Attempt: 1, PlannedAt: ended - 1},
		hs[2]: {InfoHash: hs[2], LeaseID: "ended-1", LeaseUntil: ended, Attempt: 1, PlannedAt: ended - 1},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	d.Close()

	type lease struct {
		ID    string
		Until int64
	}
	want := map[string]lease{hashes[0]: {"live-1", live}, hashes[1][:40]: {}, hashes[2]: {"ended-1", ended}} // hashes[1] is v2: its key is 20 bytes
	check := func(t *testing.T, got map[string]lease) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%d rows %v, want %d", len(got), got, len(want))
		}
		for h, w := range want {
			if got[h] != w {
				t.Errorf("%s: lease %+v, want %+v", h, got[h], w)
			}
		}
	}
	t.Run("parquet", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "state.parquet")
		if err := os.WriteFile(p, export(t, data, "state", "parquet", nil), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := rowio.Open[schema.State](p, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rows, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]lease{}
		for _, s := range rows {
			got[schema.Hex(s.InfoHash)] = lease{s.LeaseID, s.LeaseUntil}
		}
		check(t, got)
	})
	t.Run("jsonl", func(t *testing.T) {
		got := map[string]lease{}
		for _, line := range strings.Split(strings.TrimSpace(string(export(t, data, "state", "jsonl", nil))), "\n") {
			var row struct {
				InfoHash   string  `json:"info_hash"`
				LeaseID    *string `json:"lease_id"`
				LeaseUntil *string `json:"lease_until"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			var l lease
			if (row.LeaseID == nil) != (row.LeaseUntil == nil) {
				t.Fatalf("%s: lease_id %v, lease_until %v: both or neither", row.InfoHash, row.LeaseID, row.LeaseUntil)
			}
			if row.LeaseID != nil {
				at, err := time.Parse(time.RFC3339Nano, *row.LeaseUntil)
				if err != nil {
					t.Fatal(err)
				}
				l = lease{*row.LeaseID, at.UnixMilli()}
			}
			got[row.InfoHash] = l
		}
		check(t, got)
	})
	t.Run("csv", func(t *testing.T) {
		out := string(export(t, data, "state", "csv", nil))
		for _, s := range []string{",live-1,2030-01-01T00:00:00.000Z,", ",ended-1,2026-01-02T04:00:00.000Z,", ",2026-01-02T03:04:05.000Z,,,hot,"} {
			if !strings.Contains(out, s) {
				t.Errorf("csv lacks %q:\n%s", s, out)
			}
		}
	})
}
