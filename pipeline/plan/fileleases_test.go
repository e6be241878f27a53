package plan

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// leaseJobs returns n jobs leased under id until until.
func leaseJobs(n int, id string, until int64) []schema.Job {
	jobs := make([]schema.Job, n)
	for i := range jobs {
		jobs[i] = schema.Job{InfoHash: hashAt(byte(i%32), uint64(i)), Reason: schema.ReasonNew, LeaseID: id, LeaseUntil: until}
	}
	return jobs
}

// TestFileLeasesRead checks what fileLeases keeps of jobs files: every
// job's lease, each lease ID once in the order met, and nothing of a
// file it cannot read whole.
func TestFileLeasesRead(t *testing.T) {
	dir := t.TempDir()
	a, b, cut := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet"), filepath.Join(dir, "cut.parquet")
	writeJobsFile(t, a, append(leaseJobs(3, "La", 10), leaseJobs(2, "Lb", 20)...))
	writeJobsFile(t, b, leaseJobs(4, "Lb", 30))
	writeJobsFile(t, cut, leaseJobs(5000, "Lcut", 40))
	whole, err := os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		files []string
		ok    []bool
		ids   []string
		rows  int
	}{
		{"one", []string{a}, []bool{true}, []string{"La", "Lb"}, 5},
		{"two", []string{a, b}, []bool{true, true}, []string{"La", "Lb"}, 9},
		{"cut short", []string{a, cut, b}, []bool{true, false, true}, []string{"La", "Lb"}, 9},
		{"missing", []string{filepath.Join(dir, "none")}, []bool{false}, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f fileLeases
			var ok []bool
			for _, p := range tt.files {
				ok = append(ok, f.read(p))
			}
			if !slices.Equal(ok, tt.ok) || !slices.Equal(f.ids, tt.ids) || len(f.rows) != tt.rows {
				t.Fatalf("read %v, ids %v, %d rows; want %v, %v, %d", ok, f.ids, len(f.rows), tt.ok, tt.ids, tt.rows)
			}
			for _, r := range f.rows {
				if id := f.ids[r.id]; (id == "La") != (r.until == 10) {
					t.Errorf("row %x: lease %s until %d", r.hash, id, r.until)
				}
			}
		})
	}
}

// TestReplacedFileMemory checks that the jobs file at -o that a run
// would replace is held compactly for the whole run: at most 60 bytes
// of heap per job, for 32-byte rows in a slice grown by doubling (35
// here; the jobLease rows held as read took 79: 48 bytes and a lease ID
// string each).
func TestReplacedFileMemory(t *testing.T) {
	const n = 50000
	p := filepath.Join(t.TempDir(), "jobs.parquet")
	writeJobsFile(t, p, leaseJobs(n, "L0123456789abcdef", 1e12))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC() // and what the writer left in sync.Pools
	runtime.ReadMemStats(&before)
	r := readReplaced(p, &unpublished{})
	runtime.GC()
	runtime.GC() // and what the reader left in sync.Pools
	runtime.ReadMemStats(&after)
	if got := len(r.leases.rows); got != n {
		t.Fatalf("read %d jobs of %d", got, n)
	}
	runtime.KeepAlive(r)
	perJob := float64(after.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc)) / n
	t.Logf("%.0f bytes of heap per job", perJob)
	if perJob > 60 {
		t.Errorf("the replaced file's %d jobs held %.0f bytes each, want at most 60", n, perJob)
	}
}
