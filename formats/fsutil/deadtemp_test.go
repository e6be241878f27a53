package fsutil

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestClaimDeadTemps: the temporary file a kill -9 left beside an output
// is claimed, and nothing else (a live writer's, names not exactly the
// output's). Claimed, it is safe from CreateOutput's sweep and from
// other claimers until Release; Remove removes it.
func TestClaimDeadTemps(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "jobs.parquet")
	debris := killedWriterTemp(t, out)
	for _, n := range []string{
		TempPrefix + "jobs.parquet-2-L0123456789ab", // another output's
		TempPrefix + "jobs.parquet-0123456789ab",    // an unheld fallback name
		"jobs.parquet-L0123456789ab",                // not temporary
	} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func(ds []*DeadTemp) []string {
		var n []string
		for _, d := range ds {
			n = append(n, filepath.Base(d.Name))
		}
		return n
	}
	claimed := ClaimDeadTemps(out)
	if got := names(claimed); !slices.Equal(got, debris) {
		t.Fatalf("claimed %v, want %v", got, debris)
	}
	// A writer at work: its sweep leaves the claimed file alone, and its
	// own is claimed by no one.
	live, err := CreateOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Abort()
	if !slices.Contains(temps(t, dir), debris[0]) {
		t.Fatal("the sweep removed a claimed file")
	}
	if again := ClaimDeadTemps(out); len(again) != 0 {
		t.Fatalf("claimed twice, or a live writer's: %v", names(again))
	}
	claimed[0].Release()
	if again := ClaimDeadTemps(out); !slices.Equal(names(again), debris) {
		t.Fatalf("after Release, claimed %v, want %v", names(again), debris)
	} else {
		again[0].Remove()
	}
	if slices.Contains(temps(t, dir), debris[0]) {
		t.Fatal("Remove left the file")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		if got := ClaimDeadTemps(fifo); got != nil {
			t.Fatalf("claimed %v for a FIFO", names(got))
		}
	}
}

// TestHeldTemps: the temporary files of an output that a live writer
// holds are listed, and nothing else: a killed writer's, another
// output's, one of a writer that has committed or aborted.
func TestHeldTemps(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "jobs.parquet")
	killedWriterTemp(t, out)
	other, err := CreateOutput(filepath.Join(dir, "jobs.parquet-2"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Abort()
	if got := HeldTemps(out); len(got) != 0 {
		t.Fatalf("with no writer of the output at work, HeldTemps = %v", got)
	}
	live, err := CreateOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	got := HeldTemps(out)
	if len(got) != 1 || got[0] != live.Name() {
		t.Fatalf("HeldTemps = %v, want the live writer's %s", got, live.Name())
	}
	if err := live.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := HeldTemps(out); len(got) != 0 {
		t.Fatalf("after the writer committed, HeldTemps = %v", got)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}
