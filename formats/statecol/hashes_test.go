package statecol_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

func TestReadHashes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, rows []schema.State) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := statecol.WriteState(f, rows); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rows := sample(5000)
	full := write("full.parquet", rows)
	empty := write("empty.parquet", nil)
	notParquet := filepath.Join(dir, "text.parquet")
	if err := os.WriteFile(notParquet, []byte("not a parquet file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := []schema.Hash{{0xff}} // ReadHashes appends
	for _, tc := range []struct {
		name, path string
		want       []schema.State
		wantErr    string
	}{
		{"rows", full, rows, ""},
		{"no rows", empty, nil, ""},
		{"not Parquet", notParquet, nil, notParquet},
		{"missing", filepath.Join(dir, "gone.parquet"), nil, "gone.parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := statecol.ReadHashes(rowio.UnrecordedFile(tc.path), append([]schema.Hash(nil), prefix...))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1+len(tc.want) || got[0] != prefix[0] {
				t.Fatalf("got %d hashes (first %x), want the prefix and %d", len(got), got[0], len(tc.want))
			}
			for i := range tc.want {
				if got[1+i] != tc.want[i].InfoHash {
					t.Fatalf("hash %d = %x, want %x", i, got[1+i], tc.want[i].InfoHash)
				}
			}
		})
	}
}
