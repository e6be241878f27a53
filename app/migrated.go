package app

import (
	"fmt"

	"github.com/infohash/infohash/formats/dataset"
)

// nothingCommitted is what a writer that stopped before its own commit
// (err is its error) says it committed: "nothing committed", unless Open
// migrated DIR from an older format first, in a commit of its own that
// stays (dataset.MigrationOf): then nothing of its input, and the
// migration (onOpen). It said "nothing committed" then too.
func nothingCommitted(err error) string {
	if s := onOpen(err); s != "" {
		return "nothing of the input committed" + s
	}
	return "nothing committed"
}

// onOpen says, after a "; ", what a run whose error is err committed
// on open, before reading its input: the migration of an older format
// (and, of a copy, its own dataset id, which that commit drew); "" when
// it committed nothing then.
func onOpen(err error) string {
	m, ok := dataset.MigrationOf(err)
	if !ok {
		return ""
	}
	id := ""
	if m.Identified {
		id = ", which also gave this copy its own dataset id"
	}
	return fmt.Sprintf("; %s was migrated from format %d to %d on open (snapshot %d%s), and that stays committed",
		m.Dir, m.From, dataset.FormatVersion, m.Snapshot, id)
}
