package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestCatalogMetadataFlagsNullUntilFetched: a catalog row without
// metadata has name_utf8_valid and private null (unknown), in every
// format; a fetched torrent's false stays false. Both were false for
// every hash not fetched, as if its name were known to be bad UTF-8.
func TestCatalogMetadataFlagsNullUntilFetched(t *testing.T) {
	data, hashes := fixture(t)
	fetched, _, _, err := schema.ParseHex(hashes[0])
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	key := hashes[0][:2]
	fi, err := dataset.WriteStaged(tx, dataset.TableTorrents, key, []schema.Torrent{{InfoHash: fetched, HashType: schema.HashV1,
		FetchedAt: 1, MetadataSize: 3, Meta: schema.Meta{Name: new("\ufffd"), NameRaw: []byte{0xff}, NameUTF8Valid: false, Private: false}}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableTorrents, key, []dataset.FileInfo{fi})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	cols := []string{"name_utf8_valid", "private"}

	t.Run("csv", func(t *testing.T) {
		recs, err := csv.NewReader(bytes.NewReader(export(t, data, "catalog", "csv", nil))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			i := slices.Index(recs[0], c)
			var got []string
			for _, r := range recs[1:] {
				got = append(got, r[i])
			}
			if want := []string{"false", "", ""}; !slices.Equal(got, want) {
				t.Errorf("%s: %q, want %q", c, got, want)
			}
		}
	})
	t.Run("jsonl", func(t *testing.T) {
		lines := strings.Split(strings.TrimSpace(string(export(t, data, "catalog", "jsonl", nil))), "\n")
		for _, c := range cols {
			var got []any
			for _, l := range lines {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatal(err)
				}
				got = append(got, m[c])
			}
			if want := []any{false, nil, nil}; !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", c, got, want)
			}
		}
	})
	t.Run("parquet and arrow", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "c.parquet")
		os.WriteFile(p, export(t, data, "catalog", "parquet", nil), 0o644)
		for _, c := range cols {
			if got, want := readParquetNulls(t, p, c), []bool{false, true, true}; !slices.Equal(got, want) {
				t.Errorf("parquet %s null by row: %v, want %v", c, got, want)
			}
		}
		ar, err := rowio.Open[schema.Catalog]("-", bytes.NewReader(export(t, data, "catalog", "arrow", nil)))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := ar.ReadAll()
		if err != nil || len(rows) != 3 {
			t.Fatalf("arrow: %d rows, %v", len(rows), err)
		}
		r0 := rows[0]
		if r0.NameUTF8Valid == nil || *r0.NameUTF8Valid || r0.Private == nil || *r0.Private ||
			rows[1].NameUTF8Valid != nil || rows[2].Private != nil {
			t.Errorf("arrow: fetched %v %v, not fetched %v %v; want false false, nil nil",
				r0.NameUTF8Valid, r0.Private, rows[1].NameUTF8Valid, rows[2].Private)
		}
	})
}
