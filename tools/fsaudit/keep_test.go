package fsaudit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaches checks the rule for a cache (a DHT state file, -cache): its
// data durable before its rename into place, never written in place; its
// loss (a new folder never synced, no sync at the exit) is no violation.
func TestCaches(t *testing.T) {
	const tmp = `1 mkdirat(AT_FDCWD</w>, "s", 0777) = 0
1 openat(AT_FDCWD</w>, "/w", O_RDONLY) = 4</w>
1 fsync(4</w>) = 0
1 openat(AT_FDCWD</w>, "s/.tmp-state.json-1", O_RDWR|O_CREAT|O_EXCL, 0666) = 3</w/s/.tmp-state.json-1>
1 write(3</w/s/.tmp-state.json-1>, "{}\n", 3) = 3
`
	const rename, fsync = `1 renameat(AT_FDCWD</w>, "s/.tmp-state.json-1", AT_FDCWD</w>, "s/state.json") = 0
`, `1 fsync(3</w/s/.tmp-state.json-1>) = 0
`
	const exit = "1 exit_group(0) = ?\n"
	tests := []struct {
		name, trace string
		want        string // a part of the one violation; "": none
	}{
		{"synced before its rename", tmp + fsync + rename + exit, ""},
		{"renamed before its fsync", tmp + rename + fsync + exit, "renames the cache into place before its data is durable"},
		{"written in place", `1 mkdirat(AT_FDCWD</w>, "s", 0777) = 0
1 openat(AT_FDCWD</w>, "s/state.json", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</w/s/state.json>
1 write(3</w/s/state.json>, "{}\n", 3) = 3
1 fsync(3</w/s/state.json>) = 0
` + exit, "writes the cache in place"},
		{"rewritten in place after its rename", tmp + fsync + rename + "1 write(3</w/s/state.json>, \"{}\\n\", 3) = 3\n" + exit,
			"writes the cache in place"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Audit(strings.NewReader(tt.trace), Config{Cwd: "/w", Caches: []string{"/w/s/state.json"}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && len(rep.Violations) != 0:
				t.Errorf("violations %v, want none", rep.Violations)
			case tt.want != "" && (len(rep.Violations) != 1 || rep.Violations[0].Path != "/w/s/state.json" ||
				!strings.Contains(rep.Violations[0].What, tt.want)):
				t.Errorf("violations %v, want one of /w/s/state.json: ...%s...", rep.Violations, tt.want)
			}
		})
	}
}

// TestCacheFolder checks that a cache is renamed only into a folder that
// is durably there: a capture making its --dht-state folder syncs the
// folder's parent (testdata/state-folder-*.trace, as capture's trace
// shows it), whatever it syncs after.
func TestCacheFolder(t *testing.T) {
	const cache = "/w/run/state/dht-state.json"
	tests := []struct {
		trace string
		line  int    // of the one violation; 0: none
		want  string // a part of it
	}{
		{"state-folder-synced.trace", 0, ""},
		{"state-folder-unsynced.trace", 9, "renames the cache into a folder that is not durably there (a power cut may lose the folder with it): " +
			"its entry state in /w/run (mkdirat at line 1) is not durable: no fsync of /w/run nor syncfs since"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.trace, ".trace"), func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.trace))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rep, err := Audit(f, Config{Cwd: "/w", Caches: []string{cache}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.line == 0 && len(rep.Violations) != 0:
				t.Errorf("violations %v, want none", rep.Violations)
			case tt.line != 0 && (len(rep.Violations) != 1 || rep.Violations[0].Line != tt.line ||
				rep.Violations[0].Call != "renameat" || rep.Violations[0].Path != cache || !strings.Contains(rep.Violations[0].What, tt.want)):
				t.Errorf("violations %v, want one at line %d: renameat %s: ...%s...", rep.Violations, tt.line, cache, tt.want)
			}
		})
	}
}

