package dedup

import (
	"bytes"
	"fmt"
	"slices"
	"unsafe"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// The exact store, dedup's last layer: a partition's state files are
// sorted by info_hash, so a Bloom positive is confirmed by reading their
// hash column and searching it.

// readHashes appends the info_hash column of the state file df (its
// footer checked first, see statecol.Open) to out, read page by page (no
// row assembly).
func readHashes(df rowio.DataFile, out []schema.Hash) ([]schema.Hash, error) {
	f, err := statecol.Open(df)
	if err != nil {
		return out, err
	}
	defer f.Close()
	return appendHashes(f, df.Path(), out)
}

func appendHashes(f *statecol.File, path string, out []schema.Hash) ([]schema.Hash, error) {
	for _, rg := range f.RowGroups() {
		c, _ := f.Column(rg, "info_hash")
		if c == nil {
			return out, fmt.Errorf("%s: no info_hash column", path)
		}
		n := int(rg.NumRows())
		start := len(out)
		out = slices.Grow(out, n)[:start+n]
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&out[start])), n*20)
		if err := statecol.Fixed(c, 20, buf); err != nil {
			return out[:start], fmt.Errorf("%s: info_hash: %w", path, err)
		}
	}
	return out, nil
}

func hashCmp(x, y schema.Hash) int { return bytes.Compare(x[:], y[:]) }

// searchFrom returns the first index k >= from with hs[k] >= *h (len(hs)
// if none), hs being sorted: it gallops from from, then bisects the last
// step. Looking up a sorted batch's hashes one after the other this way
// reads the file's hashes near where the last lookup ended, where a
// bisection of the whole file missed the cache at each step.
func searchFrom(hs []schema.Hash, from int, h *schema.Hash) int {
	lo, step := from, 1
	hi := from
	for hi < len(hs) && bytes.Compare(hs[hi][:], h[:]) < 0 {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, len(hs))
	k, _ := slices.BinarySearchFunc(hs[lo:hi], *h, hashCmp)
	return lo + k
}
