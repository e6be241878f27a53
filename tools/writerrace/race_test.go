package writerrace

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestSameInputAtOnce: three dedups of one input into a new dataset at
// once (each waiting for the lock) apply it once: one commits, the others
// find it in the ledger when they re-apply, none says it created an
// empty dataset, and the dataset equals one dedup's (state, ledger,
// totals).
func TestSameInputAtOnce(t *testing.T) {
	dir := t.TempDir()
	in := observations(t, dir, 1, 0, 20_000, 0)
	serial, racing := filepath.Join(dir, "serial"), filepath.Join(dir, "racing")
	must(t, "dedup", "--data", serial, "--now", now, in)
	args := []string{"dedup", "--data", racing, "--now", now, "--lock-wait", "1m", in}
	rs := atOnce(t, args, args, args)
	commits := 0
	for i, r := range rs {
		if r.code != 0 {
			t.Fatalf("dedup %d: exit %d\n%s", i, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "commits=1") {
			commits++
		}
		if strings.Contains(r.stderr, "empty dataset") {
			t.Errorf("dedup %d says it created an empty dataset, which another holds a commit of:\n%s", i, r.stderr)
		}
	}
	if commits != 1 {
		t.Errorf("%d of the dedups committed, want 1", commits)
	}
	sameTables(t, racing, serial)
}

// TestDedupAndMergeAtOnce: a dedup and a merge at once on one dataset
// (one re-applies on the other's snapshot) leave what the two leave run
// one after the other in the order they committed: state, leases,
// peers, torrents, ledger, totals.
func TestDedupAndMergeAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: several seconds of processes")
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	must(t, "dedup", "--data", base, "--now", now, observations(t, dir, 2, 0, 20_000, 0))
	jobs, results := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	must(t, "plan-retries", "--data", base, "--now", now, "--limit", "300", "-o", jobs)
	must(t, "fetch", "--bootstrap", "", "--now", now, jobs, "-o", results)
	more := observations(t, dir, 2, 1, 20_000, 5_000) // repeats hashes of the first input
	racing, serial := filepath.Join(dir, "racing"), filepath.Join(dir, "serial")
	copyDir(t, base, racing)
	copyDir(t, base, serial)
	merge := func(data string) []string {
		return []string{"merge", "--data", data, "--now", now, "--lock-wait", "1m", results}
	}
	dedup := func(data string) []string {
		return []string{"dedup", "--data", data, "--now", now, "--lock-wait", "1m", more}
	}
	rs := atOnce(t, merge(racing), dedup(racing))
	for i, r := range rs {
		if r.code != 0 || r.snapshot() < 0 {
			t.Fatalf("run %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	order := [][]string{merge(serial), dedup(serial)}
	if rs[1].snapshot() < rs[0].snapshot() {
		order[0], order[1] = order[1], order[0]
	}
	for _, args := range order {
		must(t, args...)
	}
	sameTables(t, racing, serial)
}

// TestPlansAtOnce: plan-retries run at once lease no hash twice, and
// every lease the dataset holds is a job of a published jobs file with
// that lease: to files of their own, each run's jobs are its leases; to
// one file, one run delivers and the others are refused (exit 2) with
// nothing leased.
func TestPlansAtOnce(t *testing.T) {
	tests := []struct {
		name    string
		oneFile bool
	}{
		{"files of their own", false},
		{"one file", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			must(t, "dedup", "--data", data, "--now", now, observations(t, dir, 3, 0, 20_000, 0))
			var runs [][]string
			var files []string
			for i := range 3 {
				f := filepath.Join(dir, fmt.Sprintf("jobs-%d.parquet", i))
				if tt.oneFile {
					f = filepath.Join(dir, "jobs.parquet")
				}
				files = append(files, f)
				runs = append(runs, []string{"plan-retries", "--data", data, "--now", now, "--limit", "200", "--lock-wait", "1m", "-o", f})
			}
			rs := atOnce(t, runs...)
			delivered := map[string]bool{}
			for i, r := range rs {
				switch {
				case r.code == 0:
					delivered[files[i]] = true
				case tt.oneFile && r.code == 2 && strings.Contains(r.stderr, "jobs.parquet"):
				default:
					t.Fatalf("plan-retries %d: exit %d\n%s", i, r.code, r.stderr)
				}
			}
			if want := map[bool]int{false: 3, true: 1}[tt.oneFile]; len(delivered) != want {
				t.Fatalf("%d runs delivered a jobs file, want %d", len(delivered), want)
			}
			jobs := map[schema.Hash]string{}
			for f := range delivered {
				for _, j := range readJobs(t, f) {
					if _, dup := jobs[j.InfoHash]; dup {
						t.Fatalf("hash %x is a job of two runs", j.InfoHash)
					}
					jobs[j.InfoHash] = j.LeaseID
				}
			}
			leases := leaseIDs(t, data)
			if len(leases) != 200*len(delivered) || len(jobs) != len(leases) {
				t.Fatalf("%d leases, %d jobs in the files; want %d of each", len(leases), len(jobs), 200*len(delivered))
			}
			for h, id := range leases {
				if jobs[h] != id {
					t.Errorf("hash %x is leased (%s) but no published file holds its job under that lease (%q)", h, id, jobs[h])
				}
			}
		})
	}
}

// readJobs reads the jobs file at path.
func readJobs(t *testing.T, path string) []schema.Job {
	t.Helper()
	r, err := rowio.Open[schema.Job](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []schema.Job
	buf := make([]schema.Job, 256)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// leaseIDs returns the dataset's leases, hash to lease_id, as export
// writes them.
func leaseIDs(t *testing.T, data string) map[schema.Hash]string {
	t.Helper()
	b, r := infohash(t, nil, "export", "--data", data, "--table", "leases", "--format", "csv", "-o", "-")
	if r.code != 0 {
		t.Fatalf("export --table leases: exit %d\n%s", r.code, r.stderr)
	}
	out := map[schema.Hash]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(l, ",")
		var h schema.Hash
		if b, err := hex.DecodeString(f[0]); err != nil || len(b) != len(h) {
			t.Fatalf("leases line %q: %v", l, err)
		} else {
			copy(h[:], b)
		}
		out[h] = f[1]
	}
	return out
}
