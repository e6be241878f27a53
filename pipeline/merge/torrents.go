package merge

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// maxTorrentFiles is how many files a torrents partition may hold before
// merge compacts it into one.
const maxTorrentFiles = 16

// torrentRow is a torrents row to write, its Meta still in the runner's
// spill when meta says so.
type torrentRow struct {
	schema.Torrent
	meta metaRef
}

// torrentPartition adds rows (new fetches) to torrents partition key as a
// new file, compacting the partition when it has too many files.
func (r *runner) torrentPartition(key string, rows []torrentRow) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	slices.SortFunc(rows, func(a, b torrentRow) int { return hashCmp(a.InfoHash, b.InfoHash) })
	t := r.base.Table(dataset.TableTorrents)
	files := slices.Clone(t.Partitions[key])
	var fi dataset.FileInfo
	var err error
	if len(files)+1 > maxTorrentFiles {
		fi, err = r.compactTorrents(key, files, rows)
		files = nil
	} else {
		fi, err = r.writeTorrentsFile(key, rows)
	}
	if err != nil {
		return 0, err
	}
	files = append(files, fi)
	r.mu.Lock()
	r.tx.SetPartition(dataset.TableTorrents, key, files)
	r.mu.Unlock()
	return len(rows), nil
}

// writeTorrentsFile stages rows as a new file of partition key, as
// dataset.WriteStaged would write them, but a row at a time: only one
// torrent's metadata is read back from the spill at once.
func (r *runner) writeTorrentsFile(key string, rows []torrentRow) (dataset.FileInfo, error) {
	r.mu.Lock()
	tx := r.tx
	r.mu.Unlock()
	fi, err := dataset.WriteStagedWith(tx, dataset.TableTorrents, key, dataset.NewName(".parquet"), int64(len(rows)), func(out io.Writer) error {
		w := rowio.NewParquetWriter[schema.Torrent](out)
		if err := r.writeTorrents(w, rows); err != nil {
			return err
		}
		return w.Close()
	})
	if err != nil {
		return fi, fmt.Errorf("merge: %w", err)
	}
	return fi, nil
}

// writeTorrents writes rows to w one at a time, each with its metadata.
// rowio.ParquetWriter writes a row type with blob columns a row at a
// time whatever it is given, so the file is the same as from one Write of
// every row.
func (r *runner) writeTorrents(w *rowio.ParquetWriter[schema.Torrent], rows []torrentRow) error {
	one := make([]schema.Torrent, 1)
	for i := range rows {
		one[0] = rows[i].Torrent
		if rows[i].meta.spilled() {
			m, err := r.spill.get(rows[i].meta)
			if err != nil {
				return &dataset.SourceError{Path: r.spill.path(), Err: fmt.Errorf("torrent %s: %w", schema.Hex(rows[i].InfoHash), err)}
			}
			one[0].Meta = m
		}
		if _, err := w.Write(one); err != nil {
			return err
		}
		checkpoint()
	}
	return nil
}

// compactTorrents streams the partition's files (the base snapshot's) and
// the new rows into one file, a batch at a time (metadata can be large).
func (r *runner) compactTorrents(key string, files []dataset.FileInfo, rows []torrentRow) (dataset.FileInfo, error) {
	r.mu.Lock()
	tx := r.tx
	r.mu.Unlock()
	n := int64(0)
	fi, err := dataset.WriteStagedWith(tx, dataset.TableTorrents, key, dataset.NewName(".parquet"), 0, func(out io.Writer) error {
		w := rowio.NewParquetWriter[schema.Torrent](out)
		buf := make([]schema.Torrent, 64)
		for _, fi := range files {
			df := r.d.DataFile(r.base, dataset.TableTorrents, key, fi)
			if err := copyRows(df, buf, w, &n); err != nil {
				if _, ok := errors.AsType[*rowio.FooterError](err); ok {
					return err // it names the file
				}
				return &dataset.SourceError{Path: df.Path(), Err: fmt.Errorf("compacting: %w", err)}
			}
		}
		if err := r.writeTorrents(w, rows); err != nil {
			return err
		}
		n += int64(len(rows))
		return w.Close()
	})
	if err != nil {
		return dataset.FileInfo{}, fmt.Errorf("merge: %w", err)
	}
	fi.Rows = n
	return fi, nil
}

