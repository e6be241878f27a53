package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// policyFile is the retry policy's file in a dataset directory
// (schedule.FileName). It is no part of a snapshot: "policy set" rewrites
// it under the writer lock, and each commit of a stage that schedules
// records the policy it ran under in its manifest (Tx.SetPolicy).
const policyFile = "policy.json"

// maxPolicyRead bounds what a transaction reads of the policy file: one
// byte more than schedule takes, so that it can tell a file too large.
const maxPolicyRead = 1<<20 + 1

// policyRead is the policy file as read at one moment.
type policyRead struct {
	raw []byte // nil: no file (an empty file reads as empty, not nil)
	err error
}

func readPolicy(dir string) policyRead {
	path := filepath.Join(dir, policyFile)
	// A FIFO there would block the read for good (a link is followed).
	f, err := openPolicy(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return policyRead{}
	}
	if err != nil {
		return policyRead{err: err}
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxPolicyRead))
	if err != nil {
		return policyRead{err: fmt.Errorf("%s: %w", path, err)}
	}
	return policyRead{raw: raw} // io.ReadAll's slice is never nil
}

// PolicyFile returns the path of DIR/policy.json and its bytes as Begin
// read them (nil if there was no file; at most one byte more than 1 MiB).
// A stage that schedules reads its policy here at every try (and records
// it with SetPolicy): Commit then refuses, as a conflict, a try whose
// policy a "policy set" replaced meanwhile, and the next try runs under
// the new one.
func (tx *Tx) PolicyFile() (path string, raw []byte, err error) {
	return filepath.Join(tx.d.Dir, policyFile), tx.policy.raw, tx.policy.err
}

// checkPolicy, under the writer lock, returns ErrConflict if the
// transaction records a policy (SetPolicy) and DIR/policy.json no longer
// holds what Begin read: a snapshot must not record, nor be built under,
// a policy older than the one in force (policy set takes the lock too).
func (tx *Tx) checkPolicy() error {
	if !tx.usesPolicy {
		return nil
	}
	now := readPolicy(tx.d.Dir)
	if now.err != nil {
		return fmt.Errorf("dataset: %w", now.err)
	}
	if tx.policy.err == nil && (now.raw == nil) == (tx.policy.raw == nil) && bytes.Equal(now.raw, tx.policy.raw) {
		return nil
	}
	return fmt.Errorf("dataset: %s: %s changed since the transaction began (policy set): %w",
		tx.d.Dir, policyFile, ErrConflict)
}
