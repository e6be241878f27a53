package rowio

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"testing"
)

// capRow has a bounded binary column of its own and bounded strings in
// a list, for the value-cap fuzz targets.
type capRow struct {
	ID   int64    `parquet:"id"`
	Val  []byte   `parquet:"val,optional"`
	Tags []string `parquet:"tags,list"`
}

// The fuzz targets' bounds: valCap bytes a val, tagCap a tag; batches of
// at most fuzzBatchRows rows, Arrow buffers small enough that a worker
// never holds much.
const (
	valCap        = 100
	tagCap        = 20
	fuzzBatchRows = 1 << 12
)

// fuzzCapLimits are the limits the value-cap fuzz targets read within,
// with the bounds set or (capped false) not.
func fuzzCapLimits(capped bool) Limits {
	lim := DefaultLimits()
	lim.MaxRowGroupRows = fuzzBatchRows
	lim.MaxArrowBuffer = 1 << 20
	lim.MaxArrowLive = 16 << 20
	if capped {
		lim.MaxValueBytes = func(path []string) int64 {
			switch {
			case slices.Equal(path, []string{"val"}):
				return valCap
			case slices.Equal(path, []string{"tags", "list", "element"}):
				return tagCap
			}
			return 0
		}
	}
	return lim
}

// readCapBatches reads stream within lim, a record batch a Read (the
// reader returns a batch's rows before it reads the next one, and no
// batch has more rows than the buffer): the rows of each batch, and the
// error that stopped it, nil at the end.
func readCapBatches(stream []byte, lim Limits) ([][]capRow, error) {
	r, err := OpenArrowLimited[capRow]("fuzz", bytes.NewReader(stream), lim)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var batches [][]capRow
	buf := make([]capRow, fuzzBatchRows)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			batches = append(batches, slices.Clone(buf[:n]))
		}
		if errors.Is(err, io.EOF) {
			return batches, nil
		}
		if err != nil {
			return batches, err
		}
	}
}

// capSeeds are Arrow streams of capRow rows, uncompressed, LZ4 and ZSTD:
// within the bounds, with a batch over one of them, and cut short.
func capSeeds(t testing.TB) [][]byte {
	val := func(n int) []byte { return bytes.Repeat([]byte{'v'}, n) }
	tags := func(n ...int) []string {
		var s []string
		for _, k := range n {
			s = append(s, string(bytes.Repeat([]byte{'t'}, k)))
		}
		return s
	}
	under := [][]capRow{
		{{ID: 1, Val: val(valCap), Tags: tags(tagCap, 1)}, {ID: 2}, {ID: 3, Val: val(3), Tags: tags(0)}},
		{{ID: 4, Val: val(valCap - 1)}},
	}
	overVal := [][]capRow{{{ID: 1, Val: val(3)}}, {{ID: 2, Val: val(3 * valCap)}, {ID: 3}}}
	overTag := [][]capRow{{{ID: 1, Tags: tags(tagCap*5, 1)}}}
	var seeds [][]byte
	for _, codec := range []string{"", "lz4", "zstd"} {
		for _, batches := range [][][]capRow{under, overVal, overTag} {
			s := codecStream(t, codec, batches...)
			seeds = append(seeds, s, s[:len(s)*2/3])
		}
	}
	// A batch of one row whose val column declares more values, the
	// first over the bound (TestArrowValueLimitBatchRows).
	seeds = append(seeds, longColumnStream(t, "", 1, 64, 64*valCap), longColumnStream(t, "zstd", 1, 64, 64*valCap))
	return seeds
}