// copyRows writes the rows of the torrents file df to w, once its footer
// matches the manifest's record (rowio.DataFile.Open), counting them in
// n; once they are read, it checks the whole file against the manifest's
// size and CRC-32C (rowio.FileSummer): damage is not compacted into the
// new file.
func copyRows(df rowio.DataFile, buf []schema.Torrent, w *rowio.ParquetWriter[schema.Torrent], n *int64) error {
	in, r, sum, size, err := df.OpenSummed()
	if err != nil {
		return err
	}
	defer in.Close()
	sum.Start() // the whole file is checked once read: its rows go into the new one
	pf, err := openTorrents(r, size, rowio.DefaultLimits())
	if err != nil {
		return err
	}
	rd := parquet.NewGenericReader[schema.Torrent](pf)
	defer rd.Close()
	rows := rowio.NewParquetRows(rd) // null name, total_size... stay null
	for {
		k, err := rows.Read(buf)
		if k > 0 {
			if _, err := w.Write(buf[:k]); err != nil {
				return err
			}
			*n += int64(k)
		}
		if errors.Is(err, io.EOF) {
			return sum.Check() // a *rowio.FooterError naming the file
		}
		if err != nil {
			return err
		}
	}
}

// openTorrents opens a dataset's torrents file of size bytes in r, whose
// footer rowio.DataFile.Open has checked against the manifest's record
// of it, and which must have every column of schema.Torrent
// (rowio.CheckTable), within lim. A column missing from it is damage,
// which copyRows would otherwise write into the new file as nulls.
func openTorrents(r io.ReaderAt, size int64, lim rowio.Limits) (*parquet.File, error) {
	pf, err := rowio.OpenParquet(r, size, nil, lim)
	if err != nil {
		return nil, err
	}
	if err := rowio.CheckTable(pf, torrentSchema(), "Parquet"); err != nil {
		return nil, err
	}
	return pf, nil
}

var torrentSchema = sync.OnceValue(func() *parquet.Schema { return parquet.SchemaOf(schema.Torrent{}) })

// eachTorrent streams the rows of the torrents file df, once its footer
// matches the manifest's record (rowio.DataFile.Open), and checks the
// whole file once read if df is WholeChecked. With max > 0 (merge
// --from: another dataset's file, merged under a cap of its own) an info
// dictionary over max bytes is bad input, refused as a results file's is
// (metacap.go): a page of the metadata columns from its header, else the
// row; so are its name, a file's path and served_by (checkTorrentFields).
func eachTorrent(df rowio.DataFile, max int64, fn func(*schema.Torrent)) error {
	in, r, sum, size, err := df.OpenSummed()
	if err != nil {
		return err // it names the file
	}
	defer in.Close()
	if df.ChecksWhole() {
		sum.Start()
	}
	path := df.Path()
	lim := rowio.DefaultLimits()
	if max > 0 {
		lim = resultLimits(max)
	}
	pf, err := openTorrents(r, size, lim)
	if err != nil {
		if cerr := capPageError(path, fromHint, max, err); cerr != err {
			return cerr
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	rd := parquet.NewGenericReader[schema.Torrent](pf)
	defer rd.Close()
	rows := rowio.NewParquetRows(rd) // null name, total_size... stay null
	// An unsigned or wider column (another tool's file under merge
	// --from) is read by value: a file_count past int32 is refused, not
	// its bits (-1), nor a hash_type of 257 as its low byte (1).
	ints := rowio.NewIntCheck[schema.Torrent](pf)
	defer ints.Close()
	buf := make([]schema.Torrent, 64)
	var n int64
	for {
		k, err := rows.Read(buf)
		if good, ierr := ints.Check(buf[:k]); ierr != nil {
			k, err = good, exitcode.BadInput(ierr) // named below
		}
		for i := range buf[:k] {
			if n++; max > 0 {
				if err := checkTorrentMeta(path, n, &buf[i], max); err != nil {
					return err
				}
				if err := checkTorrentFields(path, n, &buf[i], max); err != nil {
					return err
				}
			}
			fn(&buf[i])
		}
		if errors.Is(err, io.EOF) {
			if df.ChecksWhole() {
				return sum.Check() // a *rowio.FooterError naming the file
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}
