package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestSinceIsLastSeenEverywhere: --since keeps hashes by last_seen in
// every table that has it, and is refused on torrents, which has none
// (it filtered them by fetched_at, so that "--table torrents --since T"
// and "--table catalog --status fetched --since T" disagreed);
// --fetched-since keeps torrents by fetched_at, in torrents and the
// catalog, and is refused on the state.
func TestSinceIsLastSeenEverywhere(t *testing.T) {
	data, hashes := fixture(t) // every hash last seen 2026-01-02T03:04:05Z
	seen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Two torrents: one fetched a day after the sightings, one a year after.
	fetched := map[string]time.Time{hashes[0]: seen.Add(24 * time.Hour), hashes[2]: seen.AddDate(1, 0, 0)}
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for hx, at := range fetched {
		h, _, _, err := schema.ParseHex(hx)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := dataset.WriteStaged(tx, dataset.TableTorrents, hx[:2], []schema.Torrent{{InfoHash: h, HashType: schema.HashV1,
			FetchedAt: schema.Millis(at), MetadataSize: 3, Meta: schema.Meta{Name: new("n")}}})
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(dataset.TableTorrents, hx[:2], []dataset.FileInfo{fi})
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Close()

	kept := func(table string, mod func(*Options)) []string {
		recs, err := csv.NewReader(bytes.NewReader(export(t, data, table, "csv", mod))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs[1:] {
			out = append(out, r[0])
		}
		return out
	}
	all := []string{hashes[0], hashes[1][:40], hashes[2]}
	tests := []struct {
		name, table string
		mod         func(*Options)
		want        []string
	}{
		{"state seen since the sightings", "state", func(o *Options) { o.Since = seen }, all},
		{"state seen since after them", "state", func(o *Options) { o.Since = seen.Add(time.Hour) }, nil},
		// Fetched after the sightings, but not seen since: last_seen decides.
		{"catalog seen since the sightings", "catalog", func(o *Options) { o.Since = seen }, all},
		{"catalog seen since after them", "catalog", func(o *Options) { o.Since = seen.Add(time.Hour) }, nil},
		{"torrents fetched since a week after", "torrents", func(o *Options) { o.FetchedSince = seen.AddDate(0, 0, 7) }, []string{hashes[2]}},
		{"catalog fetched since a week after", "catalog", func(o *Options) { o.FetchedSince = seen.AddDate(0, 0, 7) }, []string{hashes[2]}},
		{"catalog fetched since the sightings", "catalog", func(o *Options) { o.FetchedSince = seen }, []string{hashes[0], hashes[2]}},
		{"catalog fetched and seen since", "catalog", func(o *Options) { o.FetchedSince, o.Since = seen, seen.Add(time.Hour) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kept(tt.table, tt.mod); !slices.Equal(got, tt.want) {
				t.Fatalf("kept %v, want %v", got, tt.want)
			}
		})
	}

	refused := []struct {
		name, table string
		mod         func(*Options)
		want        string
	}{
		{"torrents --since", "torrents", func(o *Options) { o.Since = seen }, "--since keeps hashes by last_seen, which torrents lack"},
		{"state --fetched-since", "state", func(o *Options) { o.FetchedSince = seen }, "--fetched-since keeps torrents by fetched_at, which the state lacks"},
		{"leases --fetched-since", "leases", func(o *Options) { o.FetchedSince = seen }, "--fetched-since applies only to"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Data, o.Table, o.Format, o.Stdout = data, tt.table, "csv", &bytes.Buffer{}
			tt.mod(&o)
			_, err := Run(context.Background(), o)
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v (exit %d), want a usage error saying %q", err, exitcode.Of(err), tt.want)
			}
		})
	}
}
