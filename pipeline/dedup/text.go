package dedup

import (
	"encoding/hex"
	"io"

	"github.com/infohash/infohash/formats/hashlist"
	"github.com/infohash/infohash/formats/schema"
)

// readHashList reads a hash list, calling emit for each hash; errors name
// the line (a first line that is a CSV header says so), and a line over
// hashlist.MaxLine ends it. A last line that no
// newline ends and that is not an entry is a hashlist.CutLineError (the
// list was cut there).
func readHashList(name string, r io.Reader, at int64, emit func(schema.Observation)) (int64, error) {
	sc := hashlist.NewScanner(name, r)
	var n int64
	for sc.Scan() {
		line := sc.Bytes()
		// The usual line, 40 hex digits, without a string per line.
		if len(line) == 40 {
			var h schema.Hash
			if _, err := hex.Decode(h[:], line); err == nil {
				emit(schema.Observation{InfoHash: h, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceImport})
				n++
				continue
			}
		}
		// Every key a line names: both of a hybrid torrent's magnet.
		hs, err := hashlist.LineHashes(string(line))
		if err != nil {
			if herr := sc.CSVHeaderError("dedup reads Parquet, Arrow, or"); herr != nil {
				return n, herr
			}
			return n, sc.BadLine(err) // a CutLineError for a cut last line
		}
		for _, m := range hs {
			emit(schema.Observation{InfoHash: m.H, InfoHashV2: m.V2, HashType: m.Type, ObservedAt: at, Source: schema.SourceImport})
			n++
		}
	}
	return n, sc.Err()
}

// textSlice is how many lines of a hash list are folded at a time.
const textSlice = 1 << 16

// foldHashList reads a hash list into b a slice of lines at a time, each
// scattered by partition and folded by the workers with prefetching, as
// Parquet and Arrow rows are: folded line by line, every hash missed the
// cache, and the fold was half of a 2M-line list's time.
func foldHashList(name string, r io.Reader, at int64, b *batch) (int64, error) {
	var rows rgBuf
	var out recBuf
	k := 0
	rows.reset(textSlice, b) // every row's source is import
	flush := func() {
		rows.scatter(k, &out)
		b.view(b.srcs, b.announce)
		b.addRows(&out)
		k = 0
		rows.reset(textSlice, b)
	}
	n, err := readHashList(name, r, at, func(o schema.Observation) {
		rows.hashes[k], rows.at[k], rows.typ[k] = o.InfoHash, o.ObservedAt, o.HashType
		if o.InfoHashV2 != nil {
			rows.keepV2(k, o.InfoHashV2)
		}
		if k++; k == textSlice {
			flush()
		}
	})
	if err == nil && k > 0 {
		flush()
	}
	return n, err
}
