package rowio

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
)

// Limits bound what one untrusted input may make a reader allocate. They
// are checked against what the file declares (footer, page headers,
// compression frames) before anything is decoded, so that a small crafted
// file that claims petabytes fails at once with a clear message.
type Limits struct {
	MaxRows          int64 // rows in one file
	MaxRowGroupRows  int64 // rows in one row group (dedup buffers a row group's columns)
	MaxRowGroupBytes int64 // uncompressed bytes of one row group, declared or summed over its pages
	MaxFooterBytes   int64 // the Parquet footer
	MaxMetadataBytes int64 // memory the decoded footer may take
	MaxSchemaDepth   int   // nesting of the Parquet schema
	MaxPageHeader    int64 // one page header (Arrow C++ uses 16 MiB too)
	MaxPageBytes     int64 // one page, compressed, uncompressed or decoded
	MaxPageValues    int64 // values in one page
	MaxArrowMetadata int64 // one Arrow IPC message's metadata (schema, batch layout)
	MaxArrowBuffer   int64 // one buffer of an Arrow IPC message
	MaxArrowLive     int64 // Arrow memory held at once while reading a stream
	// MaxValueBytes, if set, bounds each value of the Parquet BYTE_ARRAY
	// leaf columns it gives a bound for (by the leaf's path; 0: none): a
	// page of such a column that declares more bytes than its values
	// could take at that size each is refused (a *ValueLimitError)
	// before it is read. DefaultLimits sets none.
	MaxValueBytes func(path []string) int64
}

// DefaultLimits are generous for real data: the largest row groups common
// writers make (64 Mi rows, pyarrow's old default; DuckDB writes 122,880),
// pages of up to 16 Mi values (parquet-mr and Arrow write 20,000) and the
// largest values infohash stores (10 MiB info dictionaries) all pass.
func DefaultLimits() Limits {
	return Limits{
		MaxRows:          10_000_000_000,
		MaxRowGroupRows:  1 << 26,
		MaxRowGroupBytes: 64 << 30,
		MaxFooterBytes:   64 << 20,
		MaxMetadataBytes: 1 << 30,
		MaxSchemaDepth:   64,
		MaxPageHeader:    16 << 20,
		MaxPageBytes:     512 << 20,
		MaxPageValues:    1 << 24,
		MaxArrowMetadata: 4 << 20,
		MaxArrowBuffer:   1 << 30,
		MaxArrowLive:     4 << 30,
	}
}

// ErrCorrupt is matched (errors.Is) by every CorruptError.
var ErrCorrupt = errors.New("corrupt input")

// ErrLimit is wrapped by errors about input that declares more than a
// reading limit allows.
var ErrLimit = errors.New("over a reading limit")

// ErrUnsupported is wrapped by errors about valid Parquet that infohash
// does not read (encryption, some compression codecs).
var ErrUnsupported = errors.New("unsupported Parquet")

// CorruptError reports an input that cannot be decoded: its structure is
// inconsistent, or the decoding library panicked on it.
type CorruptError struct {
	Format string // "Parquet", "Arrow IPC stream"
	Err    error
}

func (e *CorruptError) Error() string        { return "corrupt " + e.Format + ": " + e.Err.Error() }
func (e *CorruptError) Unwrap() error        { return e.Err }
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func corrupt(format string, a ...any) error {
	return &CorruptError{Format: "Parquet", Err: fmt.Errorf(format, a...)}
}

func overLimit(what string, got, limit int64) error {
	return fmt.Errorf("%w: %s is %d, the limit is %d", ErrLimit, what, got, limit)
}

// Recover turns a panic in the function that defers it into a
// CorruptError in *err naming the input's format. Defer it at the boundary
// of reading one input: parquet-go and arrow panic on some crafted files,
// and one bad file must fail as bad input, not crash the program.
//
//	defer rowio.Recover(&err, "Parquet")
func Recover(err *error, format string) {
	if p := recover(); p != nil {
		*err = PanicError(p, format)
	}
}

// PanicError is the error for a panic value recovered while decoding an
// input of the given format: the ErrLimit error a limited allocator
// panicked with, or else a CorruptError. It logs the panicking stack at
// debug level. Call it from the deferred function that recovered p: under
// FailOnOwnPanics (fuzz targets) it panics again when p was raised in this
// module's code rather than in a decoding library.
func PanicError(p any, format string) error {
	slog.Debug("rowio: decoder panic", "format", format, "panic", p, "stack", string(debug.Stack()))
	if e, ok := p.(error); ok && errors.Is(e, ErrLimit) {
		return e
	}
	if strictPanics.Load() > 0 {
		if site, own := panicSite(); own {
			ownPanic(p, site, format)
		}
	}
	return &CorruptError{Format: format, Err: fmt.Errorf("the decoder failed: %v", p)}
}
