package rowio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
)

// ArrowPrefix reads an Arrow IPC stream that may have been cut off (the
// spool of a process killed while reading a pipe) and returns the length
// of its longest prefix made of whole messages, and how many messages that
// is. The first message must be the schema for the prefix to be usable;
// a caller appends the end-of-stream marker after the prefix. The stream
// is framed as on a pipe: 0xFFFFFFFF, the metadata length, the metadata,
// then the body the metadata declares. A message whose framing is
// implausible ends the prefix, as the cut does.
func ArrowPrefix(r io.Reader, lim Limits) (n int64, messages int, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var h [8]byte
	for {
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return n, messages, nil
		}
		if binary.LittleEndian.Uint32(h[:4]) != 0xffffffff {
			return n, messages, nil // a legacy or garbled frame: stop here
		}
		ml := int64(int32(binary.LittleEndian.Uint32(h[4:])))
		if ml == 0 { // end of stream: the stream was whole
			return n, messages, nil
		}
		if ml < 0 || ml > lim.MaxArrowMetadata {
			return n, messages, nil
		}
		meta := make([]byte, ml)
		if _, err := io.ReadFull(br, meta); err != nil {
			return n, messages, nil
		}
		body, err := checkMessage(meta)
		if err != nil || body > lim.MaxArrowBuffer {
			return n, messages, nil
		}
		if got, err := io.CopyN(io.Discard, br, body); got != body {
			if err != nil && !errors.Is(err, io.EOF) {
				return n, messages, err
			}
			return n, messages, nil // the cut is in this body
		}
		n += 8 + ml + body
		messages++
	}
}
