package dataset

import "github.com/infohash/infohash/formats/rowio"

// DataFile is the rowio.DataFile of data file f of partition key of
// table in snapshot m of d: its path, the footer checksum m records of
// it (FileInfo.Footer: the zero one in a format before FooterFormat), and
// the columns m's format predates, which the file may lack (state files
// of formats 1 and 2, Manifest.StateLacks; the other tables have had the
// same columns in every format). Readers of a snapshot's files take it
// from here rather than assemble its parts, so that none is left out, or
// taken from another snapshot than the table's. It carries the size and
// CRC-32C m records of the whole file (rowio.DataFile.Sum), which a
// splice of the file checks.
func (d *Dataset) DataFile(m *Manifest, table, key string, f FileInfo) rowio.DataFile {
	var lacks []string
	if table == TableState {
		lacks = m.StateLacks().Names()
	}
	return d.dataFile(m.Table(table), key, f, lacks...)
}

// dataFile is DataFile of table t of a snapshot whose format the caller
// knows t's files lack the columns in lacks of: where every reader's
// rowio.DataFile of a snapshot's file is built, with the footer checksum
// the manifest records.
func (d *Dataset) dataFile(t *Table, key string, f FileInfo, lacks ...string) rowio.DataFile {
	return rowio.RecordedFile(d.FilePath(t, key, f), f.Footer(), lacks...).WithSum(f.Sum())
}

// SourceFile is DataFile for a writer that takes the file's rows into a
// new file (a rewrite, a migration): rowio.DataFile.WholeChecked, so
// that reading them also checks the whole file against the size and
// CRC-32C m records, and damage is refused rather than committed in a
// new file with a valid checksum. (A splice checks every file it copies,
// whichever DataFile it was opened from.)
func (d *Dataset) SourceFile(m *Manifest, table, key string, f FileInfo) rowio.DataFile {
	return d.DataFile(m, table, key, f).WholeChecked()
}
