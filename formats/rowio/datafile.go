package rowio

import (
	"io"
	"os"
)

// DataFile names a Parquet file to read together with what its reader
// checks of it beyond what the file says of itself: the footer checksum
// its dataset's manifest recorded (Footer), and the top-level columns its
// dataset's format predates, which the file may lack (Lacks). Readers of
// a dataset's files take a DataFile rather than a path so that neither
// can be left out or taken from another snapshot by mistake.
//
// A snapshot's file gets its DataFile from dataset.Dataset.DataFile,
// which builds it from the manifest's entry for the file; a file that is
// no snapshot's (a user's input, a test's or a fuzz target's file) is an
// UnrecordedFile. The zero DataFile names no file.
//
// A writer that takes the file's rows or bytes into a new file reads its
// WholeChecked DataFile, whose full reads also check the whole file
// against the size and CRC-32C the manifest records (Sum, FileSummer).
type DataFile struct {
	path   string
	lacks  []string
	footer FooterSum
	sum    FileSum
	whole  bool
}

// RecordedFile is the DataFile of the file at path as a dataset's
// manifest records it: footer is the FooterSum the manifest holds of it
// (the zero one in a format that recorded none), and lacks the columns
// the dataset's format predates. Readers of a snapshot do not call it:
// they get a snapshot's files from dataset.Dataset.DataFile, which
// does.
func RecordedFile(path string, footer FooterSum, lacks ...string) DataFile {
	return DataFile{path: path, lacks: lacks, footer: footer}
}

// UnrecordedFile is the DataFile of the file at path, which no dataset's
// manifest records: its footer is not checked (there is no checksum to
// check it against) and it must have every column.
func UnrecordedFile(path string) DataFile { return DataFile{path: path} }

// WithSum is f with s, what its manifest records of the whole file: the
// sum a splice (which copies the file's bytes) and the full reads of a
// WholeChecked f check. dataset.Dataset.DataFile gives every snapshot's
// file its sum.
func (f DataFile) WithSum(s FileSum) DataFile {
	f.sum = s
	return f
}

// WholeChecked is f for a writer that takes its rows into a new file
// (dedup's and merge's rewrites, a migration): a read of all its rows
// (statecol's ReadAllInto and the readers built on it, dataset's
// ReadDataFile...) also checks the whole file against Sum, on the bytes
// it reads, and fails with a *FooterError naming the file on a mismatch,
// so that damage the page CRCs miss (a page header, a byte the reader
// skips) is not carried into a file with a new, valid checksum. Readers
// that write nothing of the file do not pay for it.
func (f DataFile) WholeChecked() DataFile {
	f.whole = true
	return f
}

// Sum is what the file's manifest records of the whole file: the zero
// FileSum for an UnrecordedFile.
func (f DataFile) Sum() FileSum { return f.sum }

// ChecksWhole reports whether f is WholeChecked and has a recorded Sum.
func (f DataFile) ChecksWhole() bool { return f.whole && f.sum.Recorded() }

// Path is the file's path.
func (f DataFile) Path() string { return f.path }

// Footer is the FooterSum the file's manifest records of it: the zero
// one (nothing to check) for an UnrecordedFile or a file of a dataset
// format that recorded none.
func (f DataFile) Footer() FooterSum { return f.footer }

// Lacks returns the names of the top-level columns the file may lack,
// which read as zero values (see CheckTable): nil for a file that must
// have every column.
func (f DataFile) Lacks() []string { return f.lacks }

// Open opens the file and checks its footer against Footer
// (FooterSum.Check) before anything reads the footer. It returns the open
// file, which the caller closes, a reader of it that serves the checked
// footer from memory, which is what the caller decodes, and the file's
// size. Its errors name the file (a footer mismatch is a *FooterError).
func (f DataFile) Open() (fh *os.File, r io.ReaderAt, size int64, err error) {
	fh, r, _, size, err = f.open(false)
	return fh, r, size, err
}

// OpenSummed is Open for a reader that may check the whole file (a
// splice, a WholeChecked full read): r reads through sum, a FileSummer
// of the file against Sum (nil when f has none), which sums nothing
// until the caller Starts it.
func (f DataFile) OpenSummed() (fh *os.File, r io.ReaderAt, sum *FileSummer, size int64, err error) {
	return f.open(true)
}

func (f DataFile) open(summed bool) (fh *os.File, r io.ReaderAt, sum *FileSummer, size int64, err error) {
	fh, err = os.Open(f.path)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	info, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, nil, 0, err
	}
	r = fh
	if summed {
		if sum = NewFileSummer(fh, info.Size(), f.path, f.sum); sum != nil {
			r = sum
		}
	}
	if r, err = f.footer.Check(r, info.Size(), f.path); err != nil {
		fh.Close()
		return nil, nil, nil, 0, err
	}
	return fh, r, sum, info.Size(), nil
}
