package app

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/schema"
)

// TestOutputReplace: capture, fetch, plan-retries and export refuse an
// -o FILE that exists (through a symbolic link too) with exit 2 and one
// line naming FILE and --replace, leaving it as it was; they wrote over it
// silently, losing what an earlier run wrote there (plan-retries and
// export did until they got the same rule: plan-retries replaced unmerged
// fetch results, export one of its inputs). --replace writes over it; a
// new FILE, -o - and a device written in place (a null device) need no
// --replace.
func TestOutputReplace(t *testing.T) {
	dir, data := seedDataset(t)
	jobs := filepath.Join(dir, "jobs.parquet")
	writeJobs(t, jobs, []schema.Job{{InfoHash: schema.Hash{0x5e, 2}, HashType: schema.HashV1}})
	cmds := map[string][]string{
		"capture":      {"capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--passive", "--duration", "1s"},
		"fetch":        {"fetch", jobs, "--no-dht"},
		"plan-retries": {"plan-retries", "--data", data},
		"export":       {"export", "--data", data},
	}
	before := []byte("an earlier run's output")
	for _, cmd := range []string{"capture", "fetch", "plan-retries", "export"} {
		for _, tt := range []struct {
			name     string
			existing bool   // FILE exists before the run
			link     bool   // -o names a symbolic link to FILE
			out      string // -o (default: FILE or the link)
			device   bool   // -o names a null device (fsutiltest.NullDevice)
			replace  bool
			code     int
		}{
			{name: "new file", code: 0},
			{name: "existing file", existing: true, code: 2},
			{name: "link to an existing file", existing: true, link: true, code: 2},
			{name: "existing file, --replace", existing: true, replace: true, code: 0},
			{name: "stdout", out: "-", code: 0},
			{name: "device", device: true, code: 0},
		} {
			t.Run(cmd+"/"+tt.name, func(t *testing.T) {
				sub := t.TempDir()
				file := filepath.Join(sub, "out.parquet")
				out := file
				if tt.existing {
					if err := os.WriteFile(file, before, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if tt.link {
					out = filepath.Join(sub, "link.parquet")
					if err := os.Symlink(file, out); err != nil {
						t.Fatal(err)
					}
				}
				if tt.out != "" {
					out = tt.out
				}
				if tt.device {
					out = fsutiltest.NullDevice(t)
				}
				args := append(append([]string{}, cmds[cmd]...), "-o", out)
				if tt.replace {
					args = append(args, "--replace")
				}
				_, stderr, code := runMain(t, args...)
				if code != tt.code {
					t.Fatalf("exit %d, want %d:\n%s", code, tt.code, stderr)
				}
				got, err := os.ReadFile(file)
				switch {
				case tt.code == 2:
					want := "infohash: " + cmd + ": -o " + out + " exists: give --replace to write over it\n"
					if stderr != want {
						t.Errorf("stderr %q, want the one line %q", stderr, want)
					}
					if err != nil || !bytes.Equal(got, before) {
						t.Errorf("the refused run changed %s: %q (%v)", file, got, err)
					}
				case tt.device:
					if fi, err := os.Lstat(out); err != nil || fi.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
						t.Errorf("%s is no longer a device (%v)", out, err)
					}
				case tt.out == "":
					if err != nil || !bytes.HasPrefix(got, []byte("PAR1")) {
						t.Errorf("%s holds %.20q (%v), want the run's Parquet", file, got, err)
					}
				}
				if tt.code == 0 && strings.Contains(stderr, "give --replace") {
					t.Errorf("a run that may write says --replace:\n%s", stderr)
				}
			})
		}
	}
}
