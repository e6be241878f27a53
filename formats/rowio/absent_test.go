package rowio

import (
	"path/filepath"
	"slices"
	"testing"
)

// listRow is read from files that lack some of its list columns; its
// peers sit in an embedded struct, as fetch's job rows keep theirs.
type listRow struct {
	H   [20]byte `parquet:"info_hash"`
	Typ int8     `parquet:"hash_type,optional"`
	listCols
	Files []listFile `parquet:"files,list"`
}

type listCols struct {
	Peers []string `parquet:"peers,list"`
}

type listFile struct {
	P string `parquet:"path"`
}

// TestAbsentListsReadEmpty checks that a list column missing from a file
// reads as an empty list, not as one zero element (parquet-go's reading
// in a row whose optional hash_type holds a value), and that a present
// one reads as written.
func TestAbsentListsReadEmpty(t *testing.T) {
	type noLists struct {
		H   [20]byte `parquet:"info_hash"`
		Typ int8     `parquet:"hash_type,optional"`
	}
	type peersOnly struct {
		H   [20]byte `parquet:"info_hash"`
		Typ int8     `parquet:"hash_type,optional"`
		listCols
	}
	for _, tc := range []struct {
		name      string
		write     func(path string) error
		wantPeers [][]string
	}{
		{"no list column", func(p string) error {
			return writeRowsTo(p, []noLists{{H: [20]byte{1}}, {H: [20]byte{2}, Typ: 1}})
		}, [][]string{nil, nil}},
		{"peers only", func(p string) error {
			return writeRowsTo(p, []peersOnly{{H: [20]byte{1}}, {H: [20]byte{2}, Typ: 1, listCols: listCols{Peers: []string{"a:1", "b:2"}}}})
		}, [][]string{nil, {"a:1", "b:2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.parquet")
			if err := tc.write(p); err != nil {
				t.Fatal(err)
			}
			r, err := Open[listRow](p, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rows, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(tc.wantPeers) {
				t.Fatalf("read %d rows, want %d", len(rows), len(tc.wantPeers))
			}
			for i, row := range rows {
				if !slices.Equal(row.Peers, tc.wantPeers[i]) || len(row.Files) != 0 {
					t.Errorf("row %d: peers %q, files %+v; want peers %q, no files", i, row.Peers, row.Files, tc.wantPeers[i])
				}
			}
		})
	}
}

func writeRowsTo[T any](path string, rows []T) error {
	w, err := Create[T](path, nil)
	if err != nil {
		return err
	}
	if err := w.Write(rows); err != nil {
		return err
	}
	return w.Close()
}
