package status

import (
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/pipeline/schedule"
)

// readViews appends the columns status counts of every state file of a
// partition to out, read column by column with statecol's readers:
// parquet-go's row reader made status take half a minute on a 20M-hash
// state of snapshot m. A column that m's format predates reads as zero
// values (statecol.Open). info_hash is read only when withHash is set. Rows of a
// cold file have ColdFile set.
func readViews(d *dataset.Dataset, m *dataset.Manifest, key string, withHash bool, out []stateView) ([]stateView, error) {
	for _, fi := range m.Table(dataset.TableState).Partitions[key] {
		var err error
		start := len(out)
		if out, err = readFileViews(d.DataFile(m, dataset.TableState, key, fi), withHash, out); err != nil {
			return out, err // it names the file
		}
		if schedule.IsColdFile(fi.Name) {
			for i := range out[start:] {
				out[start+i].ColdFile = true
			}
		}
	}
	return out, nil
}

// readFileViews is readViews of the state file df (statecol.Open checks
// its footer against the manifest's record).
func readFileViews(df rowio.DataFile, withHash bool, out []stateView) ([]stateView, error) {
	f, err := statecol.Open(df)
	if err != nil {
		return out, err
	}
	path := df.Path()
	defer f.Close()
	var first int64 // the file's row number of rg's first row
	for _, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		start := len(out)
		out = slices.Grow(out, n)[:start+n]
		rows := out[start:]
		clear(rows)
		for _, r := range []struct {
			name string
			read func(parquet.ColumnChunk) error
		}{
			{"metadata_status", func(c parquet.ColumnChunk) error {
				return statecol.String(c, n, func(i int, s string) { rows[i].MetadataStatus = s })
			}},
			{"tier", func(c parquet.ColumnChunk) error {
				return statecol.String(c, n, func(i int, s string) { rows[i].Tier = s })
			}},
			{"last_failure", func(c parquet.ColumnChunk) error {
				return statecol.String(c, n, func(i int, s string) { rows[i].LastFailure = s })
			}},
			{"next_retry", func(c parquet.ColumnChunk) error {
				return statecol.Int64(c, n, func(i int, v int64) { rows[i].NextRetry = v })
			}},
			{"info_hash", func(c parquet.ColumnChunk) error {
				if !withHash {
					return nil
				}
				const size = len(schema.Hash{})
				hashes := make([]byte, n*size)
				if err := statecol.Fixed(c, size, hashes); err != nil {
					return err
				}
				for i := range rows {
					copy(rows[i].InfoHash[:], hashes[i*size:])
				}
				return nil
			}},
		} {
			c, _ := f.Column(rg, r.name)
			if c == nil {
				continue
			}
			if err := r.read(c); err != nil {
				return out, fmt.Errorf("%s: %s: %w", path, r.name, err)
			}
		}
		// Counted under a name that is none of the column's, a damaged
		// value would pass for a status or tier of its own.
		for i := range rows {
			err := schema.CheckStatus(rows[i].MetadataStatus)
			if err == nil {
				err = schema.CheckTier(rows[i].Tier)
			}
			if err != nil {
				return out, fmt.Errorf("%s: %w", path, statecol.BadRow(first+int64(i), err))
			}
		}
		first += int64(n)
	}
	return out, nil
}
