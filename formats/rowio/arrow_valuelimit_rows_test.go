package rowio

import (
	"bytes"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// longColumnStream is an Arrow stream of one record batch of rows rows
// whose val column holds n values (n > rows: a column longer than its
// batch, which arrow-go reads and rowio's checks allow), the first of
// big bytes and the others empty, compressed with codec.
func longColumnStream(t testing.TB, codec string, rows, n, big int) []byte {
	t.Helper()
	mem := memory.DefaultAllocator
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	for i := range rows {
		ib.Append(int64(i))
	}
	vb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	defer vb.Release()
	vb.Append(make([]byte, big))
	for range n - 1 {
		vb.Append(nil)
	}
	ids, vals := ib.NewArray(), vb.NewArray()
	defer ids.Release()
	defer vals.Release()
	s := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "val", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil)
	rec := array.NewRecord(s, []arrow.Array{ids, vals}, int64(rows))
	defer rec.Release()
	var out bytes.Buffer
	opts := []ipc.Option{ipc.WithSchema(s)}
	switch codec {
	case "lz4":
		opts = append(opts, ipc.WithLZ4())
	case "zstd":
		opts = append(opts, ipc.WithZstd())
	}
	w := ipc.NewWriter(&out, opts...)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestArrowValueLimitBatchRows: the values a bounded column of a row's
// may hold in a record batch are its batch's rows' (less nulls), not the
// more its field node may declare: a batch of one row whose val column
// declares 4096 values, the first of 400 KB, read as one row of 400 KB
// under a bound of 100 bytes a value. Found by checking
// FuzzArrowValueLimit's property by hand.
func TestArrowValueLimitBatchRows(t *testing.T) {
	for _, codec := range []string{"", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			stream := longColumnStream(t, codec, 1, 4096, 4096*100)
			rows, err := readArrowLimited[blobRow](stream, capVal(100))
			if got, ok := errors.AsType[*ValueLimitError](err); !ok || got.Bytes != 4096*100 || got.FirstRow != 1 || got.Rows != 1 || got.Values != 1 {
				t.Fatalf("read %d rows (err %v), want the batch refused", len(rows), err)
			}
			if rows, err := readArrowLimited[blobRow](longColumnStream(t, codec, 1, 4096, 100), capVal(100)); err != nil || len(rows) != 1 {
				t.Fatalf("within the bound: %d rows, err %v", len(rows), err)
			}
		})
	}
}

// TestArrowBatchRowsLimit: a record batch of more rows than the reader's
// MaxRowGroupRows (OpenArrowLimited's, not the default's) is refused,
// as the value-cap watcher counts on.
func TestArrowBatchRowsLimit(t *testing.T) {
	rows := make([]blobRow, 5000)
	for i := range rows {
		rows[i].ID = int64(i)
	}
	stream := codecStream(t, "", rows)
	lim := DefaultLimits()
	lim.MaxRowGroupRows = 4096
	got, err := readArrowLimited[blobRow](stream, lim)
	if !errors.Is(err, ErrLimit) || len(got) != 0 {
		t.Fatalf("read %d rows, err %v; want the batch of 5000 rows refused", len(got), err)
	}
	lim.MaxRowGroupRows = 5000
	if got, err := readArrowLimited[blobRow](stream, lim); err != nil || len(got) != 5000 {
		t.Fatalf("at the limit: %d rows, err %v", len(got), err)
	}
}
