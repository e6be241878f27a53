package dataset

import (
	"fmt"
	"os"
	"strings"
)

// A SpooledInput is a stream a run spooled to the inbox: From names it
// as the user gave it (stdin, a pipe), Path is its spool.
type SpooledInput struct{ From, Path string }

// KeptNote adds to err, a run's error, where the streams it spooled wait:
// those still in the inbox, which the next run of stage applies. (A
// stream set aside as bad input, or whose spool failed, is not there, and
// err says what became of it.)
func KeptNote(err error, stage string, spools []SpooledInput) error {
	if err == nil {
		return nil
	}
	var kept []string
	for _, s := range spools {
		if _, serr := os.Stat(s.Path); serr == nil {
			kept = append(kept, fmt.Sprintf("what %s sent is kept as %s", s.From, s.Path))
		}
	}
	if len(kept) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s; the next %s applies it)", err, strings.Join(kept, ", "), stage)
}
