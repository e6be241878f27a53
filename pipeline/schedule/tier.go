package schedule

import (
	"strings"

	"github.com/infohash/infohash/formats/dataset"
)

// ColdPrefix starts the name of a state file that holds cold-tier rows.
// Cold files sit in the same prefix=XX directories as hot ones, so the
// state glob still sees every hash, but plan-retries reads them only in
// its budgeted cold sweep. Rows carry their tier in the tier column too;
// a cold row found in a hot file is still treated as cold.
const ColdPrefix = "cold-"

// IsColdFile reports whether a state data file holds cold-tier rows.
func IsColdFile(name string) bool { return strings.HasPrefix(name, ColdPrefix) }

// ColdFileName returns a fresh, unique name for a cold-tier state file.
func ColdFileName() string { return ColdPrefix + dataset.NewName(".parquet") }

// InColdWindow reports whether plan-retries reads the cold files of
// partition prefix in a pass at now: a window of p.Plan.ColdPartitions
// consecutive prefixes that moves on by its own width every hour, so that
// passes over a day sweep the whole cold tier at a bounded cost per pass.
func InColdWindow(p Policy, prefix byte, now int64) bool {
	w := int64(p.Plan.ColdPartitions)
	if w >= 256 {
		return true
	}
	hours := now / (60 * 60 * 1000)
	if now < 0 {
		hours = 0
	}
	start := (hours % 256) * w % 256
	return (int64(prefix)-start+256)%256 < w
}
