package rowio

import (
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
