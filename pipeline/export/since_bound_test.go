package export

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestTimeFiltersExactAtBound: --since and --fetched-since keep a row
// whose last_seen (fetched_at) is at or after TIME, as DuckDB's
// last_seen >= TIME does, also when TIME has a fraction of a
// millisecond (a row at .000 is before .000001): the bound was rounded
// down to the millisecond, keeping rows up to 1 ms before it.
func TestTimeFiltersExactAtBound(t *testing.T) {
	data, hashes := fixture(t) // every hash last seen 2026-01-02T03:04:05.000Z
	seen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fetched := seen.Add(time.Hour + 7*time.Millisecond) // hashes[0]'s torrent
	addTorrentAt(t, data, hashes[0], fetched)

	all := []string{hashes[0], hashes[1][:40], hashes[2]}
	tests := []struct {
		name    string
		table   string
		fetched bool // the bound is --fetched-since, else --since
		bound   time.Time
		want    []string
	}{
		{"since at the sighting", "state", false, seen, all},
		{"since 1 ns before", "state", false, seen.Add(-time.Nanosecond), all},
		{"since 1 ns after", "state", false, seen.Add(time.Nanosecond), nil},
		{"since 1 µs after", "catalog", false, seen.Add(time.Microsecond), nil},
		{"since 999 µs after", "catalog", false, seen.Add(999 * time.Microsecond), nil},
		{"since 1 ms after", "state", false, seen.Add(time.Millisecond), nil},
		{"since in another zone", "state", false, seen.In(time.FixedZone("", 3600)), all},
		{"fetched since the fetch", "torrents", true, fetched, hashes[:1]},
		{"fetched since 1 µs before", "catalog", true, fetched.Add(-time.Microsecond), hashes[:1]},
		{"fetched since 1 µs after", "torrents", true, fetched.Add(time.Microsecond), nil},
		{"fetched since 500 µs after", "catalog", true, fetched.Add(500 * time.Microsecond), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := export(t, data, tt.table, "csv", func(o *Options) {
				if tt.fetched {
					o.FetchedSince = tt.bound
				} else {
					o.Since = tt.bound
				}
			})
			recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs[1:] {
				got = append(got, r[0])
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("%s %s: kept %v, want %v", tt.table, tt.bound.Format(time.RFC3339Nano), got, tt.want)
			}
		})
	}
}

// addTorrentAt commits a torrents row for hex hash hx, fetched at at.
func addTorrentAt(t *testing.T, data, hx string, at time.Time) {
	t.Helper()
	h, _, _, err := schema.ParseHex(hx)
	if err != nil {
		t.Fatal(err)
	}
	datasettest.Commit(t, data, func(tx *dataset.Tx) {
		fi, err := dataset.WriteStaged(tx, dataset.TableTorrents, hx[:2], []schema.Torrent{{InfoHash: h,
			HashType: schema.HashV1, FetchedAt: schema.Millis(at), MetadataSize: 3, Meta: schema.Meta{Name: new("n")}}})
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(dataset.TableTorrents, hx[:2], []dataset.FileInfo{fi})
	})
}
