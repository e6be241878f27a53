package statecol_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// checkParquetGo fails t when parquet-go's own reader, reading a state
// file data of today's schema that statecol read as rows, reads other
// rows: statecol decodes the columns itself (fields.go, rawdelta.go), and
// parquet-go's generic reader is the reference its writer is held to
// (TestWriteStateMatchesParquetGo). A file parquet-go refuses or panics
// on is left out: statecol checks less than it in places (it reads what
// it needs), and parquet-go's panics are not ours to fix.
func checkParquetGo(t *testing.T, data []byte, rows []schema.State) {
	t.Helper()
	want, ok := readParquetGo(data)
	if !ok {
		return
	}
	if len(want) != len(rows) {
		t.Fatalf("statecol read %d rows, parquet-go %d", len(rows), len(want))
	}
	for i := range rows {
		if g, w := stateString(rows[i]), stateString(want[i]); g != w {
			t.Fatalf("row %d: statecol read\n%s\nparquet-go\n%s", i, g, w)
		}
	}
}

// readParquetGo reads data with parquet-go's generic reader, when its
// schema is schema.State's; ok is false when it refuses or panics.
func readParquetGo(data []byte) (rows []schema.State, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil || !parquet.EqualNodes(pf.Schema(), parquet.SchemaOf(schema.State{})) || pf.NumRows() > 1<<16 {
		return nil, false
	}
	rows = make([]schema.State, pf.NumRows()+1)
	r := parquet.NewGenericReader[schema.State](pf)
	n := 0
	for n < len(rows) {
		k, err := r.Read(rows[n:])
		n += k
		if err != nil {
			if n == int(pf.NumRows()) && errors.Is(err, io.EOF) {
				break
			}
			return nil, false
		}
	}
	return rows[:n], true
}

// stateString is a row as text, an empty list or byte string as null
// (the readers differ there, the stored values do not).
func stateString(s schema.State) string {
	if len(s.AvoidPeers) == 0 {
		s.AvoidPeers = nil
	}
	if len(s.Peers) == 0 {
		s.Peers = nil
	}
	if len(s.InfoHashV2) == 0 {
		s.InfoHashV2 = nil
	}
	return fmt.Sprintf("%+v", s)
}

// TestParquetGoReadsStateFiles: parquet-go reads a state file statecol
// wrote, so that checkParquetGo compares rather than skips.
func TestParquetGoReadsStateFiles(t *testing.T) {
	var b bytes.Buffer
	if err := statecol.WriteState(&b, sample(300)); err != nil {
		t.Fatal(err)
	}
	rows, ok := readParquetGo(b.Bytes())
	if !ok || len(rows) != 300 {
		t.Fatalf("parquet-go read %d rows (%v) of 300", len(rows), ok)
	}
	checkParquetGo(t, b.Bytes(), sample(300))
}
