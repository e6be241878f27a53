package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/textenc"
)

// sink writes rows in one format to stdout or to the file the user named,
// opened by Options.OpenOutput (fsutil.CreateOutput): committed atomically on close, or, for a
// FIFO or device, written in place.
type sink[T any] struct {
	file  *fsutil.File
	kept  bool // file is Options.inPlace: abort leaves it open for a start over
	bw    *bufio.Writer
	write func([]T) error
	end   func() error
	// unlinkable counts the rows the magnet format left out: no magnet
	// names them rightly (see Magnet).
	unlinkable int64
}

// omitted are the columns each text format leaves out: the raw info
// dictionary (up to --max-metadata-size of bencode), and for es-bulk the
// raw name too. parquet and arrow carry every column.
var omitted = map[string][]string{"csv": {"info_bytes"}, "jsonl": {"info_bytes"}, "es-bulk": {"info_bytes", "name_raw"}}

func newSink[T any](o Options) (*sink[T], error) { return newSinkSorted[T](o, "info_hash") }

// newSinkSorted is newSink for rows sorted by column sortedBy ("" for
// none), which Parquet output records.
func newSinkSorted[T any](o Options, sortedBy string) (*sink[T], error) {
	s := &sink[T]{}
	var out io.Writer = o.Stdout
	switch {
	case o.inPlace != nil:
		s.file, s.kept, out = o.inPlace, true, o.inPlace
	case o.Output != "-":
		open := o.OpenOutput
		if open == nil {
			open = fsutil.CreateOutput
		}
		f, err := open(o.Output)
		if err != nil {
			return nil, err
		}
		s.file, out = f, f
	}
	if o.placed != nil && (s.file == nil || s.file.InPlace()) {
		out = &placingWriter{w: out, n: o.placed}
	}
	s.bw = bufio.NewWriterSize(out, sinkBuffer)
	switch o.Format {
	case "parquet":
		var opts []parquet.WriterOption
		if sortedBy != "" {
			opts = append(opts, parquet.SortingWriterConfig(parquet.SortingColumns(parquet.Ascending(sortedBy))))
		}
		w := rowio.NewParquetWriter[T](s.bw, opts...)
		s.write = func(rows []T) error { _, err := w.Write(rows); return err }
		s.end = w.Close
	case "arrow":
		// Labelled by what it writes: export's errors name the output
		// first ("export: OUTPUT: …"), so the path would come twice.
		w := rowio.NewArrowWriter[T]("Arrow IPC stream", s.bw)
		s.write, s.end = w.Write, w.Close
	case "csv":
		e := textenc.NewCSV[T](s.bw, omitted["csv"]...)
		s.write, s.end = e.Write, e.Flush
	case "jsonl":
		e := textenc.NewJSONL[T](s.bw, omitted["jsonl"]...)
		s.write, s.end = e.Write, e.Flush
	case "es-bulk":
		// Each row: an action line {"index":{"_id":HASH,"_index":NAME}}
		// (keys in encoding/json's map order), then the document.
		e := textenc.NewJSONL[T](io.Discard, omitted["es-bulk"]...)
		var name bytes.Buffer
		enc := json.NewEncoder(&name)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(o.ES); err != nil {
			return nil, err
		}
		tail := append(append([]byte(`","_index":`), bytes.TrimSuffix(name.Bytes(), []byte("\n"))...), "}}\n"...)
		var b []byte // one row's two lines; s.bw batches the writes
		s.write = func(rows []T) error {
			for i := range rows {
				b = append(b[:0], `{"index":{"_id":"`...)
				b = hex.AppendEncode(b, hashOf(&rows[i])[:])
				b = append(b, tail...)
				var err error
				if b, err = e.AppendJSON(b, &rows[i]); err != nil {
					return err
				}
				if _, err := s.bw.Write(append(b, '\n')); err != nil {
					return err
				}
			}
			return nil
		}
		s.end = func() error { return nil }
	case "magnet":
		var b []byte // one row's line; s.bw batches the writes
		s.write = func(rows []T) error {
			for i := range rows {
				var ok bool
				if b, ok = appendMagnet(b[:0], any(&rows[i])); !ok {
					s.unlinkable++
					continue
				}
				b = append(b, '\n')
				if _, err := s.bw.Write(b); err != nil {
					return err
				}
			}
			return nil
		}
		s.end = func() error { return nil }
	}
	return s, nil
}

