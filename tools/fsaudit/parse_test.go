package fsaudit

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, trace string
		want        []Event
	}{
		{"a call", `12  03:02:52.845725 openat(AT_FDCWD</tmp/a b>, "x\"y", O_RDONLY) = 3</tmp/a b/x"y>` + "\n",
			[]Event{{Kind: Call, Line: 1, Start: 1, PID: 12, Name: "openat", Args: []string{"AT_FDCWD</tmp/a b>", `"x\"y"`, "O_RDONLY"}, Ret: `3</tmp/a b/x"y>`}}},
		{"no pid nor time", `fsync(3</a>) = 0` + "\n",
			[]Event{{Kind: Call, Line: 1, Start: 1, Name: "fsync", Args: []string{"3</a>"}, Ret: "0"}}},
		{"unfinished and resumed", "1 write(3</a,b>, \"x, y\", 4 <unfinished ...>\n2 close(4</c>) = 0\n1 <... write resumed>) = 4\n",
			[]Event{
				{Kind: Entry, Line: 1, Start: 1, PID: 1, Name: "write", Args: []string{"3</a,b>", `"x, y"`, "4"}},
				{Kind: Call, Line: 2, Start: 2, PID: 2, Name: "close", Args: []string{"4</c>"}, Ret: "0"},
				{Kind: Call, Line: 3, Start: 1, PID: 1, Name: "write", Args: []string{"3</a,b>", `"x, y"`, "4"}, Ret: "4"}}},
		{"exit and signal", "7 --- SIGURG {si_signo=SIGURG} ---\n7 +++ exited with 3 +++\n",
			[]Event{{Kind: Exit, Line: 2, Start: 2, PID: 7, Status: 3}}},
		{"a failed call", `[pid  5] unlinkat(AT_FDCWD</w>, "x", 0) = -1 ENOENT (No such file or directory)` + "\n",
			[]Event{{Kind: Call, Line: 1, Start: 1, PID: 5, Name: "unlinkat", Args: []string{"AT_FDCWD</w>", `"x"`, "0"}, Ret: "-1 ENOENT (No such file or directory)"}}},
		{"a socket (-yy)", `write(3<TCP:[127.0.0.1:52376->127.0.0.1:6881]>, "x", 1) = 1` + "\n",
			[]Event{{Kind: Call, Line: 1, Start: 1, Name: "write", Args: []string{"3<TCP:[127.0.0.1:52376->127.0.0.1:6881]>", `"x"`, "1"}, Ret: "1"}}},
		{"recvmsg resumed", "4 recvmsg(7<UDP:[127.0.0.1:6881]>,  <unfinished ...>\n4 <... recvmsg resumed>{msg_name={sin_port=htons(1)}, msg_iov=[{iov_base=\"a>)\", iov_len=9}]}, 0) = 3\n",
			[]Event{
				{Kind: Entry, Line: 1, Start: 1, PID: 4, Name: "recvmsg", Args: []string{"7<UDP:[127.0.0.1:6881]>"}},
				{Kind: Call, Line: 2, Start: 1, PID: 4, Name: "recvmsg", Args: []string{"7<UDP:[127.0.0.1:6881]>", `{msg_name={sin_port=htons(1)}, msg_iov=[{iov_base="a>)", iov_len=9}]}`, "0"}, Ret: "3"}}},
		{"nested", `writev(3</f>, [{iov_base="a)", iov_len=2}, {iov_base="b", iov_len=1}], 2) = 3` + "\n",
			[]Event{{Kind: Call, Line: 1, Start: 1, Name: "writev", Args: []string{"3</f>", `[{iov_base="a)", iov_len=2}, {iov_base="b", iov_len=1}]`, "2"}, Ret: "3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Event
			err := Parse(strings.NewReader(tt.trace), func(ev *Event) error {
				e := *ev
				e.head = ""
				got = append(got, e)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	tests := []struct {
		arg       string
		str       string
		truncated bool
		fd        int64
		path      string
	}{
		{`"a\nb\x41\101\"\\"`, "a\nbAA\"\\", false, 0, ""},
		{`"abc"...`, "abc", true, 0, ""},
		{`5</tmp/a\76b c>`, "", false, 5, "/tmp/a>b c"},
		{`AT_FDCWD</w>`, "", false, -100, "/w"},
		{`3<TCP:[127.0.0.1:1->127.0.0.1:2]>`, "", false, 3, "TCP:[127.0.0.1:1->127.0.0.1:2]"},
		{`4</tmp/a->`, "", false, 4, "/tmp/a-"},
	}
	for _, tt := range tests {
		if b, cut, ok := strArg(tt.arg); ok && (string(b) != tt.str || cut != tt.truncated) {
			t.Errorf("strArg(%s) = %q, %v; want %q, %v", tt.arg, b, cut, tt.str, tt.truncated)
		}
		if n, p, ok := fdArg(tt.arg); ok && (n != tt.fd || p != tt.path) {
			t.Errorf("fdArg(%s) = %d, %q; want %d, %q", tt.arg, n, p, tt.fd, tt.path)
		}
	}
}

// FuzzParse feeds arbitrary lines to the trace parser and the replay: no
// panic, and every event names a line of the input.
func FuzzParse(f *testing.F) {
	f.Add("1 openat(AT_FDCWD</w>, \"d/x\", O_RDWR|O_CREAT, 0666) = 3</w/d/x>\n" +
		"1 write(3</w/d/x>, \"a\\x\"..., 9 <unfinished ...>\n2 <... write resumed>) = 9\n1 <... write resumed>) = 9\n")
	f.Add("renameat2(AT_FDCWD</w>, \"a\", 4</w/d>, \"CURRENT\", RENAME_EXCHANGE) = 0\nfsync(4</w/d>) = 0\n+++ exited with 0 +++\n")
	f.Add(`[pid 3] 10:00:00 writev(5<>, [{iov_base="\", iov_len=1}], 1) = 1` + "\n" + `unlinkat(9</x\>, "../..", AT_REMOVEDIR) = 0` + "\n")
	f.Add("1 mkdirat(AT_FDCWD</w>, \"d\", 0755 <unfinished ...>\n3 unlinkat(AT_FDCWD</w>, \"d/e\", AT_REMOVEDIR <unfinished ...>\n" +
		"2 mkdirat(AT_FDCWD</w>, \"d/e\", 0755) = 0\n2 openat(AT_FDCWD</w>, \"d/e/f\", O_RDWR|O_CREAT, 0666) = 4</w/d/e/f>\n1 <... mkdirat resumed>) = 0\n")
	f.Fuzz(func(t *testing.T, trace string) {
		lines := strings.Count(trace, "\n") + 1
		err := Parse(strings.NewReader(trace), func(ev *Event) error {
			if ev.Line < 1 || ev.Line > lines || ev.Start > ev.Line {
				t.Fatalf("event at line %d (from %d) of %d", ev.Line, ev.Start, lines)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Audit(strings.NewReader(trace), Config{Cwd: "/w", Datasets: []string{"/w/d"}, Outputs: []string{"/w/o"}}); err != nil {
			t.Fatal(err)
		}
	})
}
