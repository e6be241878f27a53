package export

import (
	"fmt"
	"os"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
)

// precheckFiles checks, before the first byte of an export to an output
// that cannot take bytes back (stdout, a FIFO, a device), that every file
// of snapshot m the export will read is there with the size and footer
// its manifest records. Without it, a missing or truncated file half way
// through the partitions ended the run (exit 1) after the partitions
// before it had gone out: a well-formed CSV or JSON Lines stream, only
// shorter, which a reader down the pipe took for the whole table. A file
// output needs no check: it is published only once whole.
//
// A missing file comes back as fs.ErrNotExist, so that runLatest tells a
// snapshot collected by a newer commit (start over) from damage. Damage
// inside a file that keeps its size and footer is still found only when
// the partition is read (status --verify finds it beforehand).
func precheckFiles(d *dataset.Dataset, m *dataset.Manifest, o Options) error {
	var tables []string
	switch o.Table {
	case "state":
		tables = []string{dataset.TableState, dataset.TableLeases}
	case "catalog":
		tables = []string{dataset.TableState, dataset.TableTorrents}
	default:
		tables = []string{o.Table}
	}
	for _, name := range tables {
		t := m.Table(name)
		partitioned := name == dataset.TableState || name == dataset.TableTorrents
		for _, key := range t.PartitionKeys() {
			if partitioned && !o.keepPartition(key) {
				continue
			}
			for _, f := range t.Partitions[key] {
				path := d.FilePath(t, key, f)
				if err := precheckFile(path, f); err != nil {
					return fmt.Errorf("export: %w (nothing was written)", err)
				}
			}
		}
	}
	return nil
}

// precheckFile checks the file at path against its manifest record f:
// its size, and its footer when the manifest records one.
func precheckFile(path string, f dataset.FileInfo) error {
	fh, err := os.Open(path)
	if err != nil {
		return err // names path; fs.ErrNotExist when missing
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	if st.Size() != f.Size {
		return &rowio.FooterError{Path: path, What: fmt.Sprintf("%d bytes, the manifest says %d", st.Size(), f.Size)}
	}
	_, err = f.Footer().Check(fh, st.Size(), path)
	return err
}
