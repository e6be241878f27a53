package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/internal/exitcode"
)

// obsPeerIn is obsIn with the announced endpoint columns: the Arrow row
// reader's row when the run keeps announced peers and the stream has
// those columns as capture writes them (arrowPeerColumns).
type obsPeerIn struct {
	obsIn
	peerIn
}

// readArrowRows feeds every row of the Arrow IPC stream f to b, row by
// row; needEnd requires its end-of-stream marker (see readArrow). With
// peers, node_addr and peer_port are read too and each announce_peer
// row's dialable endpoint is added to its hash's aggregate, as the column
// reader does (loadArrowPeers).
func readArrowRows(ctx context.Context, name string, f io.Reader, needEnd, peers bool, b *batch,
	bad func(error) error) (int64, error) {
	if peers {
		split := func(r *obsPeerIn) (*obsIn, *peerIn) { return &r.obsIn, &r.peerIn }
		return arrowRows(ctx, name, f, needEnd, b, bad, split, "source", "node_addr") // node_addr is text
	}
	return arrowRows(ctx, name, f, needEnd, b, bad, func(r *obsIn) (*obsIn, *peerIn) { return r, nil }, "source")
}

// arrowRows is readArrowRows for rows of T, which split parts into the
// observation and its endpoint (nil when not read); text names the
// []byte fields read from a text column, and the string fields (source:
// text or a BLOB, checked as one by addRow) read from a binary one.
func arrowRows[T any](ctx context.Context, name string, f io.Reader, needEnd bool, b *batch, bad func(error) error,
	split func(*T) (*obsIn, *peerIn), text ...string) (int64, error) {
	r, err := rowio.OpenArrowText[T](name, f, text...)
	if err != nil {
		return 0, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
	}
	defer r.Close()
	if needEnd {
		r.RequireEndMarker()
	}
	buf := make([]T, readBatch)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := r.Read(buf)
		for i := 0; i < k; i++ {
			o, p := split(&buf[i])
			if err := addRow(n+int64(i), o, b); err != nil {
				return n, bad(err)
			}
			if p != nil {
				b.addRowPeer(o, p.NodeAddr, p.PeerPort, anyPort) // an Arrow type is its width
			}
		}
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if re, ok := errors.AsType[*rowio.IntRangeError](err); ok && re.Column == "hash_type" {
			// Row n (of the stream, as the column reader counts) is past
			// an int64: out of range, as the column reader says it.
			return n, bad(hashTypeRangeError(n))
		} else if ok && re.Column == "observed_at" {
			return n, bad(fmt.Errorf("row %d: %s", n+1, uint64TimeError(re.Value)))
		}
		if err != nil {
			return n, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
		}
	}
}
