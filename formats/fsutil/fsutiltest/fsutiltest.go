// Package fsutiltest helps tests that check what a run left on disk.
package fsutiltest

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
)

// Tree lists every path under dir with its mode, size and mtime: compare
// two listings to check that a reader left a folder as it found it.
func Tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
