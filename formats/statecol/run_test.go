package statecol_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

func TestReadRun(t *testing.T) {
	dir := t.TempDir()
	rows := sample(3000) // sorted by hash
	write := func(name string, rs []schema.State) rowio.DataFile {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := statecol.WriteState(f, rs); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return rowio.UnrecordedFile(path)
	}
	// Three files whose hashes interleave: rows i%3 == k.
	var parts [3][]schema.State
	for i := range rows {
		parts[i%3] = append(parts[i%3], rows[i])
	}
	a, b, c := write("a.parquet", parts[0]), write("b.parquet", parts[1]), write("c.parquet", parts[2])
	whole := write("whole.parquet", rows)
	opened, err := statecol.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	missing := rowio.UnrecordedFile(filepath.Join(dir, "gone.parquet"))
	for _, tc := range []struct {
		name    string
		dfs     []rowio.DataFile
		opened  []*statecol.File
		want    []schema.State
		wantErr string
	}{
		{"no files", nil, nil, nil, ""},
		{"one file", []rowio.DataFile{whole}, nil, rows, ""},
		{"three interleaved", []rowio.DataFile{c, a, b}, nil, rows, ""},
		{"one already open", []rowio.DataFile{a, b, c}, []*statecol.File{nil, opened}, rows, ""},
		{"a missing file", []rowio.DataFile{a, missing}, nil, nil, "gone.parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := make([]schema.State, 0, len(rows))
			var scratch []schema.State
			got, err := statecol.ReadRun(tc.dfs, tc.opened, buf, &scratch)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d rows, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i].InfoHash != tc.want[i].InfoHash || got[i].SeenCount != tc.want[i].SeenCount || got[i].LastSource != tc.want[i].LastSource {
					t.Fatalf("row %d = %x, want %x", i, got[i].InfoHash, tc.want[i].InfoHash)
				}
			}
			if len(got) > 0 && &got[0] != &buf[:1][0] {
				t.Fatalf("the run was not decoded into buf's memory (it had room)")
			}
		})
	}
}

func TestSortedRun(t *testing.T) {
	rows := sample(200)
	shuffled := slices.Clone(rows)
	slices.Reverse(shuffled)
	got := statecol.SortedRun(shuffled)
	if !slices.IsSortedFunc(got, func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) }) {
		t.Fatal("not sorted")
	}
	for i := range got {
		if got[i].InfoHash != rows[i].InfoHash {
			t.Fatalf("row %d = %x, want %x", i, got[i].InfoHash, rows[i].InfoHash)
		}
	}
}
