package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// dropBlobIndexes rewrites the end of a Parquet file without the column
// indexes of blobColumns' chunks. tail is what the writer's Close wrote
// after the last row group, from file offset start: the page index (every
// chunk's column index, then every chunk's offset index) and the footer,
// after the file's magic number if no row was written.
//
// With SkipPageBounds parquet-go still writes a column index for such a
// chunk, with an empty min and max for every page that holds values:
// bounds that claim each value is "", which an engine pruning pages by the
// page index (DuckDB does not) would believe, and skip pages that match.
// A chunk without a column index is allowed by the format and read as
// "no bounds". The offset indexes (page locations) stay; the page index
// is rewritten contiguous, as readers such as parquet-go's expect.
func dropBlobIndexes(tail []byte, start int64) ([]byte, error) {
	if len(tail) < 8 || string(tail[len(tail)-4:]) != "PAR1" {
		return nil, errors.New("closing: no footer was written")
	}
	footerAt := int64(len(tail)) - 8 - int64(binary.LittleEndian.Uint32(tail[len(tail)-8:]))
	if footerAt < 0 {
		return nil, errors.New("closing: the footer began before what Close wrote")
	}
	md := new(format.FileMetaData)
	proto := new(thrift.CompactProtocol)
	if err := thrift.Unmarshal(proto, tail[footerAt:len(tail)-8], md); err != nil {
		return nil, fmt.Errorf("closing: reading back the footer: %w", err)
	}
	var chunks []*format.ColumnChunk
	for g := range md.RowGroups {
		for c := range md.RowGroups[g].Columns {
			chunks = append(chunks, &md.RowGroups[g].Columns[c])
		}
	}
	// parquet-go reads the page index from the first chunk's column index
	// on: without one there, it would ignore every column's.
	if len(chunks) == 0 || isBlob(chunks[0].MetaData.PathInSchema) {
		return tail, nil
	}
	// The page index must be all that lies between the last row group and
	// the footer, or the rewrite would lose or misplace something.
	lo, total := footerAt, int64(0)
	for _, c := range chunks {
		for _, ix := range [][2]int64{{c.ColumnIndexOffset, int64(c.ColumnIndexLength)}, {c.OffsetIndexOffset, int64(c.OffsetIndexLength)}} {
			if ix[1] == 0 {
				continue
			}
			rel := ix[0] - start
			if rel < 0 || rel+ix[1] > footerAt {
				return nil, fmt.Errorf("closing: a page index entry at offset %d is outside what Close wrote", ix[0])
			}
			lo, total = min(lo, rel), total+ix[1]
		}
	}
	if lo+total != footerAt {
		return nil, errors.New("closing: the page index is not one piece before the footer")
	}
	out := bytes.NewBuffer(make([]byte, 0, len(tail)))
	out.Write(tail[:lo])
	for _, c := range chunks {
		if c.ColumnIndexLength == 0 {
			continue
		}
		if isBlob(c.MetaData.PathInSchema) {
			c.ColumnIndexOffset, c.ColumnIndexLength = 0, 0
			continue
		}
		b := tail[c.ColumnIndexOffset-start:][:c.ColumnIndexLength]
		c.ColumnIndexOffset = start + int64(out.Len())
		out.Write(b)
	}
	for _, c := range chunks {
		if c.OffsetIndexLength == 0 {
			continue
		}
		b := tail[c.OffsetIndexOffset-start:][:c.OffsetIndexLength]
		c.OffsetIndexOffset = start + int64(out.Len())
		out.Write(b)
	}
	footer, err := thrift.Marshal(proto, md)
	if err != nil {
		return nil, fmt.Errorf("closing: writing the footer: %w", err)
	}
	out.Write(footer)
	out.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
	out.WriteString("PAR1")
	return out.Bytes(), nil
}
