package dedup

import (
	"context"
	"fmt"
	"strings"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/internal/exitcode"
)

// badSuffix marks spooled input that was bad: later runs leave it alone
// (the user may inspect or delete it).
const badSuffix = ".bad"

// setAside moves spooled stdin input that failed as bad input out of the
// way (dataset.SetAside: renamed with badSuffix, or removed if empty), so
// that it does not fail every later run as a leftover, and says where it
// was kept in err: the input's name there ("stdin (DIR/inbox/part-….spool)",
// DIR as the user gave it) becomes the file's new name
// ("stdin (DIR/inbox/part-….spool.bad)").
func setAside(in input, err error) error {
	if !in.inbox || exitcode.Of(err) != exitcode.Usage {
		return err
	}
	if in.live != nil && in.live.Wait(context.Background()) != nil {
		return err // no file to set aside: the spool failed, and says so
	}
	kept, aerr := dataset.SetAside(in.path)
	if aerr != nil || kept == "" {
		return err
	}
	return renamed(in, kept, err)
}

// renamed is err, which names input in, saying that in's file is now at
// kept: in's name in its text names kept instead (or, if the text does
// not name in, kept is added).
func renamed(in input, kept string, err error) error {
	msg := err.Error()
	if in.name == "" || !strings.Contains(msg, in.name) || !strings.Contains(in.name, in.path) {
		return fmt.Errorf("%w (set aside as %s)", err, kept)
	}
	msg = strings.Replace(msg, in.name, strings.Replace(in.name, in.path, kept, 1), 1)
	return &renamedError{msg: msg + " (set aside)", err: err}
}

// renamedError is an error whose text was rewritten (renamed): it
// unwraps to the original, which tells its exit status.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }
