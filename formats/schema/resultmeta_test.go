package schema

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestResultMetadataColumnsNullable: every metadata column of a result
// is nullable, so that a failed result holds null there (files, a
// required list, held [] for every failure; name_utf8_valid and private
// false); a torrents row keeps name_utf8_valid, files and private
// required, as every fetched torrent has them. The columns are the same.
func TestResultMetadataColumnsNullable(t *testing.T) {
	res, tor := parquet.SchemaOf(Result{}), parquet.SchemaOf(Torrent{})
	required := map[string]bool{"name_utf8_valid": true, "files": true, "private": true}
	for _, f := range parquet.SchemaOf(Meta{}).Fields() {
		if n := topField(res, f.Name()); n == nil || !n.Optional() {
			t.Errorf("results column %s is not optional", f.Name())
		}
		if n := topField(tor, f.Name()); n == nil || n.Optional() == required[f.Name()] {
			t.Errorf("torrents column %s: optional %v, want %v", f.Name(), n != nil && n.Optional(), !required[f.Name()])
		}
	}
	// Leaf by leaf, the same columns of the same types.
	leaves := func(s *parquet.Schema) map[string]parquet.Kind {
		out := map[string]parquet.Kind{}
		for _, path := range s.Columns() {
			l, _ := s.Lookup(path...)
			out[fmt.Sprint(path)] = l.Node.Type().Kind()
		}
		return out
	}
	if m, r := leaves(parquet.SchemaOf(Meta{})), leaves(parquet.SchemaOf(ResultMeta{})); !reflect.DeepEqual(m, r) {
		t.Errorf("ResultMeta's columns %v differ from Meta's %v", r, m)
	}
}

// topField is the top-level field of s named name (for a list, its
// group, which holds whether the list is optional), or nil.
func topField(s *parquet.Schema, name string) parquet.Node {
	for _, f := range s.Fields() {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// TestOKMeta: an ok result's columns hold its metadata whole, both
// booleans and the file list set (no files is an empty list, not null),
// and give it back; a failure's (the zero ResultMeta) are all null.
func TestOKMeta(t *testing.T) {
	tests := []struct {
		name string
		m    Meta
	}{
		{"files", Meta{Name: new("n"), NameRaw: []byte("n"), NameUTF8Valid: true, TotalSize: new(int64(3)), PieceLength: new(int64(16384)),
			FileCount: new(int32(1)), Files: []File{{Path: "n", PathRaw: []byte("n"), Length: 3}}, Private: true, InfoBytes: []byte("d...e")}},
		{"no files, false flags", Meta{Name: new(""), NameRaw: []byte{}, TotalSize: new(int64(0)), FileCount: new(int32(0)), Files: []File{}}},
		{"nil files", Meta{Name: new(""), NameRaw: []byte{}, TotalSize: new(int64(0)), FileCount: new(int32(0))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := OKMeta(tt.m)
			if r.NameUTF8Valid == nil || *r.NameUTF8Valid != tt.m.NameUTF8Valid || r.Private == nil || *r.Private != tt.m.Private {
				t.Errorf("name_utf8_valid %v, private %v; want %v, %v", r.NameUTF8Valid, r.Private, tt.m.NameUTF8Valid, tt.m.Private)
			}
			if r.Files == nil || len(r.Files) != len(tt.m.Files) {
				t.Errorf("files %#v, want %d (not null)", r.Files, len(tt.m.Files))
			}
			back := r.Meta()
			want := tt.m
			if want.Files == nil {
				want.Files = []File{}
			}
			if !reflect.DeepEqual(back, want) {
				t.Errorf("Meta() = %+v, want %+v", back, want)
			}
		})
	}
	var failed ResultMeta
	if m := failed.Meta(); !reflect.DeepEqual(m, Meta{}) {
		t.Errorf("a failure's Meta() = %+v, want the zero Meta", m)
	}
}
