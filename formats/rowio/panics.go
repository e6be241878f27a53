package rowio

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
)

// Every decoder boundary recovers panics (Recover, PanicError): parquet-go
// and arrow panic on some crafted inputs, and one bad input must fail as
// bad input, not crash a run. That also turns a panic of infohash's own
// code into a "corrupt input" error, which a fuzz target cannot tell from
// a library's. FailOnOwnPanics makes the difference visible.

// strictPanics counts the FailOnOwnPanics calls in effect.
var strictPanics atomic.Int32

// FailOnOwnPanics is for fuzz targets only, which call it before fuzzing:
// until t's cleanup, PanicError panics again (crashing the fuzz input,
// which Go then saves) instead of returning an error when the panic it was
// given was raised in this module's code, that is when the innermost
// frame of the panicking stack outside the Go standard library and
// runtime is a function of this module. A panic raised in parquet-go or
// arrow (on input they should have refused) still becomes an error.
func FailOnOwnPanics(t interface{ Cleanup(func()) }) {
	strictPanics.Add(1)
	t.Cleanup(func() { strictPanics.Add(-1) })
}

// modulePath prefixes the packages of this module (tools/duckcheck's too).
const modulePath = "github.com/infohash/infohash/"

// panicSite returns the function in which the panic being recovered was
// raised: the innermost frame below runtime.gopanic outside the standard
// library (a slice expression of ours panics in runtime.goPanicSliceB, a
// reflect call in reflect), and whether it is this module's. It must be
// called from the deferred function that recovers the panic (directly or
// not); elsewhere it returns "", false.
func panicSite() (string, bool) {
	pcs := make([]uintptr, 128)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	below := false
	for {
		fr, more := frames.Next()
		switch {
		case !below:
			below = fr.Function == "runtime.gopanic"
		case !standard(fr.Function):
			return fr.Function, strings.HasPrefix(fr.Function, modulePath)
		}
		if !more {
			return "", false
		}
	}
}

// standard reports whether fn (a frame's function, "reflect.Value.SetBytes",
// "github.com/x/y.F") belongs to the standard library or the runtime: its
// import path's first element has no dot.
func standard(fn string) bool {
	first, _, nested := strings.Cut(fn, "/")
	return !nested || !strings.Contains(first, ".")
}

// ownPanic is PanicError's panic under FailOnOwnPanics.
func ownPanic(p any, site, format string) {
	panic(fmt.Sprintf("rowio: a panic in this module's code (%s), not in a decoding library, while reading %s: %v", site, format, p))
}
