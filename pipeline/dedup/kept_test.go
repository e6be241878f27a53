package dedup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestStdinKeptWhenTheRunFails: a run that fails after stdin is spooled
// whole (its commit finds the dataset locked; a state file it must
// rewrite is damaged) keeps the spool in the inbox, and its error says
// so, and where; the next dedup applies it.
func TestStdinKeptWhenTheRunFails(t *testing.T) {
	obs := genObs(44, 400, 100)
	for _, tt := range []struct {
		name  string
		spoil func(t *testing.T, data string) (undo func())
		code  int
	}{
		{"the commit finds the dataset locked", func(t *testing.T, data string) func() {
			l, err := dataset.LockWriter(context.Background(), data, 0)
			if err != nil {
				t.Fatal(err)
			}
			return l.Release
		}, exitcode.Locked},
		{"a state file is damaged", func(t *testing.T, data string) func() {
			files, _ := filepath.Glob(filepath.Join(data, "state", "current", "prefix=*", "*.parquet"))
			if len(files) == 0 {
				t.Fatal("setup: no state files")
			}
			var undo []func()
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte("PAR1 not a Parquet file PAR1"), 0o644); err != nil {
					t.Fatal(err)
				}
				undo = append(undo, func() { os.WriteFile(f, b, 0o644) })
			}
			return func() {
				for _, u := range undo {
					u()
				}
			}
		}, exitcode.Error},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			first := writeObs(t, t.TempDir(), obs[:200])
			if _, err := run(t, data, nil, first); err != nil {
				t.Fatal(err)
			}
			undo := tt.spoil(t, data)
			_, err := run(t, data, func(o *Options) { o.Stdin = bytes.NewReader(captureStream(t, obs[200:], 50)) }, "-")
			undo()
			if err == nil || exitcode.Of(err) != tt.code {
				t.Fatalf("err = %v, want exit %d", err, tt.code)
			}
			ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
			if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".spool") {
				t.Fatalf("inbox holds %v, want stdin's spool", ents)
			}
			spool := filepath.Join(data, "inbox", ents[0].Name())
			if want := "(what stdin sent is kept as " + spool + "; the next dedup applies it)"; !strings.HasSuffix(err.Error(), want) {
				t.Fatalf("error %q\ndoes not end with %q", err, want)
			}
			if _, err := run(t, data, nil, first); err != nil {
				t.Fatalf("the next dedup: %v", err)
			}
			if n := len(readState(t, data)); n != len(distinctHashes(obs)) {
				t.Fatalf("state holds %d hashes, want %d: stdin's were not applied", n, len(distinctHashes(obs)))
			}
			if ents, _ := os.ReadDir(filepath.Join(data, "inbox")); len(ents) != 0 {
				t.Fatalf("inbox holds %v after the next dedup", ents)
			}
		})
	}
}

// distinctHashes is the set of obs's hashes.
func distinctHashes(obs []schema.Observation) map[schema.Hash]bool {
	m := map[schema.Hash]bool{}
	for _, o := range obs {
		m[o.InfoHash] = true
	}
	return m
}
