package dedup

// Which inputs a run applies, and in which commits: re-runs, inputs
// skipped by content, batches bounded by BatchHashes.

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

func TestRerunIsNoop(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	in := writeObs(t, dir, genObs(3, 5000, 1000))
	if _, err := run(t, data, nil, in); err != nil {
		t.Fatal(err)
	}
	before := readState(t, data)
	st, err := run(t, data, nil, in, in)
	if err != nil {
		t.Fatal(err)
	}
	if st.InputsSkipped != 2 || st.Observations != 0 {
		t.Fatalf("rerun stats %+v", st)
	}
	after := readState(t, data)
	for h, s := range before {
		if !reflect.DeepEqual(after[h], s) {
			t.Fatalf("rerun changed %x", h)
		}
	}
}

// TestInputsSkippedByContent covers the first aggregation's bet (inputs
// are read while checksummed, assuming none is to be skipped): whichever
// way it goes, what lands is each distinct content once.
func TestInputsSkippedByContent(t *testing.T) {
	a, b := genObs(11, 40000, 9000), genObs(12, 30000, 7000)
	cases := []struct {
		name    string
		before  []string // inputs applied by an earlier run
		now     []string
		skipped int
		want    [][]schema.Observation
	}{
		{"all new", nil, []string{"a", "b"}, 0, [][]schema.Observation{a, b}},
		{"one content under two names", nil, []string{"a", "a-copy"}, 1, [][]schema.Observation{a}},
		{"applied then new", []string{"a"}, []string{"a", "b"}, 1, [][]schema.Observation{a, b}},
		{"new then applied", []string{"a"}, []string{"b", "a-copy"}, 1, [][]schema.Observation{a, b}},
		{"only applied", []string{"a", "b"}, []string{"b", "a"}, 2, [][]schema.Observation{a, b}},
	}
	for _, c := range cases {
		for _, early := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/early stop %v", c.name, early), func(t *testing.T) {
				defer func(was bool) { earlyStop = was }(earlyStop)
				earlyStop = early
				testSkips(t, c.before, c.now, c.skipped, c.want, a, b)
			})
		}
	}
}

// testSkips applies the inputs named before in one run, then those named
// now (a, b, or a-copy: a's content under another name) in another.
func testSkips(t *testing.T, before, now []string, skipped int, want [][]schema.Observation, a, b []schema.Observation) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	files := map[string]string{"a": writeObs(t, dir, a), "b": writeObs(t, dir, b)}
	raw, err := os.ReadFile(files["a"])
	if err != nil {
		t.Fatal(err)
	}
	files["a-copy"] = filepath.Join(dir, "copy-of-a.parquet")
	if err := os.WriteFile(files["a-copy"], raw, 0o644); err != nil {
		t.Fatal(err)
	}
	paths := func(names []string) []string {
		var out []string
		for _, n := range names {
			out = append(out, files[n])
		}
		return out
	}
	if len(before) > 0 {
		if _, err := run(t, data, nil, paths(before)...); err != nil {
			t.Fatal(err)
		}
	}
	st, err := run(t, data, nil, paths(now)...)
	if err != nil {
		t.Fatal(err)
	}
	if st.InputsSkipped != skipped {
		t.Fatalf("skipped %d inputs, want %d", st.InputsSkipped, skipped)
	}
	compare(t, readState(t, data), truth(want...))
}

// TestBatchesCommitSeparately: inputs holding more distinct hashes than
// BatchHashes are applied in several commits of whole inputs, and the
// state equals one commit's; a re-run changes nothing.
func TestBatchesCommitSeparately(t *testing.T) {
	cases := []struct {
		name        string
		batchHashes int64
		commits     int
	}{
		{"no bound", 0, 1},
		{"bound above the total", 1 << 30, 1},
		{"every input its own commit", 1, 3},
		{"two inputs then one", 9000, 2}, // the first input alone holds ~6k hashes
	}
	obs := [][]schema.Observation{genObs(21, 20000, 6000), genObs(22, 20000, 6000), genObs(23, 20000, 6000)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			var ins []string
			for _, o := range obs {
				ins = append(ins, writeObs(t, dir, o))
			}
			opt := func(o *Options) { o.BatchHashes = c.batchHashes }
			st, err := run(t, data, opt, ins...)
			if err != nil {
				t.Fatal(err)
			}
			if st.Commits != c.commits || st.Observations != 60000 {
				t.Fatalf("%d commits, %d observations; want %d, 60000", st.Commits, st.Observations, c.commits)
			}
			compare(t, readState(t, data), truth(obs...))
			again, err := run(t, data, opt, ins...)
			if err != nil {
				t.Fatal(err)
			}
			if again.InputsSkipped != 3 || again.Commits != 0 {
				t.Fatalf("re-run: %+v", again)
			}
		})
	}
}

