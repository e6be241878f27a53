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
type DataFile struct {
	path   string
	lacks  []string
	footer FooterSum
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
	fh, err = os.Open(f.path)
	if err != nil {
		return nil, nil, 0, err
	}
	info, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, 0, err
	}
	if r, err = f.footer.Check(fh, info.Size(), f.path); err != nil {
		fh.Close()
		return nil, nil, 0, err
	}
	return fh, r, info.Size(), nil
}
