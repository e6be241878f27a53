package dedup

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// minBloomCap is the smallest per-partition filter (keys).
const minBloomCap = 4096

// loadBloom reads partition key's filter; nil if it has none.
func loadBloom(d *dataset.Dataset, t *dataset.Table, key string) (*bloom.BloomFilter, dataset.FileInfo, error) {
	fi, ok := t.Blooms[key]
	if !ok {
		return nil, fi, nil
	}
	p := d.Path(t.BloomPath(fi))
	// Read whole: through a 4 KiB bufio.Reader a 20M-hash state's filters
	// took 10k read calls.
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fi, fmt.Errorf("dedup: bloom %s: %w", p, err)
	}
	// A damaged filter that says "surely new" of known hashes would add
	// them a second time: it is checked against the manifest first.
	if err := dataset.CheckBytes(b, fi); err != nil {
		return nil, fi, fmt.Errorf("dedup: bloom %s: %w", p, err)
	}
	bf := &bloom.BloomFilter{}
	if _, err := bf.ReadFrom(bytes.NewReader(b)); err != nil {
		return nil, fi, fmt.Errorf("dedup: bloom %s: %w", p, err)
	}
	return bf, fi, nil
}

// newBloom sizes a filter for n keys with room to grow.
func newBloom(n int64, fp float64) (*bloom.BloomFilter, int64) {
	c := max(2*n, minBloomCap)
	return bloom.NewWithEstimates(uint(c), fp), c
}

// stageBloom writes bf for partition key into tx.
func stageBloom(tx *dataset.Tx, key string, bf *bloom.BloomFilter, keys, capacity int64) error {
	name := dataset.NewName(".bloom")
	fi, err := dataset.WriteStagedWith(tx, dataset.TableState, key, name, keys, func(w io.Writer) error {
		_, err := bf.WriteTo(w)
		return err
	})
	if err != nil {
		return err
	}
	fi.Capacity = capacity
	tx.SetBloom(dataset.TableState, key, fi)
	return nil
}

// bloomOf builds a filter holding hashes.
func bloomOf(hashes []schema.Hash, fp float64) (*bloom.BloomFilter, int64) {
	bf, c := newBloom(int64(len(hashes)), fp)
	for i := range hashes {
		bf.Add(hashes[i][:])
	}
	return bf, c
}

type bloomFilter = *bloom.BloomFilter
