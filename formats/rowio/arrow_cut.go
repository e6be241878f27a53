package rowio

import (
	"errors"
	"fmt"
)

// ErrCut is matched (errors.Is) by every CutError.
var ErrCut = errors.New("Arrow IPC stream cut mid-message")

// CutError reports an Arrow IPC stream that ends inside a message: its
// writer stopped in the middle of writing one (killed, or its pipe cut),
// which is not a corrupt stream (CorruptError): every message before the
// cut was whole and read. A stream that ends between two messages,
// without the end-of-stream marker, reads as ended there, unless its
// reader requires the marker (Reader.RequireEndMarker): then it is a
// CutError with NoEnd set.
type CutError struct {
	// Rows counts the rows of the whole record batches before the cut,
	// all of which a Reader returned before this error.
	Rows int64
	// Whole is the length in bytes of the whole messages before the cut:
	// the cut message starts there. Size is the stream's length.
	Whole, Size int64
	// Schema reports whether the schema message was whole: when false,
	// the cut is inside it, and nothing before it tells what the stream
	// holds.
	Schema bool
	// NoEnd reports a stream that ended between two messages without
	// its end-of-stream marker (Whole == Size): nothing of a message was
	// cut, but its writer stopped without closing it, as one killed
	// between two batches does.
	NoEnd bool
}

func (e *CutError) Error() string {
	if e.NoEnd {
		return fmt.Sprintf("the Arrow IPC stream ended without its end-of-stream marker after %d complete rows (%d bytes of whole messages)",
			e.Rows, e.Whole)
	}
	if !e.Schema {
		return fmt.Sprintf("the Arrow IPC stream was cut mid-message: it ends %d bytes into its schema", e.Size)
	}
	return fmt.Sprintf("the Arrow IPC stream was cut mid-message after %d complete rows (%d bytes of whole messages, then %d bytes of a cut one)",
		e.Rows, e.Whole, e.Size-e.Whole)
}

func (e *CutError) Is(target error) bool { return target == ErrCut }

// AsCut returns the CutError in err's chain, if any.
func AsCut(err error) (*CutError, bool) {
	var ce *CutError
	ok := errors.As(err, &ce)
	return ce, ok
}
