package merge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/infohash/infohash/internal/exitcode"
)

// cutInputs is the partial outcome (exit 3) of a run that left out the
// files in busy (skipWriting) or applied streams cut mid-message or
// ended without their end-of-stream marker (readResultsTo): one line that
// says, for each,
// how many rows came through whole and were applied, and what became of
// the jobs whose rows were cut off; nil when none was cut. The ledger
// records such a stream by the checksum of what came, as any input: the
// same bytes again are a no-op, and the whole stream, if fetch's output
// was kept and is merged later, is another input whose rows already
// applied count once (by lease) while the rest apply.
func cutInputs(pending []input, notes map[string]inputNote, busy []string) error {
	cuts := slices.Clone(busy)
	for _, in := range pending {
		switch c := notes[in.id].cut; {
		case c == nil:
		case c.NoEnd:
			cuts = append(cuts, fmt.Sprintf("%s: the stream ended without its end-of-stream marker after %d complete rows, "+
				"which were applied (its writer was stopped before closing it)", in.name, c.Rows))
		default:
			cuts = append(cuts, fmt.Sprintf("%s: the stream was cut mid-message after %d complete rows, which were applied "+
				"(%d bytes of a cut message dropped)", in.name, c.Rows, c.Size-c.Whole))
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	jobs := ""
	if len(cuts) > len(busy) {
		jobs = "; the jobs whose rows did not get through stay leased until their lease_until, when plan-retries plans them again"
	}
	return exitcode.With(exitcode.Partial, fmt.Errorf("merge: %s%s", strings.Join(cuts, "; "), jobs))
}
