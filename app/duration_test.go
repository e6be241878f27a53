package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

func TestParseFlagDuration(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "1d", want: day},
		{in: "7d", want: 7 * day},
		{in: "2w", want: 14 * day},
		{in: "1d12h", want: 36 * time.Hour},
		{in: "90m", want: 90 * time.Minute},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "1.5h", want: 90 * time.Minute},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "250µs", want: 250 * time.Microsecond},
		{in: "0", want: 0},
		{in: "0s", want: 0},
		{in: "+2h", want: 2 * time.Hour},
		{in: "-1h", want: -time.Hour},
		{in: "", bad: true},
		{in: "1x", bad: true},
		{in: "1", bad: true},
		{in: "d", bad: true},
		{in: "-", bad: true},
		{in: "1d ", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseFlagDuration(tt.in)
			if (err != nil) != tt.bad || got != tt.want {
				t.Fatalf("parseFlagDuration(%q) = %v, %v; want %v, bad %v", tt.in, got, err, tt.want, tt.bad)
			}
		})
	}
}

// durationFlags lists every command path's flags that take a duration.
func durationFlags(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			path := strings.TrimSpace(prefix + " " + c.Name)
			for _, f := range c.Flags {
				switch f := f.(type) {
				case *cli.DurationFlag:
					t.Errorf("%s --%s is a cli.DurationFlag, which takes no day units; use durationFlag", path, f.Name)
				case *cli.GenericFlag:
					if _, ok := f.Value.(*durationValue); ok {
						out[path] = append(out[path], f.Name)
					}
				}
			}
			walk(path, c.Subcommands)
		}
	}
	walk("", commands())
	return out
}

// parseOnly runs args through the real command line with the command's
// Action replaced: it records the duration flags' values instead of
// doing any work.
func parseOnly(t *testing.T, args ...string) (map[string]time.Duration, int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := New(strings.NewReader(""), &out, &errb)
	got := map[string]time.Duration{}
	var stub func(cs []*cli.Command)
	stub = func(cs []*cli.Command) {
		for _, c := range cs {
			c.Action = func(c *cli.Context) error {
				for _, f := range c.Command.Flags {
					if g, ok := f.(*cli.GenericFlag); ok {
						got[g.Name] = flagDuration(c, g.Name)
					}
				}
				return nil
			}
			stub(c.Subcommands)
		}
	}
	stub(a.Commands)
	err := a.RunContext(context.Background(), reorderArgs(a, append([]string{"infohash"}, args...)))
	code := exitcode.Of(err)
	if err == nil {
		code = 0
	} else if code == exitcode.Error && isUsage(err) {
		code = exitcode.Usage
	}
	msg := errb.String()
	if err != nil {
		msg += err.Error()
	}
	return got, code, msg
}

// TestDurationFlagsTakeDays gives every duration flag of every command
// the units the policy takes (d, w), before and after a positional, and a
// bad value, which must be a usage error saying what is wanted.
func TestDurationFlagsTakeDays(t *testing.T) {
	flags := durationFlags(t)
	for _, want := range []string{"capture duration", "dedup half-life", "dedup lock-wait", "plan-retries lease",
		"plan-retries lock-wait", "fetch timeout", "fetch deadline", "merge lock-wait", "policy set lock-wait"} {
		i := strings.LastIndex(want, " ")
		cmd, flag := want[:i], want[i+1:]
		found := false
		for _, f := range flags[cmd] {
			found = found || f == flag
		}
		if !found {
			t.Errorf("%s --%s is not a duration flag (have %v)", cmd, flag, flags[cmd])
		}
	}
	values := []struct {
		in   string
		want time.Duration
	}{{"1d", 24 * time.Hour}, {"1w", 7 * 24 * time.Hour}, {"1d12h", 36 * time.Hour}, {"90m", 90 * time.Minute}}
	for path, names := range flags {
		cmd := strings.Fields(path)
		base := append([]string{}, cmd...)
		if path == "capture" || path == "fetch" || path == "plan-retries" {
			base = append(base, "-o", "x.parquet") // capture and fetch require -o
		}
		for _, name := range names {
			for _, v := range values {
				for _, after := range []bool{false, true} {
					args := append(append([]string{}, base...), "--"+name, v.in)
					if after {
						args = append(append(append([]string{}, base...), "pos"), "--"+name, v.in)
					}
					t.Run(strings.Join(args, " "), func(t *testing.T) {
						got, code, msg := parseOnly(t, args...)
						if code != 0 || got[name] != v.want {
							t.Fatalf("exit %d, --%s = %v, want %v; %s", code, name, got[name], v.want, msg)
						}
					})
				}
			}
			args := append(append([]string{}, base...), "--"+name, "1x")
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				_, code, msg := parseOnly(t, args...)
				want := fmt.Sprintf(`--%s: "1x": want a duration such as 90m, 2h or 1d`, name)
				if code != exitcode.Usage || !strings.Contains(msg, want) {
					t.Fatalf("exit %d, %q; want exit 2 and %q", code, msg, want)
				}
			})
		}
	}
}

