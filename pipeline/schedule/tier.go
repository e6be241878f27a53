package schedule

import (
	"strings"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// ColdPrefix starts the name of a state file that holds cold-tier rows.
// Cold files sit in the same prefix=XX directories as hot ones, so the
// state glob still sees every hash, but plan-retries reads them only in
// its budgeted cold sweep. Rows carry their tier in the tier column too;
// a cold row found in a hot file is still treated as cold. (The dataset
// layer names it too: a migration moves rows it makes hot out of them.)
const ColdPrefix = dataset.ColdPrefix

// IsColdFile reports whether a state data file holds cold-tier rows.
func IsColdFile(name string) bool { return strings.HasPrefix(name, ColdPrefix) }

// ColdFileName returns a fresh, unique name for a cold-tier state file.
func ColdFileName() string { return ColdPrefix + dataset.NewName(".parquet") }

// WriteTiers stages a partition's hot rows as a new hot file and its cold
// rows as a new cold file (ColdFileName), none for an empty side, each by
// write(name, rows), and returns files with the staged ones appended.
func WriteTiers(files []dataset.FileInfo, hot, cold []schema.State,
	write func(name string, rows []schema.State) (dataset.FileInfo, error)) ([]dataset.FileInfo, error) {
	for _, part := range []struct {
		rows []schema.State
		name string
	}{{hot, dataset.NewName(".parquet")}, {cold, ColdFileName()}} {
		if len(part.rows) == 0 {
			continue
		}
		fi, err := write(part.name, part.rows)
		if err != nil {
			return files, err
		}
		files = append(files, fi)
	}
	return files, nil
}

// InColdWindow reports whether plan-retries reads the cold files of
// partition prefix in a pass whose sweep starts at cursor: a window of
// p.Plan.ColdPartitions consecutive prefixes (wrapping after ff). The
// cursor is kept in the dataset (dataset.CursorColdSweep) and each plan
// commit that read cold files moves it on by the window's width
// (NextColdCursor), so every cold partition is read in turn, once every
// 256/ColdPartitions passes, however often or rarely passes run.
func InColdWindow(p Policy, prefix byte, cursor int64) bool {
	w := int64(p.Plan.ColdPartitions)
	if w >= 256 {
		return true
	}
	start := ((cursor % 256) + 256) % 256
	return (int64(prefix)-start+256)%256 < w
}

// NextColdCursor is where the sweep starts in the pass after one that
// started at cursor.
func NextColdCursor(p Policy, cursor int64) int64 {
	w := int64(min(max(p.Plan.ColdPartitions, 1), 256))
	return (((cursor%256)+256)%256 + w) % 256
}
