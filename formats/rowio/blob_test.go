package rowio

import (
	"bytes"
	"crypto/sha1"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/schema"
)

// blobResult returns result i carrying size bytes of pseudo-random info
// dictionary (seeded by i: the same bytes on every run; random bytes, as
// the SHA-1 piece hashes that make up most of a large info dictionary,
// do not compress).
func blobResult(i, size int) schema.Result {
	info := make([]byte, size)
	rand.NewChaCha8([32]byte{byte(i), byte(i >> 8)}).Read(info)
	info[0] = 'd'
	return schema.Result{InfoHash: sha1.Sum(info), HashType: schema.HashV1, AttemptedAt: 1700000000000 + int64(i),
		Outcome: schema.OutcomeOK, MetadataSize: int64(size),
		ResultMeta: schema.OKMeta(schema.Meta{Name: new("n"), NameRaw: []byte("n"), NameUTF8Valid: true, InfoBytes: info})}
}

// leafIndex returns the index of the leaf column at path in the file's
// schema.
func leafIndex(t *testing.T, b []byte, path ...string) int {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	leaf, ok := pf.Schema().Lookup(path...)
	if !ok {
		t.Fatalf("no column %v", path)
	}
	return leaf.ColumnIndex
}

// pageStatistics returns the statistics of every data page of a column
// chunk of file b, read from the page headers.
func pageStatistics(t *testing.T, b []byte, md *format.ColumnMetaData) []format.Statistics {
	t.Helper()
	s := pageScanner{r: bytes.NewReader(b), lim: DefaultLimits()}
	var out []format.Statistics
	end := chunkStart(md) + md.TotalCompressedSize
	for pos := chunkStart(md); pos < end; {
		h, n, err := s.header(pos, end)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case h.DataPageHeader.Valid:
			out = append(out, h.DataPageHeader.V.Statistics)
		case h.DataPageHeaderV2.Valid:
			out = append(out, h.DataPageHeaderV2.V.Statistics)
		}
		pos += n + int64(h.CompressedPageSize)
	}
	return out
}

// columnIndex decodes the column index (page index bounds) of a column
// chunk of file b.
func columnIndex(t *testing.T, b []byte, cc *format.ColumnChunk) *format.ColumnIndex {
	t.Helper()
	ci := new(format.ColumnIndex)
	if cc.ColumnIndexLength == 0 {
		return ci
	}
	raw := b[cc.ColumnIndexOffset : cc.ColumnIndexOffset+int64(cc.ColumnIndexLength)]
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), raw, ci); err != nil {
		t.Fatal(err)
	}
	return ci
}

func hasBounds(st format.Statistics) bool {
	return st.MinValue != nil || st.MaxValue != nil || st.Min != nil || st.Max != nil
}

// TestBlobColumnsHaveNoStatistics checks that info_bytes has no min/max
// anywhere: not in the column chunk statistics of the footer, not in the
// page headers, not in the page index. Every bound was a whole info
// dictionary (up to 10 MiB), written again and again: a file five times
// the metadata it held, and page headers over what readers accept.
func TestBlobColumnsHaveNoStatistics(t *testing.T) {
	rows := []schema.Result{blobResult(1, 300<<10), blobResult(2, 5<<20), {InfoHash: schema.Hash{3}, Outcome: schema.OutcomeNoPeers}}
	b := writeFile(t, rows, parquet.MaxRowsPerRowGroup(1024))
	md := footerOf(t, b)
	info := leafIndex(t, b, "info_bytes")
	hash := leafIndex(t, b, "info_hash")
	for g := range md.RowGroups {
		cc := &md.RowGroups[g].Columns[info]
		if hasBounds(cc.MetaData.Statistics) {
			t.Errorf("row group %d: info_bytes chunk statistics carry min/max (%d+%d bytes)",
				g, len(cc.MetaData.Statistics.MinValue), len(cc.MetaData.Statistics.MaxValue))
		}
		if cc.MetaData.Statistics.NullCount != 1 {
			t.Errorf("row group %d: info_bytes null count %d, want 1", g, cc.MetaData.Statistics.NullCount)
		}
		for p, st := range pageStatistics(t, b, &cc.MetaData) {
			if hasBounds(st) {
				t.Errorf("row group %d page %d: info_bytes page header carries min/max (%d+%d bytes)", g, p, len(st.MinValue), len(st.MaxValue))
			}
		}
		// No column index at all: parquet-go's has empty bounds for
		// pages that hold values, which page-pruning engines would trust.
		if cc.ColumnIndexOffset != 0 || cc.ColumnIndexLength != 0 {
			t.Errorf("row group %d: info_bytes has a column index (%d bytes)", g, cc.ColumnIndexLength)
		}
		if cc.OffsetIndexLength == 0 {
			t.Errorf("row group %d: info_bytes lost its offset index", g)
		}
		// Other columns keep a column index that decodes, with bounds.
		if ci := columnIndex(t, b, &md.RowGroups[g].Columns[hash]); len(ci.MinValues) == 0 || len(ci.MinValues[0]) != 20 {
			t.Errorf("row group %d: info_hash column index %+v", g, ci)
		}
		// Other columns keep theirs: readers skip row groups by info_hash.
		if st := md.RowGroups[g].Columns[hash].MetaData.Statistics; len(st.MinValue) != 20 || len(st.MaxValue) != 20 {
			t.Errorf("row group %d: info_hash lost its statistics", g)
		}
	}
	if want := 300<<10 + 5<<20; len(b) > want*13/10 {
		t.Errorf("file of %d bytes for %d bytes of info dictionaries", len(b), want)
	}
	checkBlobs(t, b, rows)
}

