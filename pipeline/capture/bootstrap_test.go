package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestResolveBootstrapErrors: a bootstrap list that resolves to nothing
// is bad input with a message saying what is wrong with the first entry
// (a port 0 entry used to read `bootstrap "127.0.0.1:0": <nil>`).
func TestResolveBootstrapErrors(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:0": `capture: bootstrap "127.0.0.1:0": port 0`,
		"127.0.0.1":   `capture: bootstrap "127.0.0.1": address 127.0.0.1: missing port in address`,
	} {
		_, err := resolveBootstrap([]string{in})
		if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%s: error %v (exit %d), want %q (exit %d)", in, err, exitcode.Of(err), want, exitcode.Usage)
		}
		if err != nil && strings.Contains(err.Error(), "<nil>") {
			t.Errorf("%s: %v", in, err)
		}
	}
	got, err := resolveBootstrap([]string{"127.0.0.1:0", "127.0.0.1:6881"})
	if err != nil || len(got) != 1 || got[0].Port() != 6881 {
		t.Fatalf("mixed list: %v, %v", got, err)
	}
}

// TestStateDirNotADirectory: a --dht-state naming a file is bad input
// before the run; it used to run to the end and then only warn that the
// state was not saved, so every cron pass started cold.
func TestStateDirNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{StateDir: file, Listen: "127.0.0.1:0"}
	_, err := checkOptions(o)
	want := "capture: --dht-state " + file + ": not a directory"
	if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("error %v (exit %d), want %q (exit 2)", err, exitcode.Of(err), want)
	}
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "new")} {
		if _, err := checkOptions(Options{StateDir: dir}); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
	}
}
