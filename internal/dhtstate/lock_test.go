package dhtstate

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestLockUnwritable: a --dht-state folder the run may not write to (its
// mode, a read-only file system) is a usage error naming --dht-state DIR,
// exit 2, as a file there is; it was exit 1 ("open DIR/lock: permission
// denied"). Tests run as root, whom modes do not stop: sysfs refuses even
// root (creating /sys/lock: EACCES; mkdir under /sys: EPERM), so those
// cases run where /sys is a sysfs; a folder of mode 0555 where not root.
func TestLockUnwritable(t *testing.T) {
	var dirs []string
	var fs unix.Statfs_t
	if runtime.GOOS == "linux" && unix.Statfs("/sys", &fs) == nil && fs.Type == unix.SYSFS_MAGIC {
		dirs = append(dirs, "/sys", "/sys/infohash-dhtstate-test")
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, ro, filepath.Join(ro, "new"))
	}
	if len(dirs) == 0 {
		t.Skip("root without a sysfs at /sys: no folder refuses a write")
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			release, err := Lock(dir, "lock", "capture")
			if err == nil {
				release()
				t.Fatalf("locked %s", dir)
			}
			want := "capture: --dht-state " + dir + ": cannot write there: "
			if exitcode.Of(err) != exitcode.Usage || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("err %q (exit %d); want a usage error starting %q", err, exitcode.Of(err), want)
			}
		})
	}
}
