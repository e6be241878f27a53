package rowio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// TestStoredTypeError: a column the footer stores as another physical
// type than its logical (or converted) type is read as is a wrong schema
// naming both, before any page is decoded as what it is not; a column
// the reader does not read is not looked at.
func TestStoredTypeError(t *testing.T) {
	type stored struct {
		A int32  `parquet:"a"`
		B int32  `parquet:"b"`
		C string `parquet:"c"`
	}
	type want struct { // as the footer stores them: only the types read differ
		A int32  `parquet:"a"`
		B string `parquet:"b"`
	}
	retype := func(name string, lt format.LogicalTypeValue) func(*format.FileMetaData) {
		return func(md *format.FileMetaData) {
			for i := range md.Schema {
				if md.Schema[i].Name == name {
					md.Schema[i].LogicalType = format.LogicalType{Value: lt}
				}
			}
		}
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.parquet")
	w, err := Create[stored](plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]stored{{1, 2, "x"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		edit func(*format.FileMetaData)
		want string
	}{
		{"TIMESTAMP on INT32", rowiotest.Int32Timestamp(t, false, "a"),
			`wrong schema: column "a" is TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS) stored as INT32, want a TIMESTAMP (INT64)`},
		{"TIMESTAMP_MILLIS on INT32", rowiotest.Int32Timestamp(t, true, "a"),
			`wrong schema: column "a" is TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS) stored as INT32, want a TIMESTAMP (INT64)`},
		{"STRING on INT32", retype("b", &format.StringType{}),
			`wrong schema: column "b" is STRING stored as INT32, want a STRING (BYTE_ARRAY)`},
		{"INT(64) on INT32", retype("b", &format.IntType{BitWidth: 64, IsSigned: true}),
			`wrong schema: column "b" is INT(64,true) stored as INT32, want an INT (INT64)`},
		{"unread column", retype("c", &format.IntType{BitWidth: 64, IsSigned: true}), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".parquet")
			if err := os.WriteFile(path, rowiotest.EditFooter(t, b, tt.edit), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.want == "" { // c is not read: a and b are
				r, err := Open[struct {
					A int32 `parquet:"a"`
					B int32 `parquet:"b"`
				}](path, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if rows, err := r.ReadAll(); err != nil || len(rows) != 1 || rows[0].A != 1 || rows[0].B != 2 {
					t.Fatalf("read %v, %v", rows, err)
				}
				return
			}
			r, err := Open[want](path, nil)
			if err == nil {
				rows, rerr := r.ReadAll()
				r.Close()
				t.Fatalf("opened: %v, %v", rows, rerr)
			}
			if !strings.HasPrefix(err.Error(), path+": "+tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v\nwant %q", err, path+": "+tt.want)
			}
		})
	}
}
