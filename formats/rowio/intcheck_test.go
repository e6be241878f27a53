package rowio

import (
	"errors"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestOverflowColumns: the columns named are those whose values may be
// past the field they are read into, by the column's type alone: a
// UINTEGER for an int32, anything but a TINYINT for an int8, a UBIGINT
// for an int64; a type whose values the field always holds is not named.
func TestOverflowColumns(t *testing.T) {
	type fields struct {
		A int32 `parquet:"a"`
		B int8  `parquet:"b,int(8)"`
		C int64 `parquet:"c"`
	}
	tests := []struct {
		name   string
		schema *parquet.Schema
		want   []string
	}{
		{"the fields' own types", parquet.SchemaOf(fields{}), nil},
		{"unsigned 32 and 64 bits", parquet.SchemaOf(struct {
			A uint32 `parquet:"a"`
			B int8   `parquet:"b,int(8)"`
			C uint64 `parquet:"c"`
		}{}), []string{"a", "c"}},
		{"narrower unsigned", parquet.SchemaOf(struct {
			A uint16 `parquet:"a"`
			B uint8  `parquet:"b"`
			C uint32 `parquet:"c"`
		}{}), []string{"b"}},
		{"a plain INT32 into an int8", parquet.SchemaOf(struct {
			A int16 `parquet:"a"`
			B int32 `parquet:"b"`
		}{}), []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OverflowColumns[fields](tt.schema); !slices.Equal(got, tt.want) {
				t.Fatalf("OverflowColumns = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestInt32Past: a value of an INT32 column is judged and reported as
// the file holds it, an unsigned column's as its uint32.
func TestInt32Past(t *testing.T) {
	tests := []struct {
		name     string
		v        int32
		unsigned bool
		toInt8   bool
		want     string // "" for a value the field holds
	}{
		{"INT32 -1 into int8", -1, false, true, ""},
		{"INT32 300 into int8", 300, false, true, `column "c" row 8: 300 is outside int8`},
		{"INT32 -129 into int8", -129, false, true, `column "c" row 8: -129 is outside int8`},
		{"UINTEGER 127 into int8", 127, true, true, ""},
		{"UINTEGER 2^32-1 into int8", -1, true, true, `column "c" row 8: 4294967295 is outside int8`},
		{"UINTEGER 2^32-296 into int8", -296, true, true, `column "c" row 8: 4294967000 is outside int8`},
		{"INT32 min into int32", -1 << 31, false, false, ""},
		{"UINTEGER 2^31-1 into int32", 1<<31 - 1, true, false, ""},
		{"UINTEGER 2^31 into int32", -1 << 31, true, false, `column "c" row 8: 2147483648 is outside int32`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Int32Past("c", 7, tt.v, tt.unsigned, tt.toInt8)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("%v, want nil", err)
				}
				return
			}
			if _, ok := errors.AsType[*IntRangeError](err); !ok || err.Error() != tt.want {
				t.Fatalf("%v, want IntRangeError %q", err, tt.want)
			}
		})
	}
}
