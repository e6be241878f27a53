package rowiotest

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// hashRow is a row of RequiredWithNulls's file.
type hashRow struct {
	InfoHash   []byte `parquet:"info_hash,optional"`
	HashType   int8   `parquet:"hash_type,optional,int(8)"`
	ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	Source     string `parquet:"source"`
}

// RequiredWithNulls returns a Parquet file of 3 rows (info_hash,
// hash_type, observed_at, source: what dedup and fetch both read) whose
// info_hash column the footer declares REQUIRED while its one data page
// (v2) says row 1 is null: the page holds 2 values for 3 rows. It is how
// a writer that ignores the schema (or a footer edited by hand) leaves a
// required column with nulls.
func RequiredWithNulls(t testing.TB) []byte {
	t.Helper()
	return RequiredWithNullsPages(t, 2)
}

// RequiredWithNullsPages is RequiredWithNulls with data pages of version
// v (1 or 2). A v1 page has no null count in its header: its nulls are
// in the definition levels at the start of its data, which a reader of a
// REQUIRED column does not expect there.
func RequiredWithNullsPages(t testing.TB, v int) []byte {
	t.Helper()
	rows := []hashRow{{InfoHash: bytes.Repeat([]byte{1}, 20), ObservedAt: 1, Source: "import"},
		{ObservedAt: 2, Source: "import"}, {InfoHash: bytes.Repeat([]byte{2}, 20), ObservedAt: 3, Source: "import"}}
	return MarkRequired(t, Write(t, rows, parquet.DataPageVersion(v)), "info_hash")
}

// Write returns the Parquet file parquet-go writes of rows with opts.
func Write[T any](t testing.TB, rows []T, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// MarkRequired returns file with its footer rewritten to declare the
// top-level column named column REQUIRED, its pages as they were: an
// OPTIONAL column's nulls are then nulls in a REQUIRED column.
func MarkRequired(t testing.TB, file []byte, column string) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(file[len(file)-8:]))
	data := file[:len(file)-8-n]
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), file[len(data):len(file)-8], &md); err != nil {
		t.Fatal(err)
	}
	for i := range md.Schema {
		if md.Schema[i].Name == column {
			md.Schema[i].RepetitionType.V = format.Required
		}
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(bytes.Clone(data), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}