// TestSpools checks the rule for a spool in a dataset's inbox/ (stdin,
// as dedup - keeps it): removed only once a commit that applies it is
// durable.
func TestSpools(t *testing.T) {
	const spool = `1 openat(AT_FDCWD</w>, "d/inbox/.tmp-part-1.spool", O_RDWR|O_CREAT|O_EXCL, 0666) = 3</w/d/inbox/.tmp-part-1.spool>
1 write(3</w/d/inbox/.tmp-part-1.spool>, "aa\n", 3) = 3
1 fsync(3</w/d/inbox/.tmp-part-1.spool>) = 0
1 renameat(AT_FDCWD</w>, "d/inbox/.tmp-part-1.spool", AT_FDCWD</w>, "d/inbox/part-1.spool") = 0
1 openat(AT_FDCWD</w>, "d/inbox", O_RDONLY) = 4</w/d/inbox>
1 fsync(4</w/d/inbox>) = 0
`
	// a whole commit: manifest, its file f and CURRENT all durable
	// before the rename of CURRENT (not yet durable itself)
	const commit = `1 mkdirat(AT_FDCWD</w>, "d/manifests", 0755) = 0
1 openat(AT_FDCWD</w>, "d/m", O_RDWR|O_CREAT|O_EXCL, 0666) = 5</w/d/m>
1 write(5</w/d/m>, "{\"tables\": {\"t\": {\"dir\": \"\", \"partitions\": {\"\": [{\"name\": \"f\"}]}}}}", 67) = 67
1 fsync(5</w/d/m>) = 0
1 renameat(AT_FDCWD</w>, "d/m", AT_FDCWD</w>, "d/manifests/000000000001.json") = 0
1 openat(AT_FDCWD</w>, "d/manifests", O_RDONLY) = 9</w/d/manifests>
1 fsync(9</w/d/manifests>) = 0
1 openat(AT_FDCWD</w>, "d/f", O_RDWR|O_CREAT, 0666) = 7</w/d/f>
1 pwrite64(7</w/d/f>, "x", 1, 0) = 1
1 fsync(7</w/d/f>) = 0
1 openat(AT_FDCWD</w>, "d/c", O_RDWR|O_CREAT|O_EXCL, 0666) = 8</w/d/c>
1 write(8</w/d/c>, "000000000001.json\n", 18) = 18
1 fsync(8</w/d/c>) = 0
1 openat(AT_FDCWD</w>, "d", O_RDONLY) = 6</w/d>
1 fsync(6</w/d>) = 0
1 renameat(AT_FDCWD</w>, "d/c", AT_FDCWD</w>, "d/CURRENT") = 0
`
	const durable, exit = "1 fsync(6</w/d>) = 0\n", "1 exit_group(0) = ?\n"
	const unlink, unlinkOld = `1 unlinkat(AT_FDCWD</w>, "d/inbox/part-1.spool", 0) = 0
`, `1 unlinkat(AT_FDCWD</w>, "d/inbox/part-0.spool", 0) = 0
`
	tests := []struct {
		name, trace string
		want        string // a part of the one violation; "": none
	}{
		{"removed once its commit is durable", spool + commit + durable + unlink + exit, ""},
		{"removed before a commit", spool + unlink + commit + durable + exit, "removes a spool (named at line 4) before a commit applies it"},
		{"removed before its commit is durable", spool + commit + unlink + durable + exit,
			"removes a spool before the commit that applies it (the rename of CURRENT at line 22) is durable"},
		{"set aside in inbox/, no commit", spool + "1 renameat(AT_FDCWD</w>, \"d/inbox/part-1.spool\", AT_FDCWD</w>, \"d/inbox/part-1.spool.bad\") = 0\n" + exit, ""},
		{"renamed out of inbox/ before a commit", spool + "1 renameat(AT_FDCWD</w>, \"d/inbox/part-1.spool\", AT_FDCWD</w>, \"/w/x\") = 0\n" + exit,
			"before a commit applies it"},
		{"a temporary name removed", "1 unlinkat(AT_FDCWD</w>, \"d/inbox/.tmp-part-2.spool\", 0) = 0\n" + exit, ""},
		{"a leftover removed, no commit (applied before)", unlinkOld + exit, ""},
		{"a leftover removed before the commit is durable", commit + unlinkOld + durable + exit, "is durable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Audit(strings.NewReader(tt.trace), Config{Cwd: "/w", Datasets: []string{"/w/d"}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && len(rep.Violations) != 0:
				t.Errorf("violations %v, want none", rep.Violations)
			case tt.want != "" && (len(rep.Violations) != 1 || !strings.HasPrefix(rep.Violations[0].Path, "/w/d/inbox/part-") ||
				!strings.Contains(rep.Violations[0].What, tt.want)):
				t.Errorf("violations %v, want one of the spool: ...%s...", rep.Violations, tt.want)
			}
		})
	}
}