// checkBlobs reads file b back through Open (the reading limits merge
// applies to fetch's output) and compares its info dictionaries with rows'.
func checkBlobs(t *testing.T, b []byte, rows []schema.Result) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "back.parquet")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open[schema.Result](p, nil)
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	defer r.Close()
	buf := make([]schema.Result, 8)
	i := 0
	for {
		n, err := r.Read(buf)
		for _, got := range buf[:n] {
			if i >= len(rows) || !bytes.Equal(got.InfoBytes, rows[i].InfoBytes) || got.InfoHash != rows[i].InfoHash {
				t.Fatalf("row %d read back differs", i)
			}
			i++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
	}
	if i != len(rows) {
		t.Fatalf("read back %d rows, want %d", i, len(rows))
	}
}

// TestRowGroupsBoundedByBytes checks that a writer allowed 1024 rows per
// row group still ends one once it holds rowGroupBytes: a row group is
// buffered whole before it is written, so 1024 info dictionaries of
// 10 MiB would have held 10 GiB.
func TestRowGroupsBoundedByBytes(t *testing.T) {
	defer func(n int64) { rowGroupBytes = n }(rowGroupBytes)
	rowGroupBytes = 4 << 20
	const n, size = 14, 1 << 20
	rows := make([]schema.Result, n)
	for i := range rows {
		rows[i] = blobResult(i, size)
	}
	b := writeFile(t, rows, parquet.MaxRowsPerRowGroup(1024))
	md := footerOf(t, b)
	if len(md.RowGroups) < 3 {
		t.Errorf("%d rows of %d bytes made %d row groups, want one per %d bytes", n, size, len(md.RowGroups), rowGroupBytes)
	}
	for g, rg := range md.RowGroups {
		if rg.TotalByteSize > rowGroupBytes+2*size {
			t.Errorf("row group %d holds %d bytes, bound %d", g, rg.TotalByteSize, rowGroupBytes)
		}
	}
	if len(b) > n*size*13/10 {
		t.Errorf("file of %d bytes for %d bytes of info dictionaries", len(b), n*size)
	}
	checkBlobs(t, b, rows)
	checkPageIndex(t, b)
	// Row groups still end at the row limit too.
	small := slices.Repeat([]schema.Result{{InfoHash: schema.Hash{1}, Outcome: schema.OutcomeNoPeers}}, 10)
	if md := footerOf(t, writeFile(t, small, parquet.MaxRowsPerRowGroup(4))); len(md.RowGroups) != 3 {
		t.Errorf("10 rows at 4 per row group made %d row groups, want 3", len(md.RowGroups))
	}
}

// TestHasBlob checks which row types are written as having blob columns,
// that the sizer finds each of their blob columns among the Go fields
// (or a 10 MiB value would pass unseen between two checks of the byte
// bound), and that none of them is a type's first column: parquet-go's
// page index reader starts from the first chunk's column index, which
// dropBlobIndexes removes for a blob column.
func TestHasBlob(t *testing.T) {
	for _, c := range []struct {
		name   string
		typ    reflect.Type
		has    bool
		blobs  int
		schema *parquet.Schema
	}{
		{"Result", reflect.TypeFor[schema.Result](), hasBlob[schema.Result](), 5, parquet.SchemaOf(new(schema.Result))},
		{"Torrent", reflect.TypeFor[schema.Torrent](), hasBlob[schema.Torrent](), 5, parquet.SchemaOf(new(schema.Torrent))},
		{"Catalog", reflect.TypeFor[schema.Catalog](), hasBlob[schema.Catalog](), -1, parquet.SchemaOf(new(schema.Catalog))},
		{"State", reflect.TypeFor[schema.State](), hasBlob[schema.State](), 0, parquet.SchemaOf(new(schema.State))},
		{"Observation", reflect.TypeFor[schema.Observation](), hasBlob[schema.Observation](), 0, parquet.SchemaOf(new(schema.Observation))},
	} {
		inSchema := 0
		for _, p := range c.schema.Columns() {
			if isBlob(p) {
				inSchema++
			}
		}
		if c.has != (inSchema > 0) || (c.blobs >= 0 && inSchema != c.blobs) {
			t.Errorf("%s: hasBlob %v, %d blob columns; want %d", c.name, c.has, inSchema, c.blobs)
		}
		if n := len(sizerOf(c.typ)); n != inSchema {
			t.Errorf("%s: the sizer reaches %d blob columns of %d", c.name, n, inSchema)
		}
		if inSchema > 0 && isBlob(c.schema.Columns()[0]) {
			t.Errorf("%s: its first column %v is a blob column", c.name, c.schema.Columns()[0])
		}
	}
}

