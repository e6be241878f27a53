package rowio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestFinishWritesBeforeClose: after Finish the whole Parquet file is
// on disk under its temporary name (readable, every row in it), nothing
// is at the output's path, and rows are refused; Close renames it into
// place, and Abort instead leaves nothing.
func TestFinishWritesBeforeClose(t *testing.T) {
	for _, tt := range []struct {
		name  string
		close bool // Close, or Abort, after Finish
	}{
		{"closed", true},
		{"aborted", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "jobs.parquet")
			w, err := Create[schema.Job](out, nil)
			if err != nil {
				t.Fatal(err)
			}
			jobs := []schema.Job{{LeaseID: "a"}, {LeaseID: "b"}, {LeaseID: "c"}}
			if err := w.Write(jobs); err != nil {
				t.Fatal(err)
			}
			if w.InPlace() {
				t.Fatal("a regular file counted as written in place")
			}
			if err := w.Finish(); err != nil {
				t.Fatal(err)
			}
			if err := w.Write(jobs); err == nil || !strings.Contains(err.Error(), "after Finish") {
				t.Fatalf("rows after Finish: %v", err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("the output is at its path before Close (%v)", err)
			}
			temps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
			if len(temps) != 1 {
				t.Fatalf("temporary files %v, want one", temps)
			}
			if got, err := readJobs(temps[0]); err != nil || len(got) != len(jobs) {
				t.Fatalf("the finished temporary file holds %d rows (%v), want %d", len(got), err, len(jobs))
			}
			if !tt.close {
				w.Abort()
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Fatalf("Abort left %v", ents)
				}
				return
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := readJobs(out); err != nil || len(got) != len(jobs) {
				t.Fatalf("the output holds %d rows (%v), want %d", len(got), err, len(jobs))
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Fatalf("left %v", ents)
			}
		})
	}
}

// readJobs reads every job in the Parquet file at path.
func readJobs(path string) ([]schema.Job, error) {
	r, err := Open[schema.Job](path, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadAll()
}
