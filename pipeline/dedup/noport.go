// Announce rows without a port: an input that has node_addr and source,
// as capture writes them, but no peer_port column (a rewrite that
// selected the columns it wanted, or one of a NULL type: all null) names
// no endpoint in any row, nor does an announce_peer row whose peer_port
// is null (a producer that lost it). With
// --announced-peers the user asked for peers, and the input was read
// without one, silently. It is not refused: its sightings are sound, and
// a run that reads it among other inputs (a cron pass over capture files,
// hash lists and imports, which have no peer_port by nature) would lose
// all of them for a column that only adds peers. Its announce_peer rows
// are counted and warned about, once per input, saying why they gave no
// peer: as a bad port is (badports.go), so that the operator learns that
// a producer drops the column or its values. The readers count the null
// ones as they read peer_port (noPortRow); the source column of an input
// without peer_port is read once more (parquetNoPort, arrowNoPort).

package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// unported reports whether an input whose top-level columns has tells
// has node_addr and source but no peer_port.
func unported(has func(name string) bool) bool {
	return has("node_addr") && has("source") && !has("peer_port")
}

// noPortNote is what one input had: its announce_peer rows without a
// port.
type noPortNote struct {
	input string
	rows  int64
}

// noPort notes the announce rows without a port of the input name, if
// any.
func (p *badPorts) noPort(name string, rows int64) {
	if rows > 0 {
		p.unported = append(p.unported, noPortNote{name, rows})
	}
}

// noPortRow counts an announce_peer row of the input being read whose
// peer_port is null.
func (p *badPorts) noPortRow() { p.nullIn++ }

// nullPort is the value in rgBuf.port of a row whose peer_port is null (a
// port read is 1-65535, or 0 for one that is no port: dropBadPorts).
const nullPort = -1

// fillNullPorts makes every row of ports null, until peer_port's pages
// fill those that have one.
func fillNullPorts(ports []int32) {
	for i := range ports {
		ports[i] = nullPort
	}
}

// countNullPorts counts the announce_peer rows of rows [0, n) whose
// peer_port is null: every one when the row group's column is all null
// (nullCol), and none when it is not read.
func (r *rgBuf) countNullPorts(n int, b *batch) {
	if !r.peerCols && !r.nullCol {
		return
	}
	var k int64
	for i, s := range r.src[:n] {
		if s == b.announce && (r.nullCol || r.port[i] == nullPort) {
			k++
		}
	}
	b.ports.nullIn += k
}

// warnNoPort warns, once per input of the committed batch, about the
// announce_peer rows read without an endpoint for want of a peer_port.
func (p *badPorts) warnNoPort() {
	for _, w := range p.unported {
		slog.Warn("dedup: announce_peer rows were read without an endpoint: their peer_port is null, or the input has "+
			"node_addr and source but no peer_port column (an announced peer is node_addr's IP with the port it "+
			"announced, peer_port, as capture writes them): write their port into peer_port",
			"input", w.input, "announce_rows", w.rows)
	}
}

// parquetNoPort notes the announce_peer rows of Parquet input name, open
// as pf (its pages checked), when it has node_addr and source but no
// peer_port (or one of the NULL type, which the readers do not read): it
// reads the source column once more.
func (b *batch) parquetNoPort(name string, pf *parquet.File) error {
	root := pf.Root()
	src := root.Column("source")
	has := func(c string) bool {
		col := root.Column(c)
		return col != nil && (c != "peer_port" || !rowio.IsNullColumn(col.Type()))
	}
	if !unported(has) || src.Type().Kind() != parquet.ByteArray {
		return nil // a NULL source (all null) holds no announce_peer
	}
	var n int64
	for _, rg := range pf.RowGroups() {
		k, err := announcePages(rg.ColumnChunks()[src.Index()].Pages())
		if n += k; err != nil {
			return &rowio.CorruptError{Format: "Parquet", Err: fmt.Errorf("source: %w", err)}
		}
	}
	b.ports.noPort(name, n)
	return nil
}

// announcePages counts the announce_peer values of a source column's
// pages, and closes them.
func announcePages(pages parquet.Pages) (n int64, err error) {
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		data, offs, idx, err := byteArrays(p)
		if err != nil {
			parquet.Release(p)
			return n, err
		}
		is := func(j int) bool { return string(data[offs[j]:offs[j+1]]) == schema.SourceAnnouncePeer }
		for j := 0; j+1 < len(offs); j++ {
			switch {
			case !is(j):
			case idx == nil:
				n++
			default: // a dictionary's entries are distinct: the rows that use this one
				for _, ix := range idx {
					if int(ix) == j {
						n++
					}
				}
			}
		}
		parquet.Release(p)
	}
}

// arrowNoPort notes the announce_peer rows of Arrow input in when its
// stream has node_addr and source but no peer_port (or one of the null
// type, which the readers do not read): it reads the stream
// once more, as far as the read before took it (a file cut mid-message:
// its whole batches).
func (b *batch) arrowNoPort(ctx context.Context, in input) error {
	f, err := in.open(ctx)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := rowio.OpenArrow[struct{}](in.name, f)
	if err != nil {
		return err
	}
	defer r.Close()
	s := r.ArrowSchema()
	index := func(c string) int { i, _ := rowio.FieldIndex(s, c); return i }
	if !unported(func(c string) bool {
		i := index(c) // a NULL-typed peer_port is no column of ports (arrowPeerColumns)
		return i >= 0 && (c != "peer_port" || s.Field(i).Type.ID() != arrow.NULL)
	}) {
		return nil
	}
	src := index("source")
	var n int64
	for {
		rec, err := r.Record()
		if err != nil {
			if _, cut := rowio.AsCut(err); cut || errors.Is(err, io.EOF) {
				b.ports.noPort(in.name, n)
				return nil
			}
			return err
		}
		c := rec.Column(src)
		strs, _ := c.(interface{ Value(int) string })  // text
		blobs, _ := c.(interface{ Value(int) []byte }) // a BLOB, read as text
		for i := range c.Len() {
			switch {
			case c.IsNull(i):
			case strs != nil && strs.Value(i) == schema.SourceAnnouncePeer,
				blobs != nil && string(blobs.Value(i)) == schema.SourceAnnouncePeer:
				n++
			}
		}
	}
}
