package rowio

import (
	"math/bits"
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// A batch of rows handed to parquet-go in one Write call costs far less
// than the same rows one call each (a state export spent three quarters
// of its time in the calls), but WriteParquet writes one row per call:
// parquet-go v0.32.0's scan of an optional column's null bitmap goes
// wrong on some patterns (see WriteParquet). The pattern is exact, so a
// batch can be checked: in writeRowsFuncOfOptional, a run of non-null
// rows that starts at offset y >= 1 of the 64-row word is taken to fill
// the word when the word shifted by y equals (1<<y)-1, i.e. when the run
// is y rows long and every row after it is null; rows past its end are
// then written as values, wrongly, unless the run ends the batch. safeRun
// shortens a batch (of at most 64 rows, one word) to its end (2y) at the
// first such run of any column, and ParquetWriter never lets parquet-go
// split a batch (maxRowsPerWrite is 64; a batch stops at a row group's
// end), so each batch reaches the scan as it was checked.

// nullCheck is one optional column that parquet-go writes through its
// null bitmap: where its field lies in a row, and its kind (how
// parquet-go tells null: a zero number, an empty string, a nil slice).
type nullCheck struct {
	offset uintptr
	kind   reflect.Kind
	size   uintptr
}

// batchPlan is T's null checks; ok is false when T has an optional
// column that batchPlan cannot model (rows then go one per call).
type batchPlan struct {
	checks []nullCheck
	ok     bool
}

var batchPlans sync.Map // reflect.Type → batchPlan

func batchPlanOf[T any]() batchPlan {
	t := reflect.TypeFor[T]()
	if v, ok := batchPlans.Load(t); ok {
		return v.(batchPlan)
	}
	p := batchPlan{ok: true}
	if t.Kind() != reflect.Struct {
		p.ok = false
	} else {
		p.walk(t, 0)
	}
	batchPlans.Store(t, p)
	return p
}

// walk adds the checks of struct t's fields at offset base, as
// parquet-go's writeRowsFuncOfStruct reaches them with a whole batch:
// optional value fields and fields of (required) nested structs. Lists
// and pointers are written a row at a time whatever the batch, so their
// contents need no check.
func (p *batchPlan) walk(t reflect.Type, base uintptr) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("parquet")
		if !f.IsExported() || tag == "-" {
			continue
		}
		opts := strings.Split(tag, ",")
		optional := false
		for _, o := range opts[1:] {
			optional = optional || o == "optional"
		}
		k := f.Type.Kind()
		switch {
		case k == reflect.Pointer || k == reflect.Slice && f.Type.Elem().Kind() != reflect.Uint8:
			continue
		case f.Type == reflect.TypeFor[time.Time]():
			continue // written without the null bitmap
		case k == reflect.Struct && !optional:
			p.walk(f.Type, base+f.Offset)
			continue
		case !optional:
			continue
		}
		switch k {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Bool, reflect.String, reflect.Slice:
			p.checks = append(p.checks, nullCheck{offset: base + f.Offset, kind: k, size: f.Type.Size()})
		default: // floats (-0.0), arrays, maps, optional structs: not modelled
			p.ok = false
			return
		}
	}
}

// nonNull reports whether parquet-go takes the field at ptr for a value.
func (c nullCheck) nonNull(ptr unsafe.Pointer) bool {
	switch c.kind {
	case reflect.String:
		return *(*int)(unsafe.Add(ptr, unsafe.Sizeof(uintptr(0)))) != 0 // its length
	case reflect.Slice:
		return *(*unsafe.Pointer)(ptr) != nil
	}
	for _, b := range unsafe.Slice((*byte)(ptr), c.size) {
		if b != 0 {
			return true
		}
	}
	return false
}

// safeRun is how many of rows (at most 64) parquet-go writes right in one
// Write call: len(rows), or less where a column's null bitmap has the
// pattern its scan misreads.
func (p batchPlan) safeRun(rows unsafe.Pointer, size uintptr, n int) int {
	if n > 64 {
		n = 64
	}
	var masks [64]uint64
	if len(p.checks) > len(masks) {
		return 1
	}
	for k, c := range p.checks {
		var m uint64
		for i := range n {
			if c.nonNull(unsafe.Add(rows, uintptr(i)*size+c.offset)) {
				m |= 1 << i
			}
		}
		masks[k] = m
	}
	for {
		cut := n
		for _, m := range masks[:len(p.checks)] {
			cut = min(cut, misread(m&lowBits(n), n))
		}
		if cut == n {
			return n
		}
		n = cut
	}
}

// lowBits is a mask of the n low bits.
func lowBits(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// misread is n, or the end (2y) of the first run of non-null rows (bits
// of m) that parquet-go's scan of an n-row word misreads: one that starts
// at y >= 1, is y long and is followed by nulls only, with rows after it.
func misread(m uint64, n int) int {
	i := 0
	for i < n {
		rest := m >> i
		if rest == 0 {
			return n
		}
		y := i + bits.TrailingZeros64(rest) // a run of values starts at y
		if y == 0 {
			i = bits.TrailingZeros64(^m)
			continue
		}
		if y < 32 && m>>y == 1<<y-1 && 2*y < n {
			return 2 * y
		}
		i = y + bits.TrailingZeros64(^(m >> y))
	}
	return n
}

// maxRowsOf is the row group size opts give a parquet-go writer.
func maxRowsOf(opts []parquet.WriterOption) int64 {
	c, err := parquet.NewWriterConfig(opts...)
	if err != nil || c.MaxRowsPerRowGroup <= 0 {
		return parquet.DefaultMaxRowsPerRowGroup
	}
	return c.MaxRowsPerRowGroup
}
