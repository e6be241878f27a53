package scripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The syscall lists killsweep.sh passes to killpoints.awk.
const (
	everyCalls   = " rename renameat renameat2 unlink unlinkat mkdirat linkat link fsync fdatasync syncfs ftruncate "
	sampledCalls = " write pwrite64 openat "
)

// tracedCall is one call of a made-up reference trace: the thread that
// makes it and strace's text of it, where W stands for the run's folder.
type tracedCall struct {
	tid  int
	text string
}

// onThreads returns calls with the threads of tids, in turn: the same
// calls spread another way.
func onThreads(calls []tracedCall, tids ...int) []tracedCall {
	out := slices.Clone(calls)
	for i := range out {
		out[i].tid = tids[i%len(tids)]
	}
	return out
}

// commitCalls: a commit as a writer makes it: a snapshot folder, a
// manifest written and renamed into place, CURRENT by a temporary name
// made of digits only (a random hex name can be), the folder synced
// through its descriptor, an old snapshot's file removed.
var commitCalls = []tracedCall{
	{1, `mkdirat(AT_FDCWD, "W/D/state/v/000000000003", 0755) = 0`},
	{1, `openat(AT_FDCWD, "W/D/manifests/.tmp-000000000003.json-29df2489415c", O_RDWR|O_CREAT|O_EXCL, 0600) = 7`},
	{1, `write(7, "{\n \"format_version\": 11"..., 6572) = 6572`},
	{1, `fsync(7) = 0`},
	{1, `renameat(AT_FDCWD, "W/D/manifests/.tmp-000000000003.json-29df2489415c", AT_FDCWD, "W/D/manifests/000000000003.json") = 0`},
	{1, `renameat(AT_FDCWD, "W/D/state/v/000000000003/prefix=00/part-5746768666866e47.parquet", AT_FDCWD, "W/D/state/v/000000000003/prefix=00/part-5746768666866e47.s000000000004.parquet") = 0`},
	{1, `openat(AT_FDCWD, "W/D/.tmp-CURRENT-489392474688", O_RDWR|O_CREAT|O_EXCL, 0600) = 8`},
	{1, `write(8, "000000000003.json", 17) = 17`},
	{1, `fsync(8) = 0`},
	{1, `renameat(AT_FDCWD, "W/D/.tmp-CURRENT-489392474688", AT_FDCWD, "W/D/CURRENT") = 0`},
	{1, `openat(AT_FDCWD, "W/D", O_RDONLY|O_CLOEXEC) = 9`},
	{1, `fsync(9) = 0`},
	{1, `openat(AT_FDCWD, "W/D/state/v/000000000001", O_RDONLY|O_DIRECTORY|O_CLOEXEC) = 10`},
	{1, `unlinkat(10, "part-c9d3cde5dbf84e21.parquet", 0) = 0`},
	{1, `write(2, "time=2026-12-07T00:12:25.424Z le"..., 104) = 104`},
	{1, `pwrite64(7, "PAR1", 4, 0) = 4`},
	{1, `unlinkat(10, "part-2e3a5ead65b6a383.parquet", 0) = 0`},
}

// commitPoints are the points of commitCalls, whatever threads make them.
var commitPoints = []string{
	"-P @W@/D -e inject=fsync:signal=KILL:when=1",
	"-P @W@/D/CURRENT -e inject=renameat:signal=KILL:when=1",
	"-P @W@/D/manifests/000000000003.json -e inject=renameat:signal=KILL:when=1",
	"-P @W@/D/state/v/000000000001 -e inject=unlinkat:signal=KILL:when=1",
	"-P @W@/D/state/v/000000000001 -e inject=unlinkat:signal=KILL:when=2",
	"-P @W@/D/state/v/000000000003 -e inject=mkdirat:signal=KILL:when=1",
	"-e inject=fsync:signal=KILL:when=1",
	"-e inject=fsync:signal=KILL:when=2",
	"-e inject=fsync:signal=KILL:when=3",
	"-e inject=mkdirat:signal=KILL:when=1",
	"-e inject=openat:signal=KILL:when=1",
	"-e inject=openat:signal=KILL:when=3",
	"-e inject=pwrite64:signal=KILL:when=1",
	"-e inject=renameat:signal=KILL:when=1",
	"-e inject=renameat:signal=KILL:when=2",
	"-e inject=renameat:signal=KILL:when=3",
	"-e inject=unlinkat:signal=KILL:when=1",
	"-e inject=unlinkat:signal=KILL:when=2",
	"-e inject=write:signal=KILL:when=1",
	"-e inject=write:signal=KILL:when=2",
}

