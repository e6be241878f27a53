package statecol

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// ReadHashes appends the info_hash column of the state file df (its
// footer checked first, see Open) to out, read page by page: no row is
// assembled and no other column decoded. A state file is sorted by
// info_hash, so what it appends is too.
func ReadHashes(df rowio.DataFile, out []schema.Hash) ([]schema.Hash, error) {
	f, err := Open(df)
	if err != nil {
		return out, err
	}
	defer f.Close()
	return f.AppendHashes(out)
}

// AppendHashes appends f's info_hash column to out (see ReadHashes).
// An error names the file.
func (f *File) AppendHashes(out []schema.Hash) (_ []schema.Hash, err error) {
	path := f.f.Name()
	defer recoverCorrupt(&err, path)
	for _, rg := range f.RowGroups() {
		c, _ := f.Column(rg, "info_hash")
		if c == nil {
			return out, fmt.Errorf("%s: no info_hash column", path)
		}
		n := int(rg.NumRows())
		start := len(out)
		out = slices.Grow(out, n)[:start+n]
		if n == 0 {
			continue
		}
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&out[start])), n*len(schema.Hash{}))
		if err := Fixed(c, len(schema.Hash{}), buf); err != nil {
			return out[:start], fmt.Errorf("%s: info_hash: %w", path, err)
		}
	}
	return out, nil
}
