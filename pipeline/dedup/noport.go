// Announce rows without a port: an input that has node_addr and source,
// as capture writes them, but no peer_port column (a rewrite that
// selected the columns it wanted) names no endpoint in any row. With
// --announced-peers the user asked for peers, and the input was read
// without one, silently. It is not refused: its sightings are sound, and
// a run that reads it among other inputs (a cron pass over capture files,
// hash lists and imports, which have no peer_port by nature) would lose
// all of them for a column that only adds peers. Its announce_peer rows
// are counted and warned about, once per input, saying why they gave no
// peer: as a bad port is (badports.go), so that the operator learns that
// a producer drops the column.

package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// unported reports whether an input whose top-level columns has tells
// has node_addr and source but no peer_port.
func unported(has func(name string) bool) bool {
	return has("node_addr") && has("source") && !has("peer_port")
}

// noPortNote is what one input without peer_port had: its announce_peer
// rows.
type noPortNote struct {
	input string
	rows  int64
}

// noPort notes the announce rows of the input name (read with no
// peer_port column), if any.
func (p *badPorts) noPort(name string, rows int64) {
	if rows > 0 {
		p.unported = append(p.unported, noPortNote{name, rows})
	}
}

// warnNoPort warns, once per input of the committed batch, about the
// announce_peer rows read without an endpoint for want of peer_port.
func (p *badPorts) warnNoPort() {
	for _, w := range p.unported {
		slog.Warn("dedup: announce_peer rows were read without an endpoint: the input has node_addr and source but no "+
			"peer_port column (an announced peer is node_addr's IP with the port it announced, peer_port, as capture "+
			"writes them): write peer_port into it", "input", w.input, "announce_rows", w.rows)
	}
}

// parquetNoPort notes the announce_peer rows of Parquet input name, open
// as pf (its pages checked), when it has node_addr and source but no
// peer_port: it reads the source column once more.
func (b *batch) parquetNoPort(name string, pf *parquet.File) error {
	root := pf.Root()
	src := root.Column("source")
	if !unported(func(c string) bool { return root.Column(c) != nil }) || src.Type().Kind() != parquet.ByteArray {
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
// stream has node_addr and source but no peer_port: it reads the stream
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
	if !unported(func(c string) bool { return index(c) >= 0 }) {
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
