package dedup

import (
	"context"
	"io"
)

// halt stops checksumming (between two reads of a file, or while it waits
// for stdin's spool) and returns once the goroutine has ended: a run that
// fails before it needs the checksums does not return while that
// goroutine still reads its inputs.
func (c *checksums) halt() {
	c.stop()
	<-c.done
}

// stopReader is r until ctx ends, then an error.
type stopReader struct {
	ctx context.Context
	r   io.Reader
}

func (s stopReader) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}
