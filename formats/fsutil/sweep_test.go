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
