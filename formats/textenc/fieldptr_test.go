package textenc

import (
	"bytes"
	"io"
	"reflect"
	"testing"
	"unsafe"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/fieldaddr"
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
	S []string        `parquet:"s,list"`
	F float64         `parquet:"f"`
	L []schema.File   `parquet:"l,list"`
	Q []addrListEntry `parquet:"q,list"`
}

type addrListEntry struct {
	N string `parquet:"n"`
	addrDeep
}

// TestFieldAddresses: the address the encoders read each field at
// (fieldAddr with the offset fieldsOf resolved) is reflect's address of
// that field, in every row of a slice, for every row type export writes
// as text, oddRow, and a type with fields embedded two deep, and in the
// elements of their struct lists.
func TestFieldAddresses(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows any // a slice of rows
	}{
		{"state", goldenState()},
		{"torrent", goldenTorrent()},
		{"catalog", goldenCatalog()},
		{"lease", textRows[schema.Lease]()},
		{"peer_penalty", goldenPenalty()},
		{"ledger", textRows[ledgerRow]()},
		{"odd", goldenOdd()},
		{"embedded", textRows[addrRow]()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := reflect.ValueOf(tc.rows)
			checkAddresses(t, fieldsOf(rows.Type().Elem(), nil, 0, nil), rows)
		})
	}
}

// checkAddresses checks the address of every field of fs in every
// element of the slice rows, and recursively of their struct lists'
// elements.
func checkAddresses(t *testing.T, fs []field, rows reflect.Value) {
	t.Helper()
	base, size := fieldaddr.OfSlice([]byte(nil)), rows.Type().Elem().Size()
	if rows.Len() > 0 {
		base = addr(rows.Index(0).Addr().UnsafePointer())
	}
	lists := map[string]int{}
	for i := range rows.Len() {
		row := rows.Index(i)
		for _, f := range fs {
			fv := row.FieldByIndex(f.index)
			got := unsafe.Pointer(fieldaddr.Add(fieldaddr.Add(base, uintptr(i)*size), f.offset))
			if want := fv.Addr().UnsafePointer(); got != want {
				t.Fatalf("%s row %d field %s: at %p, reflect says %p", rows.Type().Elem(), i, f.name, got, want)
			}
			if f.kind == kStructs && fv.Len() > 0 {
				lists[f.name]++
				if f.elem.size != fv.Type().Elem().Size() {
					t.Fatalf("%s: element size %d, want %d", f.name, f.elem.size, fv.Type().Elem().Size())
				}
				checkAddresses(t, f.elem.fields, fv)
			}
		}
	}
	for _, f := range fs {
		if f.kind == kStructs && lists[f.name] == 0 {
			t.Errorf("%s: no row has elements in struct list %s", rows.Type().Elem(), f.name)
		}
	}
}

// TestEmbeddedRows: rows of a type with fields at several depths of
// embedding are written as the reflective encoders write them.
func TestEmbeddedRows(t *testing.T) {
	rows := textRows[addrRow]()
	got, e := fastJSONL(t, rows)
	if want := objectJSONL(t, e, rows); got != want {
		t.Errorf("jsonl:\n got %s\nwant %s", got, want)
	}
	if got, want := fastCSV(t, rows), recordsCSV(t, rows); got != want {
		t.Errorf("csv:\n got %q\nwant %q", got, want)
	}
}

// TestNoAllocationPerRow: writing state rows (plain strings, lists of
// endpoints, times) allocates nothing per row, in JSON Lines and CSV, once
// the encoder's buffers have grown.
func TestNoAllocationPerRow(t *testing.T) {
	rows := goldenState()[6:8] // a v2 row and a failed row with lists
	for i := range rows {
		rows[i].AvoidPeers = []string{"192.0.2.1:6881", "[2001:db8::1]:1"}
	}
	for _, tc := range []struct {
		name string
		e    *Encoder[schema.State]
	}{
		{"jsonl", NewJSONL[schema.State](io.Discard)},
		{"csv", NewCSV[schema.State](io.Discard)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.e.Write(rows); err != nil { // grows the buffers
				t.Fatal(err)
			}
			if n := testing.AllocsPerRun(100, func() {
				if err := tc.e.Write(rows); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("%v allocations a Write of %d rows, want 0", n, len(rows))
			}
		})
	}
	var line []byte
	e := NewJSONL[schema.State](io.Discard)
	if n := testing.AllocsPerRun(100, func() { line, _ = e.AppendJSON(line[:0], &rows[1]) }); n != 0 {
		t.Errorf("%v allocations an AppendJSON, want 0", n)
	}
	if !bytes.Contains(line, []byte(`"avoid_peers":["192.0.2.1:6881","[2001:db8::1]:1"]`)) {
		t.Errorf("AppendJSON wrote %s", line)
	}
}
