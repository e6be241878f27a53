package fsutil

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepTemps: only temporary files of the named output, untouched
// for an hour, go; a fresh one (a writer at work) and others stay.
func TestSweepTemps(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]bool{ // name → swept
		TempPrefix + "ex.csv-aaaa":    true,
		TempPrefix + "ex.csv-fresh":   false,
		TempPrefix + "ex.csv.gz-bbbb": false,
		TempPrefix + "other-cccc":     false,
		"ex.csv":                      false,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if name != TempPrefix+"ex.csv-fresh" {
			os.Chtimes(p, old, old)
		}
	}
	SweepTemps(dir, "ex.csv-")
	for name, swept := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != swept {
			t.Errorf("%s: gone %v, want %v", name, gone, swept)
		}
	}
	SweepTemps(dir, "")
	if _, err := os.Stat(filepath.Join(dir, TempPrefix+"other-cccc")); !os.IsNotExist(err) {
		t.Error("a sweep of every temporary file left an old one")
	}
	if _, err := os.Stat(filepath.Join(dir, TempPrefix+"ex.csv-fresh")); err != nil {
		t.Error("a sweep took a fresh temporary file")
	}
}

// TestCreateOutputSweepsInWorkingDir: an output named without a
// directory ("-o out.csv") sweeps a killed earlier run's temporary file
// in the working directory, as one named with a directory does.
func TestCreateOutputSweepsInWorkingDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	stale := TempPrefix + "out.csv-aaaa"
	if err := os.WriteFile(stale, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutput("out.csv", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, stale)); !os.IsNotExist(err) {
		t.Fatalf("the stale temporary file of out.csv is still there: %v", err)
	}
}

// TestSweepSparesALiveWriter: a writer that has not written for over an
// hour (a fetch that finds little) keeps its temporary file from a sweep,
// whichever way it was created, and commits it whole; once it has gone,
// an equally old file is swept.
func TestSweepSparesALiveWriter(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	for name, create := range map[string]func(string) (*File, error){
		"Create":       Create,
		"CreateOutput": CreateOutput,
	} {
		t.Run(name, func(t *testing.T) {
			final := filepath.Join(dir, name+".parquet")
			f, err := create(final)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte("rows so far")); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(f.Name(), old, old)
			SweepTemps(dir, "")
			if _, err := os.Stat(f.Name()); err != nil {
				t.Fatalf("a live writer's temporary file was swept: %v", err)
			}
			if err := f.Commit(); err != nil {
				t.Fatalf("commit after a sweep: %v", err)
			}
			if got, err := os.ReadFile(final); err != nil || string(got) != "rows so far" {
				t.Fatalf("committed %q, %v", got, err)
			}
		})
	}
	dead := filepath.Join(dir, TempPrefix+"dead.parquet-0000")
	if err := os.WriteFile(dead, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(dead, old, old)
	SweepTemps(dir, "")
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatalf("a dead writer's old temporary file stayed: %v", err)
	}
}
