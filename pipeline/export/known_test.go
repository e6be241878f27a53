package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// knownFixture is fixture with two of its three hashes fetched: the first
// a torrent with an empty name, no files and a size of 0, as merge writes
// it now (known values); the last the same torrent as merge wrote it
// before it told zero from unknown (null pointers: written as nulls).
// The second, a v2 hash, is not fetched.
func knownFixture(t *testing.T) (string, []string) {
	t.Helper()
	data, hashes := fixture(t)
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range []schema.Meta{
		{Name: new(""), NameRaw: []byte{}, NameUTF8Valid: true, TotalSize: new(int64(0)), PieceLength: new(int64(16384)),
			FileCount: new(int32(0)), Files: []schema.File{}, InfoBytes: []byte("d5:filesle4:name0:12:piece lengthi16384ee")},
		{NameUTF8Valid: true, InfoBytes: []byte("d5:filesle4:name0:12:piece lengthi16384ee")}, // as written before
	} {
		h, _, _, err := schema.ParseHex(hashes[2*i])
		if err != nil {
			t.Fatal(err)
		}
		key := hashes[2*i][:2]
		fi, err := dataset.WriteStaged(tx, dataset.TableTorrents, key, []schema.Torrent{{InfoHash: h, HashType: schema.HashV1,
			FetchedAt: 1, MetadataSize: 41, Meta: m}})
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(dataset.TableTorrents, key, []dataset.FileInfo{fi})
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	return data, hashes
}

// TestKnownZerosExported: a fetched torrent's empty name, empty raw name,
// size of 0 and file count of 0 are values in every format of the
// torrents and catalog exports, also for a torrents row written before
// (nulls there stood for those zeros); only the hash not fetched has
// them null. They were null, as if unknown. A CSV cell tells them apart
// as "" (known empty) and an empty cell (null).
func TestKnownZerosExported(t *testing.T) {
	data, hashes := knownFixture(t)
	cols := []string{"name", "name_raw", "total_size", "file_count"}
	want := map[string][]string{ // by table, the rows' cells of cols, in hash order ("null": null)
		"torrents": {`"" "" 0 0`, `"" "" 0 0`},
		"catalog":  {`"" "" 0 0`, `null null null null`, `"" "" 0 0`},
	}
	for _, table := range []string{"torrents", "catalog"} {
		t.Run(table+"/csv", func(t *testing.T) {
			out := string(export(t, data, table, "csv", nil))
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var got []string
			for i, r := range recs[1:] {
				raw := strings.Split(lines[i+1], ",") // no cell of this fixture holds a comma
				if len(raw) != len(recs[0]) {
					t.Fatalf("line %d: %d cells split at commas, want %d: %q", i+2, len(raw), len(recs[0]), lines[i+1])
				}
				var cells []string
				for _, c := range cols {
					j := slices.Index(recs[0], c)
					switch cell := r[j]; {
					case cell != "":
						cells = append(cells, cell)
					case raw[j] == `""`: // the quoted empty string
						cells = append(cells, `""`)
					default:
						cells = append(cells, "null")
					}
				}
				got = append(got, strings.Join(cells, " "))
			}
			if !slices.Equal(got, want[table]) {
				t.Errorf("%s by row: %q, want %q", cols, got, want[table])
			}
		})
		t.Run(table+"/jsonl", func(t *testing.T) {
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(export(t, data, table, "jsonl", nil))), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatal(err)
				}
				var cells []string
				for _, c := range cols {
					b, _ := json.Marshal(m[c])
					cells = append(cells, string(b))
				}
				got = append(got, strings.Join(cells, " "))
			}
			if !slices.Equal(got, want[table]) {
				t.Errorf("%s by row: %q, want %q", cols, got, want[table])
			}
		})
		for _, format := range []string{"parquet", "arrow"} {
			t.Run(table+"/"+format, func(t *testing.T) {
				b := export(t, data, table, format, nil)
				path := "-"
				if format == "parquet" {
					path = filepath.Join(t.TempDir(), "x.parquet")
					if err := os.WriteFile(path, b, 0o644); err != nil {
						t.Fatal(err)
					}
					for _, c := range cols {
						var wantNulls []bool
						for _, w := range want[table] {
							wantNulls = append(wantNulls, strings.HasPrefix(w, "null"))
						}
						if got := readParquetNulls(t, path, c); !slices.Equal(got, wantNulls) {
							t.Errorf("%s null by row: %v, want %v", c, got, wantNulls)
						}
					}
				}
				var got []string
				if table == "torrents" {
					for _, r := range readRows[schema.Torrent](t, path, b) {
						got = append(got, cells(r.Name, r.NameRaw, r.TotalSize, r.FileCount))
					}
				} else {
					for _, r := range readRows[schema.Catalog](t, path, b) {
						got = append(got, cells(r.Name, r.NameRaw, r.TotalSize, r.FileCount))
					}
				}
				if !slices.Equal(got, want[table]) {
					t.Errorf("%s by row: %q, want %q", cols, got, want[table])
				}
			})
		}
	}
	if h := hashes[1]; !strings.HasPrefix(h, "80") {
		t.Fatalf("fixture: the unfetched hash is %s", h)
	}
}

