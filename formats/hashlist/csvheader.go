package hashlist

import (
	"slices"
	"strings"

	"github.com/infohash/infohash/formats/schema"
)

// csvColumns are the first columns of the tables export writes: a CSV
// file of one (export --format csv) starts with a header naming one.
var csvColumns = []string{"info_hash", "info_hash_v2", "addr", "id"}

// CSVHeader reports whether line, a list's first line, looks like the
// header of a CSV file: fields between commas, one of them a column name
// of export's tables (csvColumns), bare or in double quotes.
func CSVHeader(line string) bool {
	if !strings.Contains(line, ",") {
		return false
	}
	for f := range strings.SplitSeq(line, ",") {
		if slices.Contains(csvColumns, strings.Trim(strings.TrimSpace(f), `"`)) {
			return true
		}
	}
	return false
}

// CSVHeaderError is the error for the current line when it is the
// list's first and looks like a CSV header (CSVHeader), else nil: the
// file is a CSV file, export's most likely, not a list. reads says what
// the command reads instead of it, "dedup reads Parquet, Arrow, or", and
// the error goes on "a list of one infohash or magnet URI a line", as
// each command words a list.
func (s *Scanner) CSVHeaderError(reads string) error {
	if s.line != 1 || !CSVHeader(string(s.Bytes())) {
		return nil
	}
	return s.Errorf("%s looks like a CSV header: %s a list of one infohash or magnet URI a line "+
		"(export --format csv output is not an input)", schema.Quote(string(s.Bytes())), reads)
}