// FuzzArrowValueLimit reads arbitrary bytes as an Arrow stream with value
// bounds set (OpenArrowLimited) and again without them. No panic; the
// bounded column of a row's holds, in each batch read, at most its rows'
// worth of values at the bound (and the padding a writer may add): a
// batch is refused or within it; with the bounds, the reader gives what
// it gives without them (the same rows, the same error) unless it refuses
// a batch over a bound (a *ValueLimitError), after the same rows.
func FuzzArrowValueLimit(f *testing.F) {
	FailOnOwnPanics(f)
	for _, s := range capSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		capped, err := readCapBatches(data, fuzzCapLimits(true))
		for i, b := range capped {
			sum := 0
			for _, r := range b {
				sum += len(r.Val)
			}
			if bound := len(b)*valCap + valueSlack; sum > bound {
				t.Fatalf("batch %d: %d rows hold %d bytes of val, over %d", i, len(b), sum, bound)
			}
		}
		free, ferr := readCapBatches(data, fuzzCapLimits(false))
		if _, over := errors.AsType[*ValueLimitError](err); over {
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("a ValueLimitError that is no ErrLimit: %v", err)
			}
			if len(capped) > len(free) || !sameBatches(capped, free[:len(capped)]) {
				t.Fatalf("refused after %d batches that differ from the %d read without bounds", len(capped), len(free))
			}
			return
		}
		if !sameBatches(capped, free) {
			t.Fatalf("%d batches with bounds, %d without, which differ (errors %v, %v)", len(capped), len(free), err, ferr)
		}
		if (err == nil) != (ferr == nil) || err != nil && err.Error() != ferr.Error() {
			t.Fatalf("with bounds: %v\nwithout: %v", err, ferr)
		}
	})
}

// sameBatches reports whether a and b hold the same batches of rows (nil
// and empty alike).
func sameBatches(a, b [][]capRow) bool {
	return slices.EqualFunc(a, b, func(x, y []capRow) bool { return reflect.DeepEqual(x, y) })
}

// honestRows makes rows within the bounds from fuzz bytes: a byte a row,
// its val as long as the byte says (null at 255), its tags as long as
// its last bits say; a new batch where cut says (one bit a row).
func honestRows(spec []byte, cut uint64) [][]capRow {
	var batches [][]capRow
	var b []capRow
	for i, x := range spec {
		r := capRow{ID: int64(i)}
		if x != 255 {
			r.Val = bytes.Repeat([]byte{x}, int(x)%(valCap+1))
		}
		for k := range int(x) % 3 {
			r.Tags = append(r.Tags, string(bytes.Repeat([]byte{'t'}, (int(x)+k*7)%(tagCap+1))))
		}
		b = append(b, r)
		if cut>>(i%64)&1 == 1 {
			batches, b = append(batches, b), nil
		}
	}
	if len(b) > 0 {
		batches = append(batches, b)
	}
	return batches
}

// sameRows compares rows as a reader gives them back: an empty val or
// tag list reads as nil.
func sameRows(a, b []capRow) bool {
	norm := func(rs []capRow) []capRow {
		out := slices.Clone(rs)
		for i := range out {
			if len(out[i].Val) == 0 {
				out[i].Val = nil
			}
			if len(out[i].Tags) == 0 {
				out[i].Tags = nil
			}
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// FuzzArrowValueLimitHonest writes streams of rows within the bounds
// (uncompressed, LZ4 or ZSTD, in batches the input chooses) and reads
// them with the bounds and without: both read every row back, the same.
func FuzzArrowValueLimitHonest(f *testing.F) {
	FailOnOwnPanics(f)
	f.Add([]byte{valCap, 0, 255, 3, valCap}, uint64(0b10), uint8(0))
	f.Add([]byte{valCap, valCap, valCap, 255, 255, 7}, uint64(0b100), uint8(1))
	f.Add(bytes.Repeat([]byte{valCap}, 300), uint64(1<<40), uint8(2))
	f.Fuzz(func(t *testing.T, spec []byte, cut uint64, codec uint8) {
		batches := honestRows(spec, cut)
		stream := codecStream(t, []string{"", "lz4", "zstd"}[codec%3], batches...)
		want := slices.Concat(batches...)
		for _, capped := range []bool{true, false} {
			got, err := readCapBatches(stream, fuzzCapLimits(capped))
			if err != nil || !sameRows(slices.Concat(got...), want) {
				t.Fatalf("bounds %v: read %d batches (err %v) of %d rows written in %d", capped, len(got), err, len(want), len(batches))
			}
		}
	})
}
