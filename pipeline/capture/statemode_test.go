package capture

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStateFileMode: dht-state.json, kept under the dataset by default,
// gets mode 0666 less the umask like every other file there.
func TestStateFileMode(t *testing.T) {
	old := unix.Umask(0o002)
	defer unix.Umask(old)
	dir := filepath.Join(t.TempDir(), "dht-state")
	if err := saveState(dir, state{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, stateFileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o664 {
		t.Fatalf("mode %v, want -rw-rw-r--", fi.Mode().Perm())
	}
}
