package datasettest

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Digests describes the current snapshot of the dataset at dir by the
// bytes of its files, one line per file: table, partition, rows and the
// SHA-256 of the file (a Bloom filter as "bloom"), tables and partitions
// sorted, a partition's files in the manifest's order. File names are
// left out: they are random. A golden copy of it pins what a stage wrote
// byte for byte.
func Digests(t testing.TB, dir string) string {
	t.Helper()
	d, m := OpenCurrent(t, dir)
	defer d.Close()
	var b strings.Builder
	sum := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(data))
	}
	names := make([]string, 0, len(m.Tables))
	for name := range m.Tables {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		tb := m.Tables[name]
		for _, key := range tb.PartitionKeys() {
			for _, f := range tb.Partitions[key] {
				fmt.Fprintf(&b, "%s %q rows=%d %s\n", name, key, f.Rows, sum(filepath.Join(tb.PartitionDir(key), f.Name)))
			}
			if f, ok := tb.Blooms[key]; ok {
				fmt.Fprintf(&b, "%s %q bloom %s\n", name, key, sum(tb.BloomPath(f)))
			}
		}
	}
	return b.String()
}
