package dataset

import (
	"errors"
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
// err says what became of it.) The result is a *KeptError when some wait
// (KeptWhole finds them), else err.
func KeptNote(err error, stage string, spools []SpooledInput) error {
	if err == nil {
		return nil
	}
	var kept []SpooledInput
	for _, s := range spools {
		if _, serr := os.Stat(s.Path); serr == nil {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return err
	}
	return &KeptError{Err: err, Stage: stage, Kept: kept}
}

// A KeptError is a run's error (Err) and the streams it spooled whole
// that wait in the inbox under their final names (Kept), which the next
// run of Stage applies as leftovers.
type KeptError struct {
	Err   error
	Stage string
	Kept  []SpooledInput
}

func (e *KeptError) Error() string {
	kept := make([]string, len(e.Kept))
	for i, s := range e.Kept {
		kept[i] = fmt.Sprintf("what %s sent is kept as %s", s.From, s.Path)
	}
	return fmt.Sprintf("%v (%s; the next %s applies it)", e.Err, strings.Join(kept, ", "), e.Stage)
}

func (e *KeptError) Unwrap() error { return e.Err }

// KeptWhole is the spool where err (KeptNote's) says the stream from
// ("stdin", a pipe's path) waits whole for the next run to apply; "" when
// it says none does: the run did not read that stream to its end (a stop
// leaves what it read under the spool's temporary name, which the next
// run sets aside as partial input, Salvage), or set it aside.
func KeptWhole(err error, from string) string {
	var k *KeptError
	if !errors.As(err, &k) {
		return ""
	}
	for _, s := range k.Kept {
		if s.From == from {
			return s.Path
		}
	}
	return ""
}

// nothingRead is an error that ended a run before it read any of its
// streams (NothingRead).
type nothingRead struct{ err error }

func (e *nothingRead) Error() string { return e.err.Error() }
func (e *nothingRead) Unwrap() error { return e.err }

// NothingRead marks err (nil stays nil) as ending a run before it read
// anything of its streams: it stopped opening the dataset (waiting with
// --lock-wait for the lock to create or migrate it), so no spool of
// stdin exists, whole or cut. ReadNothing finds the mark.
func NothingRead(err error) error {
	if err == nil {
		return nil
	}
	return &nothingRead{err: err}
}

// ReadNothing reports whether err went through NothingRead.
func ReadNothing(err error) bool { return errors.As(err, new(*nothingRead)) }

// An UnreadableCut is a run's error (Err) when it stopped while spooling
// a Parquet stream (From: "stdin", a pipe's path) into the inbox folder
// Dir. What was written stays there under the spool's temporary name, but
// a Parquet file cut short cannot be read (its footer is at its end): the
// next run sets it aside as bad input (Salvage: the name + ".bad"), and
// no run applies it.
type UnreadableCut struct {
	Err       error
	From, Dir string
}

func (e *UnreadableCut) Error() string { return e.Err.Error() }
func (e *UnreadableCut) Unwrap() error { return e.Err }

// CutUnreadable is the inbox folder where err says what the stream from
// sent waits cut short and unreadable (an UnreadableCut); "" if it says
// none does.
func CutUnreadable(err error, from string) string {
	var u *UnreadableCut
	if errors.As(err, &u) && u.From == from {
		return u.Dir
	}
	return ""
}
