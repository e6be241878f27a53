package app

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestReadOnlyDataset: on a dataset this user cannot write (a read-only
// bind mount: EROFS; folders without write permission: EACCES, run as
// nobody when root), plan-retries' dry run works as status and policy
// show do, and each writer (policy set too) stops before it does anything
// with one line saying that the dataset is not writable, and where
// (exit 1); nothing changes.
func TestReadOnlyDataset(t *testing.T) {
	bin := infohashBinary(t)
	// A folder every user may enter: nobody runs the binary and reads the
	// dataset from it.
	root, err := os.MkdirTemp("", "infohash-ro-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(root)
	})
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(root, "infohash")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(root, "hashes.txt")
	if err := os.WriteFile(list, []byte(strings.Repeat("ab", 20)+"\n"+strings.Repeat("cd", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, errno string
		prepare     func(t *testing.T, data string)
		wrap        func(data string, args []string) *exec.Cmd
	}{
		{"read-only mount", "read-only file system", func(t *testing.T, data string) {
			// unshare may work where mount does not (no CAP_SYS_ADMIN in a
			// container): try the very mount the runs below make.
			if out, err := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
				`mount --bind "$0" "$0" && mount -o remount,bind,ro "$0"`, data).CombinedOutput(); err != nil {
				t.Skipf("no read-only bind mount in a private mount namespace (needs root): %v: %s", err, out)
			}
		}, func(data string, args []string) *exec.Cmd {
			return exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c",
				`mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" || exit 99; exec "$@"`, data, exe}, args...)...)
		}},
		{"no write permission", "permission denied", func(t *testing.T, data string) {
			if os.Geteuid() == 0 {
				if _, err := exec.LookPath("setpriv"); err != nil {
					t.Skip("root writes through chmod a-w, and there is no setpriv to run as nobody")
				}
				// nobody must reach the binary (a private TMPDIR's parent may bar it).
				if out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe, "--version").CombinedOutput(); err != nil {
					t.Skipf("nobody cannot run %s: %v: %s", exe, err, out)
				}
			}
			filepath.WalkDir(data, func(p string, e fs.DirEntry, err error) error {
				if err == nil && e.IsDir() {
					os.Chmod(p, 0o555)
				}
				return nil
			})
		}, func(data string, args []string) *exec.Cmd {
			if os.Geteuid() != 0 {
				return exec.Command(exe, args...)
			}
			return exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", exe}, args...)...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := os.MkdirTemp(root, "case-*")
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, 0o755)
			data := filepath.Join(dir, "ih")
			mustRun(t, nil, "dedup", "--data", data, list)
			tc.prepare(t, data)
			before := fsutiltest.Tree(t, data)
			// What a writer's one line ends with after the errno.
			const commit = "; a writer cannot commit there (status, export and plan-retries --limit 0 without -o only read it)"
			for _, run := range []struct {
				args []string
				code int
				tail string // for code 1
			}{
				{[]string{"plan-retries", "--data", data, "--limit", "0"}, 0, ""},
				{[]string{"status", "--data", data}, 0, ""},
				{[]string{"policy", "show", "--data", data}, 0, ""},
				{[]string{"dedup", "--data", data, list}, 1, commit},
				{[]string{"merge", "--data", data, list}, 1, commit},
				{[]string{"plan-retries", "--data", data, "--limit", "5", "-o", "-"}, 1, commit},
				// It said "dataset: DIR/LOCK: open DIR/LOCK: permission denied".
				{[]string{"policy", "set", "--data", data, "jitter=0.1"}, 1,
					"; policy.json cannot be written there (policy show only reads it)"},
			} {
				cmd := tc.wrap(data, run.args)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				code := exitCode(cmd.Run())
				line := strings.TrimSpace(stderr.String())
				switch {
				case code != run.code:
					t.Errorf("%s: exit %d, want %d; stderr:\n%s", strings.Join(run.args, " "), code, run.code, line)
				case run.code == 0 && run.args[0] == "plan-retries" && !strings.Contains(line, " due=2 "):
					t.Errorf("the dry run does not count the 2 hashes due:\n%s", line)
				case run.code == 1 && (strings.Contains(line, "\n") ||
					!strings.HasSuffix(line, ": dataset "+data+" is not writable: "+tc.errno+run.tail)):
					t.Errorf("%s: stderr %q, want one line saying that %s is not writable (%s)", strings.Join(run.args, " "), line, data, tc.errno)
				}
			}
			sameTree(t, before, fsutiltest.Tree(t, data))
		})
	}
}
