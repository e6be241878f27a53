package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestClaimLeftoverSwapped: a FIFO, directory, link or (as root) device
// put at a leftover spool's path after the run listed it as one
// (IsSpool) is refused, not claimed, and left as it is; nothing blocks.
// Before, os.Open blocked for good on the FIFO, and the link's target
// was claimed (and then applied, and removed).
func TestClaimLeftoverSwapped(t *testing.T) {
	for _, k := range swapKinds {
		t.Run(k.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "inbox")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, NewName(".spool"))
			if err := os.WriteFile(p, []byte("00112233445566778899aabbccddeeff00112233\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ents, err := os.ReadDir(dir)
			if err != nil || len(ents) != 1 || !IsSpool(ents[0], ".spool") {
				t.Fatalf("listed %v, %v; want the spool", ents, err)
			}
			aside := filepath.Join(filepath.Dir(dir), "aside")
			if err := k.make(aside, p); err != nil {
				t.Skipf("cannot make %s here: %v", k.kind, err)
			}
			made, _ := os.Lstat(aside)
			hook, _ := swapper(t, p, aside)
			hook(p)
			var ok bool
			err = fsutiltest.Unblocked(t, p, func() (err error) {
				var release func()
				release, ok, err = ClaimLeftover(p)
				if ok {
					release()
				}
				return err
			})
			var nr *fsutil.NotRegularError
			if ok || !errors.As(err, &nr) || nr.Kind != k.kind {
				t.Fatalf("claimed %v, err %v; want %s refused as %s", ok, err, p, k.kind)
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != made.Mode().Type() {
				t.Fatalf("%s is no longer %s: %v", p, k.kind, err)
			}
		})
	}
}

// TestSalvageLeavesNotRegular: a FIFO, directory, link or (as root)
// device under the temporary name of a killed run's spool is no spool:
// Salvage leaves it as it is, and goes on. Before, it failed on the
// FIFO (seek: illegal seek), which stopped every run of the stage, and
// removed the link and the device as an empty killed run's spool.
func TestSalvageLeavesNotRegular(t *testing.T) {
	for _, k := range swapKinds {
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, fsutil.TempPrefix+"part-0011223344556677.spool-L0123456789ab")
			if err := k.make(p, p); err != nil {
				t.Skipf("cannot make %s here: %v", k.kind, err)
			}
			made, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			err = fsutiltest.Unblocked(t, p, func() (err error) { kept, err = Salvage(dir, ".spool"); return err })
			if err != nil || len(kept) != 0 {
				t.Fatalf("Salvage set aside %v, err %v; want nothing, no error", kept, err)
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != made.Mode().Type() {
				t.Fatalf("%s is no longer %s: %v", p, k.kind, err)
			}
		})
	}
}
