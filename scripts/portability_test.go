// Package scripts holds no Go code: its tests run portability.sh, the
// check make lint runs over the repository's shell scripts.
package scripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// portabilityLines are lines of a script and whether portability.sh
// must name them (a GNU-only form) or pass them (a portable one, or a
// comment, or a line marked Linux-only).
var portabilityLines = []struct {
	line string
	bad  bool
}{
	{`NOW2=$(date -u -d "+3 hours" +%FT%TZ)`, true},
	{`merge_now=$(date --date="$NOW + 1 hour")`, true},
	{`date -ud@0`, true},
	{`date -r 0`, true},
	{`ms=$(date +%s%3N)`, true},
	{`sed -i 's/a/b/' f`, true},
	{`sed -i '' 's/a/b/' f`, true},
	{`sed --in-place=.bak 's/a/b/' f`, true},
	{`sed -r 's/a+/b/' f`, true},
	{`dir=$(readlink -f "$0")`, true},
	{`root=$(realpath "$0")`, true},
	{`size=$(stat -c %s f)`, true},
	{`stat -f %z f`, true},
	{`grep -oP '\d+' f`, true},
	{`find . -name x -printf '%p\n'`, true},
	{`du -sb dir`, true},
	{`du --apparent-size -s dir`, true},
	{`timeout 5 cmd`, true},
	{`if timeout 5 cmd; then :; fi`, true},
	{`out=$(timeout 5 cmd)`, true},
	{`ls | xargs -r rm`, true},
	{`xargs -d '\n' rm <list`, true},
	{`f=$(mktemp -t foo)`, true},
	{`f=$(mktemp -p /tmp)`, true},
	{`f=$(mktemp --suffix=.x)`, true},
	{`cp -al a b`, true},
	{`cp --reflink=auto a b`, true},
	{`ln -sr a b`, true},
	{`head -n -1 f`, true},
	{`if [ "$(nproc)" -ge 2 ]; then :; fi`, true},
	{`sha256sum f`, true},
	{`tac f`, true},
	{`/usr/bin/time -f '%e %M' cmd`, true},

	{`NOW1=$(date -u +%FT%TZ)`, false},
	{`PASS=$(date -u +%Y%m%dT%H%M%SZ)`, false},
	{`NOW2=$("$BIN" clock --now "$NOW1" --add 3h)`, false},
	{`# date -d is GNU date's`, false},
	{`echo hi # not: date -d now`, false},
	{`sed -i.bak 's/a/b/' f && rm f.bak`, false},
	{`sed -E 's/a+/b/' f`, false},
	{`sed -n "s/^ *\"$2\": *\(-\{0,1\}[0-9][0-9]*\).*/\1/p" "$1" | head -1`, false},
	{`dir=$(cd "$(dirname "$0")" && pwd -P)`, false},
	{`"$BIN" status --data "$DATA" --verify`, false},
	{`grep -qF -- "$file" "$errf"`, false},
	{`find "$ds" -type f`, false},
	{`du -sk dir`, false},
	{`export FETCH_ARGS="--timeout 10s --deadline 60s"`, false},
	{`timeout=5`, false},
	{`log=$(mktemp "${TMPDIR:-/tmp}/x.XXXXXX")`, false},
	{`d=$(mktemp -d)`, false},
	{`cp -a a b`, false},
	{`cp -- a b`, false},
	{`ln -sf a b`, false},
	{`tail -n +2 f | head -n 1`, false},
	{`n=$(getconf _NPROCESSORS_ONLN)`, false},
	{`shasum -a 256 f`, false},
	{`time -p cmd`, false},
	{`validate -d x; update -r y`, false},
	{`echo "${#folders[@]}"`, false},
	{`cp -al a b # portability: Linux only, a hard-link copy`, false},
	{`# portability: Linux only, GNU time's peak RSS`, false},
	{`/usr/bin/time -f '%e %M' cmd`, false}, // marked on the line above
}

// TestPortability runs portability.sh over a script of portabilityLines
// and checks that it names each GNU-only line (FILE:LINE) and no other,
// exiting 1, under every sh and awk on this machine among those it is
// meant for (macOS's awk is the one true awk, Debian's original-awk);
// and that the repository's own scripts pass.
func TestPortability(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "bad.sh")
	var text strings.Builder
	text.WriteString("#!/bin/sh\n")
	var want []string
	for i, l := range portabilityLines {
		text.WriteString(l.line + "\n")
		if l.bad {
			want = append(want, script+":"+strconv.Itoa(i+2))
		}
	}
	if err := os.WriteFile(script, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range variants(t) {
		t.Run(v.name, func(t *testing.T) {
			out, err := v.run(t, script)
			if code := exitCode(t, err); code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, out)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if strings.HasPrefix(line, "portability: ") {
					continue // the summary
				}
				file, rest, _ := strings.Cut(line, ":")
				num, msg, _ := strings.Cut(rest, ": ")
				if msg == "" {
					t.Errorf("line without a message: %q", line)
				}
				got = append(got, file+":"+num)
			}
			for _, w := range want {
				if !slices.Contains(got, w) {
					t.Errorf("%s (%s) not named", w, lineAt(w))
				}
			}
			for _, g := range got {
				if !slices.Contains(want, g) {
					t.Errorf("%s (%s) named, but it is portable", g, lineAt(g))
				}
			}
			if !strings.Contains(string(out), fmt.Sprintf("portability: %d use(s)", len(want))) {
				t.Errorf("no summary of %d uses:\n%s", len(want), out)
			}

			// The repository's own scripts (make lint's run).
			if out, err := v.run(t); err != nil {
				t.Errorf("the repository's scripts: %v\n%s", err, out)
			}
		})
	}
}

// lineAt returns the text of portabilityLines at "FILE:N" (N counts the
// shebang line).
func lineAt(at string) string {
	_, num, _ := strings.Cut(at, ":")
	n, err := strconv.Atoi(num)
	if err != nil || n < 2 || n-2 >= len(portabilityLines) {
		return "?"
	}
	return portabilityLines[n-2].line
}

type variant struct {
	name string
	run  func(t *testing.T, args ...string) ([]byte, error)
}

// variants returns a way to run portability.sh for each sh (sh, bash,
// dash) and awk (awk, mawk, gawk, original-awk) found on PATH: awk is put
// first on PATH through a folder of its own.
func variants(t *testing.T) []variant {
	t.Helper()
	shells := found("sh", "bash", "dash")
	awks := found("awk", "mawk", "gawk", "original-awk")
	if len(shells) == 0 || len(awks) == 0 {
		t.Skip("no sh or no awk on PATH")
	}
	var vs []variant
	for _, sh := range shells {
		for _, awk := range awks {
			bin := t.TempDir()
			if err := os.Symlink(awk, filepath.Join(bin, "awk")); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			vs = append(vs, variant{
				name: filepath.Base(sh) + "+" + filepath.Base(awk),
				run: func(t *testing.T, args ...string) ([]byte, error) {
					t.Helper()
					cmd := exec.Command(sh, append([]string{"portability.sh"}, args...)...)
					cmd.Env = env
					return cmd.CombinedOutput()
				},
			})
		}
	}
	return vs
}

// found returns the programs of names on PATH, each once (sh is often
// dash, awk often mawk).
func found(names ...string) []string {
	var paths, real []string
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil || !slices.Contains(real, r) {
			paths, real = append(paths, p), append(real, r)
		}
	}
	return paths
}

// exitCode returns err's exit status (0 for nil).
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatal(err)
	}
	return ee.ExitCode()
}