// TestCloseTwice: a second Close says so and writes nothing.
func TestCloseTwice(t *testing.T) {
	var b bytes.Buffer
	w := NewParquetWriter[schema.Result](&b)
	if _, err := w.Write([]schema.Result{blobResult(1, 100)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n := b.Len()
	if err := w.Close(); err == nil || b.Len() != n {
		t.Fatalf("second Close: %v, %d bytes more", err, b.Len()-n)
	}
	checkBlobs(t, b.Bytes(), []schema.Result{blobResult(1, 100)})
}

// checkPageIndex opens file b as parquet-go does by default (page index
// read whole, as one piece) and checks every chunk's page index: a column
// index for each column but the blob columns, an offset index for all.
func checkPageIndex(t *testing.T, b []byte) {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("opening with the page index: %v", err)
	}
	if _, _, err := pf.ReadPageIndex(); err != nil {
		t.Fatalf("reading the page index: %v", err)
	}
	paths := pf.Schema().Columns()
	for g, rg := range pf.RowGroups() {
		for c, cc := range rg.ColumnChunks() {
			ci, err := cc.ColumnIndex()
			if isBlob(paths[c]) {
				if err == nil {
					t.Errorf("row group %d: %v has a column index", g, paths[c])
				}
			} else if err != nil || ci.NumPages() == 0 {
				t.Errorf("row group %d column %d: column index %v", g, c, err)
			}
			if oi, err := cc.OffsetIndex(); err != nil || oi.NumPages() == 0 {
				t.Errorf("row group %d column %d: offset index %v", g, c, err)
			}
		}
	}
}

// TestNoRowsNoBlobIndex checks that a results file with no row, whose
// Close writes the magic number and the footer only, still reads back.
func TestNoRowsNoBlobIndex(t *testing.T) {
	b := writeFile[schema.Result](t, nil)
	if md := footerOf(t, b); md.NumRows != 0 || len(md.RowGroups) != 0 {
		t.Errorf("footer of an empty file: %d rows, %d row groups", md.NumRows, len(md.RowGroups))
	}
	checkBlobs(t, b, nil)
}

// TestLongNamesReadBack writes results whose name and file path are a few
// MiB long (a hostile info dictionary may hold one of up to 10 MiB) and
// reads them back under the reading limits merge applies: with min/max
// statistics each such value went four times into a page header, past the
// 16 MiB a header may have, and merge refused the whole results file.
func TestLongNamesReadBack(t *testing.T) {
	long := strings.Repeat("n", 5<<20)
	r := blobResult(1, 100)
	r.Name, r.NameRaw = &long, []byte(long)
	r.Files = []schema.File{{Path: "a/" + long, PathRaw: []byte("a/" + long), Length: 1}, {Path: "b", PathRaw: []byte("b"), Length: 2}}
	rows := []schema.Result{r, blobResult(2, 100)}
	b := writeFile(t, rows)
	checkBlobs(t, b, rows)
	checkPageIndex(t, b)
	md := footerOf(t, b)
	for _, cc := range md.RowGroups[0].Columns {
		if isBlob(cc.MetaData.PathInSchema) && hasBounds(cc.MetaData.Statistics) {
			t.Errorf("%v: chunk statistics carry min/max", cc.MetaData.PathInSchema)
		}
		for p, st := range pageStatistics(t, b, &cc.MetaData) {
			if isBlob(cc.MetaData.PathInSchema) && hasBounds(st) {
				t.Errorf("%v page %d: page header carries min/max", cc.MetaData.PathInSchema, p)
			}
		}
	}
	if len(b) > 4*len(long)*13/10 {
		t.Errorf("file of %d bytes for 4 values of %d bytes", len(b), len(long))
	}
}
