package rowio

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/infohash/infohash/formats/schema"
)

// Fields at several depths of embedding and alignments: offsets that a
// sum over the index path gets wrong if it misses a step.
type addrDeep struct {
	X int32   `parquet:"x"`
	Y [3]byte `parquet:"y"`
}

type addrMid struct {
	B bool `parquet:"b"`
	addrDeep
	P *int64 `parquet:"p,optional"`
}

type addrRow struct {
	A int8 `parquet:"a"`
	addrMid
	S []string `parquet:"s,list"`
	F float64  `parquet:"f"`
}

// TestFieldAddresses: the address the Arrow writer reads each field at
// (fieldAddr with the plan's offset) is reflect's address of that field,
// in every row of a slice, for every row type the writer writes and for
// the elements of their struct lists.
func TestFieldAddresses(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows any // a slice of rows
	}{
		{"state", goldenRows[schema.State]()},
		{"torrent", goldenRows[schema.Torrent]()},
		{"catalog", goldenRows[schema.Catalog]()},
		{"lease", goldenRows[schema.Lease]()},
		{"peer_penalty", goldenRows[schema.PeerPenalty]()},
		{"observation", goldenRows[schema.Observation]()},
		{"job", goldenRows[schema.Job]()},
		{"result", goldenRows[schema.Result]()},
		{"embedded", goldenRows[addrRow]()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := reflect.ValueOf(tc.rows)
			checkAddresses(t, planOf(rows.Type().Elem()), rows)
		})
	}
}

// checkAddresses checks the address of every field of p in every element
// of the slice rows, and recursively of their struct lists' elements.
func checkAddresses(t *testing.T, p *plan, rows reflect.Value) {
	t.Helper()
	if p.size != rows.Type().Elem().Size() {
		t.Fatalf("%s: plan size %d, want %d", p.typ, p.size, rows.Type().Elem().Size())
	}
	base := rowAddr(rows.UnsafePointer())
	lists := 0
	for i := range rows.Len() {
		row := rows.Index(i)
		for _, f := range p.fields {
			fv := row.FieldByIndex(f.index)
			if got, want := unsafe.Pointer(fieldAddr(base, i, p.size, f.offset)), fv.Addr().UnsafePointer(); got != want {
				t.Fatalf("%s row %d field %s: at %p, reflect says %p", p.typ, i, f.name, got, want)
			}
			if f.kind == kStructList && fv.Len() > 0 {
				lists++
				checkAddresses(t, f.elem, fv)
			}
		}
	}
	for _, f := range p.fields {
		if f.kind == kStructList && lists == 0 {
			t.Errorf("%s: no row has elements in struct list %s", p.typ, f.name)
		}
	}
}

// TestArrowWriterEmbedded: rows of a type with fields at several depths
// of embedding come back from the Arrow stream (read by the reflective
// reader) as written.
func TestArrowWriterEmbedded(t *testing.T) {
	in := goldenRows[addrRow]()
	var b bytes.Buffer
	w := NewArrowWriter[addrRow]("test", &b)
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open[addrRow]("-", &b)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("read %d rows, want %d", len(got), len(in))
	}
	for i := range in {
		// A nil list reads back as an empty one: the column is not nullable.
		if in[i].S == nil {
			in[i].S = got[i].S
		}
		if !reflect.DeepEqual(got[i], in[i]) {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], in[i])
		}
	}
}