// TestKeptAtExit checks that what a step leaves in a dataset's inbox/ as
// it exits (a stopped dedup -'s spool, under its temporary name, as
// trace kept-int shows it: O_TMPFILE, named by linkat) is durably there
// with durable data, whatever the exit status; a rename within inbox/
// that is not durable yet loses nothing.
func TestKeptAtExit(t *testing.T) {
	const spool = `1 openat(AT_FDCWD</w>, "/w/d/inbox/", O_RDWR|O_CLOEXEC|O_TMPFILE, 0666) = 8</w/d/inbox/#1>(deleted)
1 linkat(AT_FDCWD</w>, "/proc/self/fd/8", AT_FDCWD</w>, "/w/d/inbox/.tmp-part-1.spool-L1", AT_SYMLINK_FOLLOW) = 0
1 write(8</w/d/inbox/#1>(deleted), "aa\n", 3) = 3
`
	const fdatasync, dirsync = "1 fdatasync(8</w/d/inbox/#1>(deleted)) = 0\n", `1 openat(AT_FDCWD</w>, "/w/d/inbox", O_RDONLY|O_CLOEXEC) = 9</w/d/inbox>
1 fsync(9</w/d/inbox>) = 0
`
	const aside = `1 renameat(AT_FDCWD</w>, "/w/d/inbox/.tmp-part-1.spool-L1", AT_FDCWD</w>, "/w/d/inbox/partial-1.txt") = 0
`
	tests := []struct {
		name, trace string
		want        string // a part of the one violation; "": none
	}{
		{"data and entry synced", spool + fdatasync + dirsync + "1 exit_group(130) = ?\n", ""},
		{"nothing synced", spool + "1 exit_group(130) = ?\n",
			"exits 130 leaving in the inbox what a stream sent (kept for the next run) not durably there: its data is not durable: written at line 3 (write), never synced"},
		{"entry not synced", spool + fdatasync + "1 exit_group(130) = ?\n",
			"its entry .tmp-part-1.spool-L1 in /w/d/inbox (linkat at line 2) is not durable"},
		{"data not synced, exit 1", spool + dirsync + "1 exit_group(1) = ?\n", "exits 1 leaving in the inbox"},
		{"set aside, its rename not yet durable", spool + fdatasync + dirsync + aside + "1 exit_group(2) = ?\n", ""},
		{"in a new folder not synced in inbox/", `1 mkdirat(AT_FDCWD</w>, "/w/d/inbox/merge", 0755) = 0
` + strings.ReplaceAll(spool+fdatasync+dirsync, "/w/d/inbox", "/w/d/inbox/merge") + "1 exit_group(130) = ?\n",
			"its entry merge in /w/d/inbox (mkdirat at line 1) is not durable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Audit(strings.NewReader(tt.trace), Config{Cwd: "/w", Datasets: []string{"/w/d"}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && len(rep.Violations) != 0:
				t.Errorf("violations %v, want none", rep.Violations)
			case tt.want != "" && (len(rep.Violations) != 1 || rep.Violations[0].Call != "exit_group" ||
				!strings.HasPrefix(rep.Violations[0].Path, "/w/d/inbox/") || !strings.Contains(rep.Violations[0].What, tt.want)):
				t.Errorf("violations %v, want one at the exit of the spool: ...%s...", rep.Violations, tt.want)
			}
		})
	}
}
