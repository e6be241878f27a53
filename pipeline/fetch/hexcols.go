package fetch

import (
	"errors"
	"fmt"

	"github.com/infohash/infohash/formats/textenc"
)

// textCols are the string types of a jobs input's hash columns that hold
// text (rowio.TextType, rowio.ArrowTextType), "" for bytes. Such a
// column holds hex, as dedup and merge read it (textenc.HashValue):
// info_hash 40 digits (a v1 hash) or 64 (a full v2 one), info_hash_v2 64
// or empty (null). Its bytes taken as a hash would be wrong.
type textCols struct{ hash, v2 string }

// unhex decodes row's hash columns of text in place.
func (c textCols) unhex(row *blobJobRow) error {
	if c.hash != "" {
		var h [32]byte
		n, msg := textenc.HashValue(&h, "info_hash", c.hash, row.InfoHash, true)
		if n == 0 {
			return errors.New(msg)
		}
		row.InfoHash = h[:n:n]
	}
	return unhexV2(&row.jobFields, c.v2)
}

// unhexV2 decodes f's info_hash_v2 when it is of text (typ its string
// type; "" for bytes): 64 hex digits, or empty for null.
func unhexV2(f *jobFields, typ string) error {
	if typ == "" || len(f.InfoHashV2) == 0 {
		return nil
	}
	var h [32]byte
	if _, msg := textenc.V2Value(&h, "info_hash_v2", typ, f.InfoHashV2); msg != "" {
		return errors.New(msg)
	}
	f.InfoHashV2 = h[:]
	return nil
}

// v2TextJobs decodes the info_hash_v2 of the jobs read, a column of text
// of string type typ, in a Parquet file whose info_hash is infohash's
// FIXED_LEN_BYTE_ARRAY(20); a bad one fails the input, naming its row
// (counted from 0), as blobJobs does.
func v2TextJobs(jr *jobReader, read func([]jobRow) (int, error), typ string) func([]jobRow) (int, error) {
	var bad error // sticky
	return func(buf []jobRow) (int, error) {
		if bad != nil {
			return 0, bad
		}
		n, err := read(buf)
		for i := range buf[:n] {
			if herr := unhexV2(&buf[i].jobFields, typ); herr != nil {
				bad = fmt.Errorf("%s: row %d: %w", jr.name, jr.n+int64(i)+1, herr)
				return i, bad
			}
		}
		return n, err
	}
}
