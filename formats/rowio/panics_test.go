package rowio

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

// decodeBoundary runs f behind a recover that calls PanicError, as every
// decoder boundary does; again is what PanicError panicked with, if it did.
func decodeBoundary(f func()) (err error, again any) {
	defer func() { again = recover() }()
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = PanicError(p, "test input")
			}
		}()
		f()
	}()
	return err, again
}

// badStrings is a string array whose second value's offsets decrease.
func badStrings() *array.String {
	offs := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 10, 5}))
	vals := memory.NewBufferBytes([]byte("0123456789"))
	return array.NewStringData(array.NewData(arrow.BinaryTypes.String, 2, []*memory.Buffer{nil, offs, vals}, nil, 0, 0))
}

var sink any

// TestFailOnOwnPanics: under FailOnOwnPanics, PanicError panics again for
// a panic raised in this module's code (a runtime error, an explicit
// panic, a standard library call of ours), and returns an error for one
// raised in arrow or parquet-go, or for an ErrLimit panic; without it,
// every panic is an error.
func TestFailOnOwnPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
		own  bool
	}{
		{"index out of range", func() { var b []byte; sink = b[len(fmt.Sprint(sink))+3] }, true},
		{"explicit panic", func() { panic("ours") }, true},
		{"nil map write", func() { var m map[int]int; m[1] = 2 }, true},
		{"reflect misuse", func() { reflect.ValueOf(1).SetInt(2) }, true},
		{"arrow", func() { sink = badStrings().Value(1) }, false},
		{"parquet-go", func() { sink = parquet.SchemaOf(struct{ C chan int }{}) }, false},
		{"limit", func() { panic(fmt.Errorf("%w: too much", ErrLimit)) }, false},
	}
	for _, strict := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s strict=%v", tt.name, strict), func(t *testing.T) {
				if strict {
					FailOnOwnPanics(t)
				}
				err, again := decodeBoundary(tt.f)
				if strict && tt.own {
					if err != nil || again == nil || !strings.Contains(fmt.Sprint(again), "a panic in this module's code (github.com/infohash/infohash/formats/rowio.") {
						t.Fatalf("err %v, panicked again with %v: want a panic naming the function", err, again)
					}
					return
				}
				if again != nil || err == nil {
					t.Fatalf("err %v, panicked again with %v: want an error", err, again)
				}
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrLimit) {
					t.Fatalf("err %v is neither corrupt input nor a limit", err)
				}
			})
		}
	}
	if strictPanics.Load() != 0 {
		t.Fatalf("FailOnOwnPanics still in effect after its tests (%d)", strictPanics.Load())
	}
}

// TestPanicSiteOutsideRecover: called without a panic under way,
// panicSite names nothing.
func TestPanicSiteOutsideRecover(t *testing.T) {
	if site, own := panicSite(); site != "" || own {
		t.Fatalf("%q %v", site, own)
	}
}
