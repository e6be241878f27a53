package merge

import (
	"bufio"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/textenc"
)

// arrowText are the columns of a results stream read from text or bytes,
// whichever the stream holds (rowio.OpenArrowText), as the Parquet reader
// reads them: the hash columns from hex text (blobResult, v2Text), the
// string columns from a BLOB (binary) as from text. Without them the
// Arrow reader refused a binary lease_id or a utf8 info_hash that the
// Parquet reader takes.
var arrowText = []string{"info_hash", "info_hash_v2", "lease_id", "outcome", "detail", "served_by", "name",
	"peer_failures.addr", "peer_failures.class", "files.path"}

// openArrowResults opens the Arrow IPC stream of in, read from br, as
// merge reads one: through blobResults (a binary info_hash of 20 bytes,
// or utf8 of 40 hex digits), an info_hash_v2 of text decoded by v2Text. herr is the error
// of a stream hiveError refuses, to return as it is; err any other.
func openArrowResults(in input, br *bufio.Reader) (_ resultSource, herr, err error) {
	ar, err := rowio.OpenArrowTextLimited[blobResult](in.name, br, resultLimits(in.maxMeta), arrowText...)
	if herr := hiveError(in, arrowColumns(ar, err)); herr != nil {
		if err == nil {
			ar.Close()
		}
		return nil, herr, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if in.inbox {
		ar.RequireEndMarker() // see readResultsTo
	}
	v2 := rowio.ArrowTextType(ar.ArrowSchema(), "info_hash_v2")
	text := rowio.ArrowTextType(ar.ArrowSchema(), "info_hash")
	return v2Text(&blobResults{r: ar, name: in.name, text: text}, in.name, v2), nil, nil
}

// parquetTextType is rowio.TextType of the top-level column col of s, ""
// when s has none.
func parquetTextType(s *parquet.Schema, col string) string {
	if c, ok := s.Lookup(col); ok {
		return rowio.TextType(c.Node.Type())
	}
	return ""
}

// v2Text is src with its info_hash_v2 decoded from hex, when the column
// is text of string type typ (a VARCHAR, a utf8: as fetch reads a jobs
// file's, and dedup an observation's): 64 hex digits, in either case, or
// null. Anything else fails the input, naming its row. typ "" (bytes) is
// src as it is.
func v2Text(src resultSource, name, typ string) resultSource {
	if typ == "" {
		return src
	}
	return &v2TextResults{src: src, name: name, typ: typ}
}

type v2TextResults struct {
	src       resultSource
	name, typ string
	n         int64 // rows returned so far
	err       error // sticky
}

func (v *v2TextResults) Read(out []schema.Result) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.src.Read(out)
	for i := range out[:n] {
		h := out[i].InfoHashV2
		if len(h) == 0 {
			continue
		}
		var d [32]byte
		if _, msg := textenc.V2Value(&d, "info_hash_v2", v.typ, h); msg != "" {
			v.err = fmt.Errorf("%s: row %d: %s", v.name, v.n+int64(i)+1, msg)
			v.n += int64(i)
			return i, v.err
		}
		out[i].InfoHashV2 = d[:]
	}
	v.n += int64(n)
	return n, err
}

func (v *v2TextResults) Close() error { return v.src.Close() }
