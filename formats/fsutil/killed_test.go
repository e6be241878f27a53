package fsutil

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// envKilledOutput names the output TestKilledOutputHelper opens.
const envKilledOutput = "FSUTIL_TEST_KILLED_OUTPUT"

// TestKilledOutputHelper is the writer killedWriterTemp
// kills: it opens the output, writes a little, and dies of SIGKILL.
func TestKilledOutputHelper(t *testing.T) {
	path := os.Getenv(envKilledOutput)
	if path == "" {
		t.Skip("helper of TestCreateOutputRemovesAKilledWritersTemp")
	}
	f, err := CreateOutput(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// temps lists dir's temporary files.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, TempPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// killedWriterTemp runs TestKilledOutputHelper, a writer of out killed
// with SIGKILL while its temporary file is open, and returns the names in
// out's folder temps lists: the one temporary file it left.
func killedWriterTemp(t *testing.T, out string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledOutputHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), envKilledOutput+"="+out)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper: %v\n%s", err, b)
	}
	debris := temps(t, filepath.Dir(out))
	if len(debris) != 1 {
		t.Fatalf("setup: the killed writer left %v, want one temporary file", debris)
	}
	return debris
}

// TestCreateOutputRemovesAKilledWritersTemp: the next run writing the
// same -o removes the temporary file a kill -9 left next to it, however
// young, and nothing else: a live writer's of the same output, and
// temporary-looking names that are not exactly that output's, stay. The
// debris used to stay until an hour had passed, and for good when the
// next run came sooner.
func TestCreateOutputRemovesAKilledWritersTemp(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.csv")
	debris := killedWriterTemp(t, out)
	others := []string{
		TempPrefix + "out.csv-2-L0123456789ab", // another output's (out.csv-2)
		TempPrefix + "out.csv-L0123456789",     // not the pattern
		TempPrefix + "out.csv-0123456789ab",    // an unheld fallback name: the hourly rule's
		"out.csv-L0123456789ab",                // not temporary
	}
	for _, n := range others {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, err := CreateOutput(out) // a writer at work: its file stays
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(temps(t, dir), debris[0]) {
		t.Fatalf("the killed writer's %s is still there", debris[0])
	}
	if err := WriteOutput(out, []byte("next")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.Name()); err != nil {
		t.Fatalf("a live writer's temporary file was removed: %v", err)
	}
	live.Write([]byte("live"))
	if err := live.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, n := range others {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v, want it left alone", n, err)
		}
	}
	if got, _ := os.ReadFile(out); string(got) != "live" {
		t.Fatalf("out.csv holds %q", got)
	}
}
