package statecol

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// BenchmarkOpenFooterCheck: opening (and closing) every file of a state
// of 256 partitions, a file each, without and with the footer checksum
// check (the cost plan-retries, status and export pay once per file), and
// the check alone (open, FooterSum.Check, close).
func BenchmarkOpenFooterCheck(b *testing.B) {
	dir := b.TempDir()
	const files = 256
	paths := make([]string, files)
	sums := make([]rowio.FooterSum, files)
	for i := range files {
		rows := randomStates(2000, uint64(i), false)
		slices.SortFunc(rows, func(x, y schema.State) int { return bytes.Compare(x.InfoHash[:], y.InfoHash[:]) })
		var buf bytes.Buffer
		if err := WriteState(&buf, rows); err != nil {
			b.Fatal(err)
		}
		paths[i] = filepath.Join(dir, fmt.Sprintf("%02x.parquet", i))
		if err := os.WriteFile(paths[i], buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		s, err := rowio.SumFooter(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			b.Fatal(err)
		}
		sums[i] = s
	}
	for _, bc := range []struct {
		name  string
		check bool
	}{{"unchecked", false}, {"checked", true}, {"check only", true}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				for i, p := range paths {
					if bc.name == "check only" {
						f, err := os.Open(p)
						if err != nil {
							b.Fatal(err)
						}
						st, _ := f.Stat()
						if _, err := sums[i].Check(f, st.Size(), p); err != nil {
							b.Fatal(err)
						}
						f.Close()
						continue
					}
					df := rowio.UnrecordedFile(p)
					if bc.check {
						df = rowio.RecordedFile(p, sums[i])
					}
					f, err := Open(df)
					if err != nil {
						b.Fatal(err)
					}
					f.Close()
				}
			}
		})
	}
}
