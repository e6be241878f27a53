package app

import (
	"bytes"
	"fmt"
	"io"
)

// printed writes what print renders to w (stdout) in one write and
// returns that write's error, naming what printed it: a report printed
// line by line with fmt.Fprint drops the error of a reader gone ("|
// head"), which then exits 0 instead of 141 as the EXIT STATUS says.
func printed(w io.Writer, what string, print func(io.Writer) error) error {
	var b bytes.Buffer
	if err := print(&b); err != nil {
		return err
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("%s: stdout: %w", what, err)
	}
	return nil
}
