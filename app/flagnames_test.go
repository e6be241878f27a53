package app

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// renamedFlags maps each flag renamed for one name per concept across
// commands to its old name, which still works (cron lines use it):
// capture's --listen and --max-rps are fetch's --dht-listen and
// --dht-rate.
var renamedFlags = map[string]string{"dht-listen": "listen", "dht-rate": "max-rps"}

// TestFlagNamesAgree: a flag name that several commands define means the
// same thing in each, so it has the same one-letter alias everywhere
// (export's -f and status's -f for --format, -o for --output), and no
// command offers a concept under an old name that another renamed: each
// renamed flag's old name is an alias of the new one, never a flag of
// its own.
func TestFlagNamesAgree(t *testing.T) {
	short := map[string][]string{} // flag name -> its one-letter aliases
	where := map[string]string{}   // flag name -> a command that defines it
	for _, c := range New(nil, nil, nil).Commands {
		cmds := append([]*cli.Command{c}, c.Subcommands...)
		for _, cmd := range cmds {
			for _, f := range cmd.Flags {
				names := f.Names()
				name := names[0]
				for renamed, old := range renamedFlags {
					if name == old {
						t.Errorf("%s defines --%s: it is --%s now (--%s an alias of it)", cmd.Name, name, renamed, old)
					}
				}
				var one []string
				for _, n := range names[1:] {
					if len(n) == 1 {
						one = append(one, n)
					}
				}
				if prev, ok := short[name]; ok && !slices.Equal(prev, one) {
					t.Errorf("--%s: %s has one-letter aliases %q, %s %q", name, where[name], prev, cmd.Name, one)
				}
				if _, ok := short[name]; !ok {
					short[name], where[name] = one, cmd.Name
				}
			}
		}
	}
	for name, want := range map[string][]string{"output": {"o"}, "format": {"f"}} {
		if got := short[name]; !slices.Equal(got, want) {
			t.Errorf("--%s has one-letter aliases %q, want %q", name, got, want)
		}
	}
}

// TestRenamedFlagsHelpAndOldNames: capture and fetch list the one name
// for the DHT node's UDP address and its query rate; capture's help shows
// the new name first and the old one beside it, and a command line with
// the old name runs as with the new one.
func TestRenamedFlagsHelpAndOldNames(t *testing.T) {
	capture, fetch := helpOf(t, "capture"), helpOf(t, "fetch")
	for name, old := range renamedFlags {
		for cmd, help := range map[string]string{"capture": capture, "fetch": fetch} {
			if !strings.Contains(help, "\n   --"+name+" ") {
				t.Errorf("%s --help lists no --%s first on a line", cmd, name)
			}
		}
		if !strings.Contains(capture, "--"+name+" ") || !strings.Contains(capture, ", --"+old+" ") {
			t.Errorf("capture --help does not list --%s with its old name --%s after it", name, old)
		}
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"old listen reaches the check", []string{"--listen", "abc"}, 2, `capture: --dht-listen: "abc": missing port: want HOST:PORT`},
		{"old max-rps reaches the check", []string{"--dht-listen", "127.0.0.1:0", "--max-rps", "-1"}, 2, "capture: --dht-rate: -1 is negative"},
		{"old and new name at once", []string{"--listen", "127.0.0.1:0", "--dht-listen", "127.0.0.1:0"}, 2, "capture: --dht-listen and --listen are one flag: give it once"},
		// The node listens where the old name said (the default is :6881).
		{"old names run", []string{"--listen", "127.0.0.1:0", "--max-rps", "100000"}, 0, `msg="capture: listening" nodes=1 addr=127.0.0.1:`},
		{"new names run", []string{"--dht-listen", "127.0.0.1:0", "--dht-rate", "100000"}, 0, `msg="capture: listening" nodes=1 addr=127.0.0.1:`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Each run its own -o: an existing one is refused without --replace.
			out := filepath.Join(t.TempDir(), "obs.parquet")
			args := append([]string{"capture", "--bootstrap", "", "--duration", "1ms", "-o", out}, tt.args...)
			_, stderr, code := runMain(t, args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("infohash %s: exit %d, stderr %q; want exit %d and %q", strings.Join(args, " "), code, stderr, tt.code, tt.want)
			}
		})
	}
}
