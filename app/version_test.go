package app

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestVersion: --version prints one line naming the Go toolchain, exit 0.
func TestVersion(t *testing.T) {
	stdout, stderr, code := runMain(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "infohash version ") || !strings.Contains(stdout, "go1.") || strings.Count(stdout, "\n") != 1 || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestMakeBuildStampsVersion: make build stamps the version it is given
// (git describe by default) into the binary, which --version prints; it
// printed "(devel)" when the toolchain recorded no commit
// (GOFLAGS=-buildvcs=false). Without a version (no git checkout) the
// build has no -X and the binary falls back to the toolchain's record.
func TestMakeBuildStampsVersion(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	symbol := "-X " + reflect.TypeOf(durationValue{}).PkgPath() + ".buildVersion="
	dry, err := exec.Command("make", "-s", "-n", "-C", "..", "build", "BUILD_VERSION=").CombinedOutput()
	if err != nil || strings.Contains(string(dry), "-X ") || !strings.Contains(string(dry), "go build") {
		t.Fatalf("make -n build BUILD_VERSION=: %v\n%s", err, dry)
	}
	bin := filepath.Join(t.TempDir(), "infohash")
	const v = "v9.9.9-3-gabcdef0-dirty"
	out, err := exec.Command("make", "-C", "..", "build", "BIN="+bin, "BUILD_VERSION="+v).CombinedOutput()
	if err != nil || !strings.Contains(string(out), symbol+v) {
		t.Fatalf("make build: %v, want a build with %s%s:\n%s", err, symbol, v, out)
	}
	got, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(got), "infohash version "+v+" go1.") {
		t.Fatalf("--version: %v, %q; want %q first", err, got, v)
	}
}