// sinkBuffer is the size of a sink's buffer: bytes reach the output a
// buffer at a time (a variable for tests).
var sinkBuffer = 1 << 20

// placingWriter counts into *n the bytes written to an output that cannot
// take them back (stdout, a FIFO or a device), so that export knows
// whether it may still start over.
type placingWriter struct {
	w io.Writer
	n *int64
}

func (p *placingWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	*p.n += int64(n)
	return n, err
}

func (s *sink[T]) close() error {
	if err := s.end(); err != nil {
		s.abort()
		return err
	}
	if err := s.bw.Flush(); err != nil {
		s.abort()
		return err
	}
	if s.file != nil {
		return s.file.Commit()
	}
	return nil
}

// finish closes the sink (see close) with its error named as export's
// errors are, except a write to an output closed under the run, passed on
// as it is.
func (s *sink[T]) finish(o Options) error {
	err := s.close()
	if err == nil || errors.Is(err, os.ErrClosed) {
		return err
	}
	return fmt.Errorf("export: %s: %w", o.outName(), err)
}

func (s *sink[T]) abort() {
	if s.file != nil && !s.kept {
		s.file.Abort()
	}
}

// Magnet renders a row as a magnet URI: the v2 btmh (multihash SHA-256)
// when the row knows its full v2 hash, else the btih of its info_hash;
// and the name when fetched. A torrents row has no info_hash_v2: a v2
// torrent's is the SHA-256 of its verified info dictionary (torrentV2).
// ok is false, and the URI empty, for a row of hash_type 2 whose full v2
// hash is unknown (a state or catalog row with info_hash_v2 null, as the
// DHT gives only the 20-byte truncation; a torrents row whose info bytes
// do not hash to its key): a btih of the truncation would be checked as
// a SHA-1 by a client, and fail, and a btmh needs all 32 bytes, so no
// magnet names such a hash.
func Magnet(row any) (uri string, ok bool) {
	b, ok := appendMagnet(nil, row)
	return string(b), ok
}

// appendMagnet appends Magnet's URI of row to b (b as it was when ok is
// false): the magnet format writes through it, without the three strings
// a row Magnet's concatenations made (a fifth of its CPU).
func appendMagnet(b []byte, row any) ([]byte, bool) {
	var typ int8
	var h schema.Hash
	var v2 []byte
	var name string
	switch r := row.(type) {
	case *schema.State:
		h, v2, typ = r.InfoHash, r.InfoHashV2, r.HashType
	case *schema.Catalog:
		h, v2, typ = r.InfoHash, r.InfoHashV2, r.HashType
		if r.Name != nil {
			name = *r.Name
		}
	case *schema.Torrent:
		h, v2, typ, name = r.InfoHash, torrentV2(r), r.HashType, r.NameOr()
	}
	switch {
	case len(v2) == 32:
		b = hex.AppendEncode(append(b, "magnet:?xt=urn:btmh:1220"...), v2)
	case typ == schema.HashV2:
		return b, false
	default:
		b = hex.AppendEncode(append(b, "magnet:?xt=urn:btih:"...), h[:])
	}
	if name != "" {
		b = append(append(b, "&dn="...), escapeValue(name)...)
	}
	return b, true
}

// escapeValue percent-encodes s as a URI query value: every byte but
// RFC 3986's unreserved ones (ALPHA, DIGIT, "-._~"), so "&", "#", "%",
// "+", "=", control bytes and each byte of a non-ASCII name are escaped,
// and a space is "%20". url.QueryEscape gives "+" for a space, which is
// HTML form encoding: libtorrent's and Go's parsers read it back as a
// space, but Transmission's (tr_urlPercentDecode) decodes %XX only and
// shows the "+".
func escapeValue(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") // a "+" of s is "%2B"
}

// torrentV2 is the full v2 hash of a torrents row of hash_type 2: the
// SHA-256 of its info dictionary, which merge verified to begin with the
// row's info_hash (nil for a v1 row, or info bytes that do not hash so).
// A hybrid torrent fetched by its v1 key is a v1 row, as in the state.
func torrentV2(t *schema.Torrent) []byte {
	if t.HashType != schema.HashV2 {
		return nil
	}
	sum := sha256.Sum256(t.InfoBytes)
	return schema.FullV2(t.InfoHash, sum[:])
}
