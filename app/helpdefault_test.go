package app

import (
	"strings"
	"testing"
)

// TestHelpShowsDefaults: a flag that has a default shows it in --help
// (every --now: the wall clock; capture's --dht-state and --run-id), and
// --metrics-file names -o among the usage errors only on a command that
// takes one (dedup and merge have none).
func TestHelpShowsDefaults(t *testing.T) {
	for _, tt := range []struct{ cmd, flag, want string }{
		{"capture", "--now", "(default: the wall clock)"},
		{"dedup", "--now", "(default: the wall clock)"},
		{"plan-retries", "--now", "(default: the wall clock)"},
		{"fetch", "--now", "(default: the wall clock)"},
		{"merge", "--now", "(default: the wall clock)"},
		{"status", "--now", "(default: the wall clock)"},
		{"clock", "--now", "(default: the wall clock)"},
		{"capture", "--dht-state", "(default: DIR/dht-state with --data DIR; none without)"},
		{"capture", "--run-id", "(default: capture-<UTC time>)"},
		{"capture", "--metrics-file", "bad flags, arguments or -o:"},
		{"plan-retries", "--metrics-file", "bad flags, arguments or -o:"},
		{"fetch", "--metrics-file", "bad flags, arguments or -o:"},
		{"export", "--metrics-file", "bad flags, arguments or -o:"},
		{"dedup", "--metrics-file", "bad flags or arguments:"},
		{"merge", "--metrics-file", "bad flags or arguments:"},
	} {
		t.Run(tt.cmd+" "+tt.flag, func(t *testing.T) {
			_, options, _ := strings.Cut(helpOf(t, tt.cmd), "\nOPTIONS:\n")
			for _, line := range strings.Split(options, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), tt.flag+" ") {
					if !strings.Contains(line, tt.want) {
						t.Fatalf("%q lacks %q", line, tt.want)
					}
					return
				}
			}
			t.Fatalf("%s --help lists no %s", tt.cmd, tt.flag)
		})
	}
	for _, c := range commands() {
		if got := defines(c, "output"); got != takesOutput[c.Name] {
			t.Errorf("%s: has -o %v, takesOutput says %v", c.Name, got, takesOutput[c.Name])
		}
	}
}
