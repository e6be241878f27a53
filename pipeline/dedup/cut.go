package dedup

import (
	"fmt"
	"path/filepath"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/internal/exitcode"
)

// setAsideInput moves a spooled input that failed as bad input (err) out
// of the way of later runs, and says where in err. An Arrow stream cut
// mid-message after whole batches (its writer killed while writing one)
// is not garbage: keepCut keeps those batches apart. Anything else is
// set aside whole (setAside).
func setAsideInput(in input, err error) error {
	if cut, ok := rowio.AsCut(err); ok && cut.Rows > 0 && in.inbox && exitcode.Of(err) == exitcode.Usage {
		return keepCut(in, cut, err)
	}
	return setAside(in, err)
}

// keepCut sets aside the spool of in, an Arrow stream cut mid-message
// after whole batches, as Salvage sets aside what a run killed while
// reading had read (dataset.KeepCut): the whole batches become
// DIR/inbox/partial-part-….arrow, which status lists and a person
// applies as an INPUT, and the cut message is kept beside it as
// part-….cut.bad. They are not applied here: observations add up
// (seen_count), and a stream sent again whole (its checksum another
// than the cut one's) would count them twice. The run stops as on bad
// input (exit 2, nothing of it committed), with one line saying how many
// rows came whole, where they are and how to apply them. If they cannot
// be kept apart, the spool is set aside whole, as before.
func keepCut(in input, cut *rowio.CutError, err error) error {
	kept, kerr := dataset.KeepCut(in.path, ".spool", cut.Whole)
	if kept.Partial == "" {
		return setAside(in, fmt.Errorf("%w (its whole batches could not be kept apart: %v)", err, kerr))
	}
	note := ""
	if kerr != nil {
		note = fmt.Sprintf(" (and %v)", kerr)
	}
	// A spool and a leftover are in DIR/inbox; a partial input applied
	// by hand is there too (dataset.IsPartial).
	inbox := filepath.Dir(kept.Partial)
	return exitcode.BadInput(fmt.Errorf("dedup: %s: the stream was cut mid-message after %d complete rows, none applied: "+
		"they are kept as %s (apply them with \"infohash dedup --data %s %s\" unless the producer sends the whole stream again, "+
		"which would count them twice), the %d bytes of the cut message as %s%s",
		in.name, cut.Rows, filepath.Join("inbox", filepath.Base(kept.Partial)), filepath.Dir(inbox), kept.Partial,
		kept.Rest, filepath.Join("inbox", filepath.Base(kept.Tail)), note))
}