// TestRerunSkipsInputsOfTheLedgerTable: inputs applied by several earlier
// commits (their entries in several ledger files) are skipped, the others
// applied.
func TestRerunSkipsInputsOfTheLedgerTable(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	var lists []string
	for i := range 300 {
		p := filepath.Join(dir, fmt.Sprintf("list-%d.txt", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("%040x\n", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		lists = append(lists, p)
	}
	if _, err := run(t, data, nil, lists[:296]...); err != nil {
		t.Fatal(err)
	}
	for _, l := range lists[296:] { // three commits more: smaller files after the big one
		if _, err := run(t, data, nil, l); err != nil {
			t.Fatal(err)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(data, "ledger", "current", "*.parquet")); len(files) < 2 {
		t.Fatalf("the ledger is in %d files: this test wants several", len(files))
	}
	fresh := filepath.Join(dir, "fresh.txt")
	if err := os.WriteFile(fresh, []byte(fmt.Sprintf("%040x\n", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := run(t, data, nil, lists[0], lists[150], fresh, lists[299])
	if err != nil {
		t.Fatal(err)
	}
	if st.InputsSkipped != 3 || st.Observations != 1 {
		t.Fatalf("re-run stats %+v", st)
	}
	s := readState(t, data)
	if len(s) != 301 {
		t.Fatalf("%d hashes, want 301", len(s))
	}
	for h, v := range s {
		if v.SeenCount != 1 {
			t.Fatalf("%x seen %d times", h, v.SeenCount)
		}
	}
}

// TestBadInputAfterABatch: with inputs in several commits, a Parquet
// input that is truncated or of another schema is found before the first
// commit (exit 2, nothing committed); a bad text list, found only when it
// is read after a commit, makes the run partial (exit 3) with the inputs
// before it applied.
func TestBadInputAfterABatch(t *testing.T) {
	dir := t.TempDir()
	good := writeObs(t, dir, genObs(31, 5000, 2000))
	whole, err := os.ReadFile(writeObs(t, dir, genObs(32, 5000, 2000)))
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.parquet")
	if err := os.WriteFile(truncated, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	badList := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(badList, []byte("0123456789abcdef0123456789abcdef01234567\nnot-a-hash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		inputs   []string
		code     int
		commits  int
		snapshot bool // a snapshot holds the good input
	}{
		{"truncated Parquet", []string{good, truncated}, exitcode.Usage, 0, false},
		{"bad list after a commit", []string{good, badList}, exitcode.Partial, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			st, err := run(t, data, func(o *Options) { o.BatchHashes = 1 }, c.inputs...)
			if got := exitcode.Of(err); got != c.code {
				t.Fatalf("exit %d (%v), want %d", got, err, c.code)
			}
			if !strings.Contains(err.Error(), filepath.Base(c.inputs[1])) {
				t.Fatalf("error %q does not name the input", err)
			}
			if st.Commits != c.commits {
				t.Fatalf("%d commits, want %d", st.Commits, c.commits)
			}
			s := readState(t, data)
			if c.snapshot != (len(s) > 0) {
				t.Fatalf("state holds %d hashes after %q", len(s), err)
			}
			if c.snapshot {
				compare(t, s, truth(genObs(31, 5000, 2000)))
			}
		})
	}
}

// TestDamagedBloomIsAnError: a Bloom filter whose content differs from
// what the manifest says stops the run (nothing committed); read as it
// is, a filter saying "surely new" of known hashes added them again.
func TestDamagedBloomIsAnError(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	in := writeObs(t, dir, genObs(61, 3000, 1000))
	if _, err := run(t, data, nil, in); err != nil {
		t.Fatal(err)
	}
	before := len(readState(t, data))
	blooms, _ := filepath.Glob(filepath.Join(data, "state", "current", "_bloom", "*"))
	if len(blooms) == 0 {
		t.Fatal("no Bloom files")
	}
	for _, p := range blooms {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		os.Remove(p) // a hard link shared with older snapshots: write a new file
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again := writeObs(t, dir, genObs(61, 3000, 1000)[:500])
	st, err := run(t, data, nil, again)
	if err == nil || !strings.Contains(err.Error(), "bloom") || !strings.Contains(err.Error(), "CRC-32C") {
		t.Fatalf("dedup over damaged Bloom filters: %v (%+v)", err, st)
	}
	if s := readState(t, data); len(s) != before {
		t.Fatalf("state has %d hashes, want %d", len(s), before)
	}
}

// TestInputsSkippedWhenAnotherAppliesThem: an input another dedup applies
// while this run works (its commit then conflicts, and the next try finds
// the input in the ledger) counts as already applied, as if the run had
// found it there at the start.
func TestInputsSkippedWhenAnotherAppliesThem(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	in := writeObs(t, dir, genObs(7, 2000, 500))
	tries := 0
	st, err := run(t, data, func(o *Options) {
		o.BindPolicy = func(o *Options, tx *dataset.Tx) error {
			if tries++; tries == 1 { // another run applies the input meanwhile
				if _, err := run(t, data, nil, in); err != nil {
					return err
				}
			}
			return nil
		}
	}, in)
	if err != nil {
		t.Fatal(err)
	}
	if tries != 2 || st.Commits != 0 || st.InputsSkipped != 1 {
		t.Fatalf("%d tries, %d commits, %d inputs already applied; want 2, 0, 1", tries, st.Commits, st.InputsSkipped)
	}
}
