package dedup

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/exitcode"
)

// namesSetAside reports whether err, a run's on spooled input it set
// aside, names the file it is now: "stdin (DATA/inbox/part-….spool.bad)",
// DATA as given, at the start, and that file is there.
func namesSetAside(err error, data string) bool {
	if err == nil {
		return false
	}
	m := regexp.MustCompile(`^dedup: (?:stdin|leftover) \(?(` + regexp.QuoteMeta(filepath.Join(data, "inbox")) +
		`/part-[0-9a-f]+\.spool\.bad)\)?[: ]`).FindStringSubmatch(err.Error())
	if m == nil || !strings.HasSuffix(err.Error(), " (set aside)") {
		return false
	}
	_, serr := os.Stat(m[1])
	return serr == nil
}

// TestStdinNamesInMessages: a bad line on stdin is named by the file the
// spool is once set aside (renamed .spool.bad at once), in DIR/inbox/
// with DIR as the user gave --data, relative or absolute; so is a cut
// stream's partial input and cut end.
func TestStdinNamesInMessages(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "ds")
	rel := filepath.Join(t.TempDir(), "work")
	if err := os.MkdirAll(rel, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(rel)
	obs := genObs(95, 300, 100)
	stream, ends := cutCapture(t, obs)
	for _, data := range []string{abs, "ds", "./ds2"} {
		t.Run(data, func(t *testing.T) {
			given := filepath.Clean(data)
			_, err := run(t, data, func(o *Options) { o.Stdin = strings.NewReader("zzzz\n") }, "-")
			re := regexp.MustCompile(`^dedup: stdin \((` + regexp.QuoteMeta(given) + `/inbox/part-[0-9a-f]+\.spool\.bad)\):1: infohash "zzzz": .* \(set aside\)$`)
			m := re.FindStringSubmatch(err.Error())
			if exitcode.Of(err) != exitcode.Usage || m == nil {
				t.Fatalf("err = %v, want bad input matching %s", err, re)
			}
			if _, err := os.Stat(m[1]); err != nil {
				t.Fatalf("the file the error names: %v", err)
			}
			_, err = run(t, data, func(o *Options) { o.Stdin = strings.NewReader(string(stream[:ends[1]+20])) }, "-")
			re = regexp.MustCompile(`^dedup: stdin: the stream was cut mid-message after 200 complete rows, none applied: they are kept as (` +
				regexp.QuoteMeta(given) + `/inbox/partial-part-[0-9a-f]+\.arrow) \(apply them with "infohash dedup --data ` + regexp.QuoteMeta(given) +
				` ` + regexp.QuoteMeta(given) + `/inbox/partial-part-[0-9a-f]+\.arrow" .*, the 20 bytes of the cut message as (` +
				regexp.QuoteMeta(given) + `/inbox/part-[0-9a-f]+\.spool\.cut\.bad)$`)
			m = re.FindStringSubmatch(err.Error())
			if exitcode.Of(err) != exitcode.Usage || m == nil {
				t.Fatalf("err = %v, want bad input matching %s", err, re)
			}
			for _, p := range m[1:] {
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("a file the error names: %v", err)
				}
			}
		})
	}
}
