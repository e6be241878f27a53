package dedup

import (
	"fmt"
	"io"
	"os"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/bloom20"
)

// minBloomCap is the smallest per-partition filter (keys).
const minBloomCap = 4096

// loadBloom reads partition key's filter; nil if it has none. Its words
// are decoded into *buf (grown if need be), which the caller reuses for
// the next partition once this filter is staged or dropped.
func loadBloom(d *dataset.Dataset, t *dataset.Table, key string, buf *[]uint64) (*bloom.BloomFilter, dataset.FileInfo, error) {
	fi, ok := t.Blooms[key]
	if !ok {
		return nil, fi, nil
	}
	p := d.Path(t.BloomPath(fi))
	bf, err := readBloom(p, fi, buf)
	if err != nil {
		return nil, fi, fmt.Errorf("dedup: bloom %s: %w", p, err)
	}
	return bf, fi, nil
}

// readBloom reads the filter at p, described by fi, whole into *buf's
// memory (through a 4 KiB bufio.Reader a 20M-hash state's filters took
// 10k read calls; through os.ReadFile and ReadFrom each was read into one
// buffer and decoded into another) and decodes it there.
func readBloom(p string, fi dataset.FileInfo, buf *[]uint64) (*bloom.BloomFilter, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != fi.Size {
		return nil, fmt.Errorf("%d bytes, the manifest says %d", st.Size(), fi.Size)
	}
	words := wordsFor(buf, int((fi.Size+7)/8))
	b := wordBytes(words)[:fi.Size]
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	// A damaged filter that says "surely new" of known hashes would add
	// them a second time: it is checked against the manifest first.
	if err := dataset.CheckBytes(b, fi); err != nil {
		return nil, err
	}
	return decodeBloom(b, words)
}

// wordsFor returns (*buf)[:n], growing *buf if it is shorter.
func wordsFor(buf *[]uint64, n int) []uint64 {
	if cap(*buf) < n {
		*buf = make([]uint64, n)
	}
	return (*buf)[:n]
}

// newBloom sizes a filter for n keys with room to grow.
func newBloom(n int64, fp float64) (*bloom.BloomFilter, int64) {
	c := max(2*n, minBloomCap)
	return bloom.NewWithEstimates(uint(c), fp), c
}

// stageBloom writes bf for partition key into tx, in WriteTo's format,
// encoded straight into the staged file's buffer (see bloomEncoder).
func stageBloom(tx *dataset.Tx, key string, bf *bloom.BloomFilter, keys, capacity int64) error {
	name := dataset.NewName(".bloom")
	fi, err := dataset.WriteStagedWith(tx, dataset.TableState, key, name, keys, func(w io.Writer) error {
		_, err := io.Copy(w, newBloomEncoder(bf))
		return err
	})
	if err != nil {
		return err
	}
	fi.Capacity = capacity
	tx.SetBloom(dataset.TableState, key, fi)
	return nil
}

// StageBloom stages and sets the Bloom filter of state partition key
// holding hashes, every hash of the partition, hot and cold, as dedup
// builds one (false-positive rate fp with room for twice as many, at
// least minBloomCap): for a writer that makes a state without dedup
// (tools/stategen), which must leave the filters dedup would have.
func StageBloom(tx *dataset.Tx, key string, hashes []schema.Hash, fp float64) error {
	bf, c := bloomOf(hashes, fp)
	return stageBloom(tx, key, bf, int64(len(hashes)), c)
}

// bloomOf builds a filter holding hashes.
func bloomOf(hashes []schema.Hash, fp float64) (*bloom.BloomFilter, int64) {
	bf, c := newBloom(int64(len(hashes)), fp)
	f := bloom20.Of(bf)
	for i := range hashes {
		f.Add(&hashes[i])
	}
	return bf, c
}

type bloomFilter = *bloom.BloomFilter
