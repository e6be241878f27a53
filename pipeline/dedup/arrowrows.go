package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// obsAddrIn is obsIn with node_addr: the Arrow row reader's row when the
// run keeps announced peers and the stream has the endpoint columns as
// capture writes them (arrowPeerColumns); their peer_port is read beside
// it (arrowRowPorts).
type obsAddrIn struct {
	obsIn
	NodeAddr []byte `parquet:"node_addr,optional"`
}

// readArrowRows feeds every row of the Arrow IPC stream f to b, row by
// row; needEnd requires its end-of-stream marker (see readArrow). With
// ports (the same stream again: the run keeps announced peers), node_addr
// is read too, and peer_port from ports, and each announce_peer row's
// dialable endpoint is added to its hash's aggregate, as the column
// reader does (loadArrowPeers).
func readArrowRows(ctx context.Context, name string, f io.Reader, needEnd bool, ports io.Reader, b *batch,
	bad func(error) error) (int64, error) {
	if ports == nil {
		return arrowRows(ctx, name, f, needEnd, b, bad, nil, func(r *obsIn) (*obsIn, []byte) { return r, nil },
			"info_hash", "info_hash_v2", "source")
	}
	pr, err := rowio.OpenArrow[struct{}](name, ports)
	if err != nil {
		return 0, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
	}
	defer pr.Close()
	split := func(r *obsAddrIn) (*obsIn, []byte) { return &r.obsIn, r.NodeAddr }
	return arrowRows(ctx, name, f, needEnd, b, bad, &arrowRowPorts{r: pr}, split,
		"info_hash", "info_hash_v2", "source", "node_addr") // node_addr is text
}

// arrowRows is readArrowRows for rows of T, which split parts into the
// observation and its node_addr; ports, when not nil, gives each row's
// peer_port. text names the []byte fields read from a text column (a
// hash column of text holds hex, decoded by unhexRow as the column
// reader decodes it), and the string fields (source: text or a BLOB,
// checked as one by addRow) read from a binary one.
func arrowRows[T any](ctx context.Context, name string, f io.Reader, needEnd bool, b *batch, bad func(error) error,
	ports *arrowRowPorts, split func(*T) (*obsIn, []byte), text ...string) (int64, error) {
	r, err := rowio.OpenArrowText[T](name, f, text...)
	if err != nil {
		return 0, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
	}
	defer r.Close()
	if needEnd {
		r.RequireEndMarker()
	}
	hashText := rowio.ArrowTextType(r.ArrowSchema(), "info_hash")
	v2Text := rowio.ArrowTextType(r.ArrowSchema(), "info_hash_v2")
	buf := make([]T, readBatch)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := r.Read(buf)
		for i := 0; i < k; i++ {
			o, addr := split(&buf[i])
			err := unhexRow(n+int64(i), o, hashText, v2Text)
			if err == nil {
				err = addRow(n+int64(i), o, b)
			}
			if err != nil {
				return n, bad(err)
			}
			if ports == nil {
				continue
			}
			port, ok, perr := ports.next()
			if perr != nil {
				return n, exitcode.BadInput(fmt.Errorf("dedup: %w", perr))
			}
			if ok {
				b.addRowPeer(o, addr, int64(port), anyPort) // an Arrow type is its width
			} else if o.Source == schema.SourceAnnouncePeer {
				b.ports.noPortRow()
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

// arrowRowPorts reads the peer_port column of an Arrow stream beside its
// row reader, row for row, from a second reading of the stream, by value
// as the column reader reads it (arrowPorts): the row reader's binding
// into an integer field refuses a value past the field (a uint64 past
// int64), which is no port, as 70000 is.
type arrowRowPorts struct {
	r     *rowio.Reader[struct{}]
	col   arrow.Array // the current batch's peer_port
	ports []int32     // its values (arrowPorts)
	pos   int         // its rows read
	rows  rgBuf
}

// next is the port of the stream's next row (portValue: 0 for one that is
// no port), ok false when it is null.
func (p *arrowRowPorts) next() (port int32, ok bool, err error) {
	for p.col == nil || p.pos == p.col.Len() {
		rec, err := p.r.Record()
		if errors.Is(err, io.EOF) {
			return 0, false, errors.New("peer_port: fewer rows than the other columns")
		}
		if err != nil {
			return 0, false, err
		}
		i, _ := rowio.FieldIndex(rec.Schema(), "peer_port") // arrowPeerColumns found it
		p.col, p.pos = rec.Column(i), 0
		p.ports = p.rows.arrowPorts(p.col)
	}
	i := p.pos
	p.pos++
	if p.col.IsNull(i) {
		return 0, false, nil
	}
	return p.ports[i], true, nil
}