// readRows reads a Parquet file (path) or an Arrow stream (b, path "-").
func readRows[T any](t *testing.T, path string, b []byte) []T {
	t.Helper()
	r, err := rowio.Open[T](path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// cells renders name, name_raw, total_size and file_count as the test's
// want does.
func cells(name *string, raw []byte, total *int64, files *int32) string {
	var out []string
	if name == nil {
		out = append(out, "null")
	} else {
		out = append(out, fmt.Sprintf("%q", *name))
	}
	if raw == nil {
		out = append(out, "null")
	} else {
		out = append(out, fmt.Sprintf("%q", fmt.Sprintf("%x", raw)))
	}
	for _, p := range []any{total, files} {
		switch v := p.(type) {
		case *int64:
			if v != nil {
				out = append(out, fmt.Sprint(*v))
				continue
			}
		case *int32:
			if v != nil {
				out = append(out, fmt.Sprint(*v))
				continue
			}
		}
		out = append(out, "null")
	}
	return strings.Join(out, " ")
}

// TestCatalogFilesNullUntilFetched: the catalog's files column is null
// for a hash not fetched, as its other metadata columns are, in every
// format; a fetched torrent's is a list, empty when it has no files. It
// was an empty list for every hash not fetched.
func TestCatalogFilesNullUntilFetched(t *testing.T) {
	data, _ := knownFixture(t)
	want := []string{"[]", "null", "[]"} // by row, in hash order
	t.Run("csv", func(t *testing.T) {
		recs, err := csv.NewReader(bytes.NewReader(export(t, data, "catalog", "csv", nil))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs[1:] {
			cell := r[slices.Index(recs[0], "files")]
			if cell == "" {
				cell = "null"
			}
			got = append(got, cell)
		}
		if !slices.Equal(got, want) {
			t.Errorf("files by row: %q, want %q", got, want)
		}
	})
	t.Run("jsonl", func(t *testing.T) {
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(export(t, data, "catalog", "jsonl", nil))), "\n") {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatal(err)
			}
			got = append(got, string(m["files"]))
		}
		if !slices.Equal(got, want) {
			t.Errorf("files by row: %q, want %q", got, want)
		}
	})
	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			b := export(t, data, "catalog", format, nil)
			path := "-"
			if format == "parquet" {
				path = filepath.Join(t.TempDir(), "c.parquet")
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var got []string // rowio reads a null list as nil, an empty one as empty
			for _, r := range readRows[schema.Catalog](t, path, b) {
				if r.Files == nil {
					got = append(got, "null")
				} else {
					got = append(got, fmt.Sprintf("%v", r.Files))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("files by row: %q, want %q", got, want)
			}
		})
	}
}