// TestDurationFlagEnv: a duration flag read from an environment variable
// takes day units too, and a bad one is reported like a bad argument.
func TestDurationFlagEnv(t *testing.T) {
	for _, tt := range []struct {
		env  string
		want time.Duration
		bad  bool
	}{{"3d", 72 * time.Hour, false}, {"45s", 45 * time.Second, false}, {"soon", 0, true}} {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv("INFOHASH_TEST_WAIT", tt.env)
			f := durationFlag("wait", time.Minute, "")
			f.EnvVars = []string{"INFOHASH_TEST_WAIT"}
			var got time.Duration
			var checkErr error
			a := &cli.App{Commands: []*cli.Command{{Name: "cmd", Flags: []cli.Flag{f}, Action: func(c *cli.Context) error {
				checkErr = checkDurations(c)
				got = flagDuration(c, "wait")
				return nil
			}}}}
			if err := a.Run([]string{"x", "cmd"}); err != nil {
				t.Fatal(err)
			}
			if tt.bad {
				if checkErr == nil || !strings.Contains(checkErr.Error(), `--wait: "soon": want a duration`) {
					t.Fatalf("check: %v", checkErr)
				}
				return
			}
			if checkErr != nil || got != tt.want {
				t.Fatalf("got %v, %v; want %v", got, checkErr, tt.want)
			}
		})
	}
}

// TestDurationDefaultsInHelp: defaults are still shown, as the policy
// writes durations.
func TestDurationDefaultsInHelp(t *testing.T) {
	for _, tt := range []struct{ cmd, flag, want string }{
		{"capture", "--duration", "(default: 10m)"},
		{"fetch", "--timeout", "(default: 30s)"},
		{"fetch", "--deadline", "(default: 0s)"},
		{"merge", "--lock-wait", "(default: 0s)"},
	} {
		t.Run(tt.cmd+" "+tt.flag, func(t *testing.T) {
			for _, line := range strings.Split(helpOf(t, tt.cmd), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), tt.flag+" D ") {
					if !strings.Contains(line, tt.want) {
						t.Fatalf("%q lacks %q", line, tt.want)
					}
					return
				}
			}
			t.Fatalf("%s --help lists no %s", tt.cmd, tt.flag)
		})
	}
}

func TestParseSince(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		in   string
		ago  time.Duration
		abs  string
		want string
	}{
		{in: "7d", ago: 7 * schedule.Day},
		{in: "24h", ago: 24 * time.Hour},
		{in: "1w", ago: 7 * schedule.Day},
		{in: "2026-01-01T00:00:00Z", abs: "2026-01-01T00:00:00Z"},
		{in: "1x", want: `--since: "1x": want an RFC 3339 time or a duration such as 24h or 7d`},
		{in: "0", want: "want an RFC 3339 time"},
		{in: "-1h", want: "want an RFC 3339 time"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSince("--since", tt.in)
			switch {
			case tt.want != "":
				if err == nil || !strings.Contains(err.Error(), tt.want) || exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("err %v, want %q", err, tt.want)
				}
			case err != nil:
				t.Fatal(err)
			case tt.abs != "":
				if got.Format(time.RFC3339) != tt.abs {
					t.Fatalf("got %v", got)
				}
			default:
				if d := now.Add(-tt.ago).Sub(got); d > time.Minute || d < -time.Minute {
					t.Fatalf("got %v, want about %v", got, now.Add(-tt.ago))
				}
			}
		})
	}
}

// FuzzParseFlagDuration: whatever parses renders (as --help shows a
// default) to text that parses back to the same value, and agrees with
// time.ParseDuration wherever that accepts the text too (but for fractions
// of a nanosecond).
func FuzzParseFlagDuration(f *testing.F) {
	for _, s := range []string{"1d", "-1h", "+2w", "1.5h", "250µs", "0", "1x", "", "9999999999w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseFlagDuration(s)
		if err != nil {
			return
		}
		v := &durationValue{d: d}
		back, err := parseFlagDuration(v.String())
		if err != nil || back != d {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, d, v.String(), back, err)
		}
		// Fractions may differ below a nanosecond (rounded here, cut there).
		if g, err := time.ParseDuration(s); err == nil && g != d && !strings.Contains(s, ".") {
			t.Fatalf("%q: %v, time.ParseDuration says %v", s, d, g)
		}
	})
}
