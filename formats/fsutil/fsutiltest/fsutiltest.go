// Package fsutiltest helps tests that check what a run left on disk.
package fsutiltest

import (
	"fmt"
	"io/fs"
	"os"
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

// Names lists the names of dir's entries, sorted (os.ReadDir's order).
func Names(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
