package dedup

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/hashlist"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/internal/exitcode"
)

// setAsideInput moves a spooled input that failed as bad input (err) out
// of the way of later runs, and says where in err. A stream whose writer
// was killed is not garbage: an Arrow stream cut mid-message or ended
// without its end-of-stream marker after whole batches, or a text list
// whose last line, which no newline ends, is not an entry, after whole
// lines: keepCut keeps those batches or lines apart. Anything else is
// set aside whole (setAside).
func setAsideInput(in input, err error) error {
	if !in.inbox || exitcode.Of(err) != exitcode.Usage {
		return setAside(in, err)
	}
	if cut, ok := rowio.AsCut(err); ok && cut.Rows > 0 {
		return keepCut(in, cut, err)
	}
	if cut, ok := hashlist.AsCutLine(err); ok && cut.Whole > 0 {
		return keepCutLine(in, cut, err)
	}
	return setAside(in, err)
}

// keepCut sets aside the spool of in, an Arrow stream cut mid-message
// or ended without its end-of-stream marker after whole batches, as
// Salvage sets aside what a run killed while reading had read
// (dataset.KeepCut): the whole batches become
// DIR/inbox/partial-part-….arrow, which status lists and a person
// applies as an INPUT, and a cut message is kept beside it as
// part-….cut.bad (a stream without its marker has none: all of it is in
// the partial input). They are not applied here: observations add up
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
	if cut.NoEnd {
		return exitcode.BadInput(fmt.Errorf("dedup: %s: the stream ended without its end-of-stream marker after %d complete rows "+
			"(its writer was stopped before closing it), none applied: they are kept as %s (apply them with %s if its writer "+
			"legitimately ends streams without the marker, or if the producer will not send the whole stream again, "+
			"which would count them twice)%s",
			streamName(in), cut.Rows, kept.Partial, applyCommand(kept.Partial), alsoNote(kerr)))
	}
	return exitcode.BadInput(fmt.Errorf("dedup: %s: the stream was cut mid-message after %d complete rows, none applied: "+
		"they are kept as %s (apply them with %s unless the producer sends the whole stream again, "+
		"which would count them twice), the %d bytes of the cut message as %s%s",
		streamName(in), cut.Rows, kept.Partial, applyCommand(kept.Partial), kept.Rest, kept.Tail, alsoNote(kerr)))
}

// keepCutLine is keepCut for a text list whose last line, which no
// newline ends, is not an entry (its writer killed in the middle of it):
// the whole lines before it become DIR/inbox/partial-part-….txt and the
// cut line part-….cut.bad; nothing is applied, as for a cut stream.
func keepCutLine(in input, cut *hashlist.CutLineError, err error) error {
	kept, kerr := dataset.KeepCut(in.path, ".spool", cut.Whole)
	if kept.Partial == "" {
		return setAside(in, fmt.Errorf("%w (its whole lines could not be kept apart: %v)", err, kerr))
	}
	return exitcode.BadInput(fmt.Errorf("dedup: %s: the list ends in a cut line: line %d, which no newline ends, is not an entry (%v); "+
		"none applied: the %d complete lines before it are kept as %s (apply them with %s unless the producer sends "+
		"the whole list again, which would count them twice), the %d bytes of the cut line as %s%s",
		streamName(in), cut.Line, cut.Err, cut.Line-1, kept.Partial, applyCommand(kept.Partial), kept.Rest,
		kept.Tail, alsoNote(kerr)))
}

// streamName is what messages call in once its spool was split into a
// partial input and a cut end (keepCut), which they name: the stream it
// was read from (stdin, a pipe's path), or the leftover's name.
func streamName(in input) string {
	if in.spooled != "" {
		return in.spooled
	}
	return in.name
}

// applyCommand is the command, quoted, that applies partial, a partial
// input in DIR/inbox (dataset.IsPartial: it leaves the inbox once applied).
func applyCommand(partial string) string {
	return fmt.Sprintf("\"infohash dedup --data %s %s\"", filepath.Dir(filepath.Dir(partial)), partial)
}

// alsoNote is " (and kerr)" for the error of the inbox folder's fsync
// after a partial input was kept, else "".
func alsoNote(kerr error) string {
	if kerr == nil {
		return ""
	}
	return fmt.Sprintf(" (and %v)", kerr)
}

// ErrLeftOut is matched (errors.Is) by the partial outcome (exit 3) of a
// run that applied all it could of its inputs, but left some of them
// out: a file named as INPUT that a stream is still being written into
// (skipped whole), or the cut message of an Arrow file named as INPUT.
// The run reports as a whole one does.
var ErrLeftOut = errors.New("part of the input left out")

// cutNote is a file named as INPUT whose Arrow stream was cut
// mid-message (its writer killed while writing a batch): its whole
// batches were read, the cut message is left out.
type cutNote struct {
	name string
	cut  *rowio.CutError
}

// cutFile notes that in, a file named as INPUT, is an Arrow stream cut
// mid-message, read up to the cut (none, cut inside its first batch:
// then it commits only its ledger entry). Unlike a spooled stream's (keepCut)
// its whole batches are applied: the file is the input, and the ledger
// keys it by the checksum of all its bytes, so applying the same file
// again is a no-op; a file still being written is not read at all (its
// writer's lock, see lockedInputs).
func (b *batch) cutFile(in input, cut *rowio.CutError) {
	b.cuts = append(b.cuts, cutNote{name: in.name, cut: cut})
}

// cutsOf returns the notes of b about the inputs of group.
func (b *batch) cutsOf(group []input) []cutNote {
	var out []cutNote
	for _, c := range b.cuts {
		if slices.ContainsFunc(group, func(in input) bool { return in.name == c.name }) {
			out = append(out, c)
		}
	}
	return out
}

// leftOut is the outcome of a run that committed what it read: nil, or
// the partial outcome (exit 3, an ErrLeftOut) that says, in one line,
// which files named as INPUT it left out, being written (busy), and
// which Arrow files were cut mid-message.
func leftOut(cuts []cutNote, busy []string) error {
	if len(cuts) == 0 && len(busy) == 0 {
		return nil
	}
	var says []string
	for _, b := range busy {
		says = append(says, b+": skipped, not applied (apply it once its writer is done)")
	}
	for _, c := range cuts {
		if c.cut.Rows == 0 {
			says = append(says, fmt.Sprintf("%s: the Arrow IPC stream was cut before its first whole batch, nothing applied "+
				"(its writer was killed while writing it: the %d bytes of the cut batch are left out)", c.name, c.cut.Size-c.cut.Whole))
			continue
		}
		says = append(says, fmt.Sprintf("%s: the Arrow IPC stream was cut mid-message after %d complete rows, which were "+
			"applied (its writer was killed while writing a batch: the %d bytes of the cut one are left out)",
			c.name, c.cut.Rows, c.cut.Size-c.cut.Whole))
	}
	again := ""
	if len(cuts) > 0 {
		again = ": applying the same file again changes nothing"
	}
	return exitcode.With(exitcode.Partial, fmt.Errorf("dedup: %s (%w%s)", strings.Join(says, "; "), ErrLeftOut, again))
}
