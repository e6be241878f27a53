package plan

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestJobsArePublishedAfterACommitNotDurable pins a decision: when the
// fsync after CURRENT's rename fails (dataset.AfterCommitError, not
// Durable), the leases are in the snapshot that readers and the next
// writer see, and plan-retries delivers their jobs, to a file or stdout,
// and then reports the failure. Should a crash bring the leases back,
// the jobs' results still merge without loss or double counting (see
// merge's TestResultsOfLeasesACrashUndid); withheld, the jobs would
// leave their hashes leased to no one until the lease ends.
func TestJobsArePublishedAfterACommitNotDurable(t *testing.T) {
	for _, output := range []string{"file", "stdout"} {
		t.Run(output, func(t *testing.T) {
			dir := tenNew(t)
			realCommit := commitTx
			commitTx = func(ctx context.Context, tx *dataset.Tx, o dataset.CommitOptions) (*dataset.Manifest, error) {
				m, err := tx.Commit(ctx, o)
				if err != nil {
					return m, err
				}
				return m, &dataset.AfterCommitError{Dir: dir, Snapshot: m.Snapshot, Durable: false,
					Err: errors.New("fsync of the directory after renaming CURRENT: input/output error")}
			}
			t.Cleanup(func() { commitTx = realCommit })
			o := planOptions(t, dir)
			var stdout bytes.Buffer
			if output == "stdout" {
				o.Output, o.Stdout = "-", &stdout
			}
			st, err := Run(context.Background(), o)
			ac, ok := dataset.AsAfterCommit(err)
			if !ok || ac.Durable || !strings.Contains(err.Error(), "a crash of the machine may yet bring back snapshot 1") {
				t.Fatalf("error %v, want the commit of snapshot 2 reported not durable", err)
			}
			ls, snap := leasesAt(t, dir)
			if !st.Committed || st.Snapshot != 2 || snap != 2 || len(ls) != 10 {
				t.Fatalf("stats committed %v snapshot %d; dataset at %d with %d leases; want snapshot 2 with 10",
					st.Committed, st.Snapshot, snap, len(ls))
			}
			var jobs []schema.Job
			if output == "file" {
				jobs = readJobs(t, o.Output)
			} else {
				r, err := rowio.Open[schema.Job]("-", &stdout)
				if err != nil {
					t.Fatal(err)
				}
				if jobs, err = r.ReadAll(); err != nil {
					t.Fatal(err)
				}
			}
			if len(jobs) != 10 {
				t.Fatalf("%d jobs delivered, want the 10 leased", len(jobs))
			}
			for _, j := range jobs {
				if l := ls[j.InfoHash]; l.LeaseID != j.LeaseID {
					t.Fatalf("job %x has lease %s, the dataset %s", j.InfoHash[:1], j.LeaseID, l.LeaseID)
				}
			}
			if output == "file" {
				if temps, _ := filepath.Glob(filepath.Join(filepath.Dir(o.Output), ".tmp-*")); len(temps) != 0 {
					t.Fatalf("left %v", temps)
				}
			}
		})
	}
}
