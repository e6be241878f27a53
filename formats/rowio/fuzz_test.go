package rowio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// FuzzRowioParquet opens whole files as the row type the first byte picks
// (jobs, results with nested lists, observations) and reads every row:
// the outcome is rows or one line of error, never a panic or a hang.
func FuzzRowioParquet(f *testing.F) {
	FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	jobs := []schema.Job{{InfoHash: schema.Hash{1}, HashType: 1, Attempt: 2, Reason: "new", LeaseID: "L",
		LeaseUntil: 1700000000000, Peers: []string{"127.0.0.1:1"}, AvoidPeers: []string{"127.0.0.1:2"}}}
	seeds := [][]byte{
		append([]byte{0}, writeFile(f, jobs)...),
		append([]byte{1}, writeFile(f, sampleResults())...),
		append([]byte{2}, writeFile(f, sampleObs(50))...),
	}
	if duck, err := os.ReadFile("testdata/duckdb/nulls.parquet"); err == nil { // padded level runs
		seeds = append(seeds, append([]byte{2}, duck...))
	}
	for _, s := range seeds {
		f.Add(s)
		f.Add(s[:len(s)/2])
		c := bytes.Clone(s)
		c[len(c)-30] ^= 0x10
		f.Add(c)
	}
	p := filepath.Join(f.TempDir(), "in.parquet")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		if err := os.WriteFile(p, data[1:], 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		switch data[0] % 3 {
		case 0:
			err = readAllFile[schema.Job](p)
		case 1:
			err = readAllFile[schema.Result](p)
		default:
			err = readAllFile[schema.Observation](p)
		}
		if err != nil && (strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), p+": ")) {
			t.Fatalf("error not one line naming the file: %q", err)
		}
	})
}

func readAllFile[T any](p string) error {
	r, err := Open[T](p, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	buf := make([]T, 64)
	for {
		if _, err := r.Read(buf); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