// TestKillPoints runs killpoints.awk, with each awk on PATH, on made-up
// traces: the points depend on the calls a run makes, not on how they
// spread over threads; a random name is no -P path even when made of
// digits; the sampled points are split among the names.
func TestKillPoints(t *testing.T) {
	awks := found("awk", "mawk", "gawk", "original-awk")
	if len(awks) == 0 {
		t.Skip("no awk on PATH")
	}
	sixOpens := make([]tracedCall, 6)
	for i := range sixOpens {
		sixOpens[i] = tracedCall{1, fmt.Sprintf(`openat(AT_FDCWD, "W/f%d", O_RDONLY) = 3`, i)}
	}
	tests := []struct {
		name  string
		calls []tracedCall
		max   int
		want  []string
	}{
		{name: "one thread", calls: commitCalls, max: 6, want: commitPoints},
		{name: "three threads", calls: onThreads(commitCalls, 1, 2, 3), max: 6, want: commitPoints},
		{name: "each call on a thread of its own", calls: onThreads(commitCalls, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17),
			max: 6, want: commitPoints},
		{name: "a call left unfinished counts once", calls: []tracedCall{
			{1, `renameat(AT_FDCWD, "W/a", AT_FDCWD, "W/b" <unfinished ...>`},
			{2, `renameat(AT_FDCWD, "W/c", AT_FDCWD, "W/b") = 0`},
			{1, `<... renameat resumed>) = 0`},
		}, want: []string{
			"-P @W@/a -e inject=renameat:signal=KILL:when=1",
			"-P @W@/b -e inject=renameat:signal=KILL:when=1",
			"-P @W@/b -e inject=renameat:signal=KILL:when=2",
			"-P @W@/c -e inject=renameat:signal=KILL:when=1",
			"-e inject=renameat:signal=KILL:when=1",
			"-e inject=renameat:signal=KILL:when=2",
		}},
		{name: "the one sampled name called takes all points, one a call at most", calls: onThreads(sixOpens, 1, 2), max: 12,
			want: []string{
				"-e inject=openat:signal=KILL:when=1",
				"-e inject=openat:signal=KILL:when=2",
				"-e inject=openat:signal=KILL:when=3",
				"-e inject=openat:signal=KILL:when=4",
				"-e inject=openat:signal=KILL:when=5",
				"-e inject=openat:signal=KILL:when=6",
			}},
		{name: "sampled points spaced over a name's calls", calls: sixOpens, max: 3, want: []string{
			"-e inject=openat:signal=KILL:when=1",
			"-e inject=openat:signal=KILL:when=3",
			"-e inject=openat:signal=KILL:when=5",
		}},
	}
	for _, awk := range awks {
		for _, tt := range tests {
			t.Run(filepath.Base(awk)+"/"+tt.name, func(t *testing.T) {
				got := killPoints(t, awk, tt.calls, tt.max)
				if !slices.Equal(got, tt.want) {
					t.Errorf("points:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
			})
		}
	}
}

// killPoints writes calls as strace -f's trace in a temporary run folder
// and returns the points killpoints.awk makes of it, sorted, each once
// (as killsweep.sh's sort -u leaves them). The run folder's path holds
// hex digits, as a SWEEP_DIR may: it must not make its paths random.
func killPoints(t *testing.T, awk string, calls []tracedCall, max int) []string {
	t.Helper()
	w := filepath.Join(t.TempDir(), "sweep-0123456789abcdef", "k1")
	if err := os.MkdirAll(w, 0o755); err != nil {
		t.Fatal(err)
	}
	var trace strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&trace, "%d  %s\n", c.tid, strings.ReplaceAll(c.text, `"W/`, `"`+w+"/"))
	}
	fmt.Fprintf(&trace, "%d  +++ exited with 0 +++\n", calls[0].tid)
	log := filepath.Join(w, "strace.log")
	if err := os.WriteFile(log, []byte(trace.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(awk, "-v", "every="+everyCalls, "-v", "sampled="+sampledCalls,
		"-v", fmt.Sprintf("max=%d", max), "-v", "wpath="+w, "-f", "killpoints.awk", log).CombinedOutput()
	if err != nil {
		t.Fatalf("%s -f killpoints.awk: %v\n%s", awk, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(lines)
	return slices.Compact(lines)
}
