package merge

import (
	"io"
	"os"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/internal/progress"
)

// merge reports the progress of its long phases on Options.ProgressTo
// (a bar on a terminal, else a log line every progress.Interval): the
// rows of results read ("merge: reading results", with a total and a
// percent when every input is a Parquet file: its footer counts its
// rows), the partitions rewritten ("merge: applying partitions") and,
// for merge --from, the other dataset's partitions unioned ("merge
// --from: unioning partitions"). The steps between, which count nothing
// (reading the peers and leases tables, penalising peers, sorting the
// results, staging leases and peers), say what they do once they have
// run for progress.Interval (progress.Phase).

// newProgress starts a report of work on label with total units (-1:
// unknown) on the run's ProgressTo, or returns nil (reports nothing)
// without one.
func (r *runner) newProgress(label string, total int64) *progress.Reporter {
	if r.progressTo == nil {
		return nil
	}
	return progress.New(r.progressTo, label, total)
}

// phase starts reporting the step label (progress.StartPhase) when the
// run reports its progress, or returns nil (reports nothing).
func (r *runner) phase(label string) *progress.Phase {
	if r.progressTo == nil {
		return nil
	}
	return progress.StartPhase(label)
}

// rowsToRead is how many result rows the pending inputs hold when every
// one is a Parquet file (its footer says), or -1: an Arrow stream (stdin
// spooled, say) tells its rows only as it is read. An input it cannot
// make out counts as unknown: reading it says what is wrong with it.
func rowsToRead(pending []input) int64 {
	var total int64
	for _, in := range pending {
		n, ok := parquetRows(in.path)
		if !ok {
			return -1
		}
		total += n
	}
	return total
}

// parquetRows is the row count the footer of the Parquet file at path
// declares; ok is false if it is not a Parquet file with a sound footer.
func parquetRows(path string) (n int64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	head := make([]byte, sniff.HeadSize)
	m, _ := io.ReadFull(f, head)
	if sniff.Of(head[:m]) != sniff.Parquet {
		return 0, false
	}
	info, err := f.Stat()
	if err != nil {
		return 0, false
	}
	pf, err := rowio.OpenParquet(f, info.Size(), rowio.NoColumns, rowio.DefaultLimits())
	if err != nil {
		return 0, false
	}
	return pf.Metadata().NumRows, true
}

// readingProgress starts the report of the rows of results read from
// pending, or returns nil without ProgressTo.
func (r *runner) readingProgress(pending []input) *progress.Reporter {
	if r.progressTo == nil {
		return nil
	}
	return progress.New(r.progressTo, "merge: reading results", rowsToRead(pending))
}
