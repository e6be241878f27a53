package app

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// TestFloatFlagsRefuseNonFinite gives NaN, +Inf, -Inf and -0 to every
// number flag of every command (as the app defines them, so a flag added
// later is covered): each must be refused with exit 2 and one line naming
// the flag, before the command does anything. --bloom-fp NaN used to pass
// its check and panic sizing a Bloom filter, --dht-rate +Inf and -0 ran.
//
// It runs the real binary, so that a panic in any goroutine is seen as
// what it is (a Go panic also exits 2, with a trace). The other flags
// keep a command that ignored the bad value on loopback and short:
// --bootstrap 127.0.0.1:1, listen addresses on 127.0.0.1, --duration 1s
// (capture and plan-retries refuse the hash list given as an argument).
func TestFloatFlagsRefuseNonFinite(t *testing.T) {
	bin := infohashBinary(t)
	// A real input: a check that is missing lets the command go on to it.
	hashes := filepath.Join(t.TempDir(), "hashes.txt")
	if err := os.WriteFile(hashes, []byte(hexLines("float", 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	type command struct {
		path []string // "policy", "set"
		cmd  *cli.Command
	}
	var cmds []command
	var walk func([]string, []*cli.Command)
	walk = func(path []string, cs []*cli.Command) {
		for _, c := range cs {
			p := append(slices.Clone(path), c.Name)
			cmds = append(cmds, command{p, c})
			walk(p, c.Subcommands)
		}
	}
	walk(nil, New(nil, nil, nil).Commands)
	tried := 0
	for _, cc := range cmds {
		cmd := cc.cmd
		for _, f := range cmd.Flags {
			ff, ok := f.(*cli.Float64Flag)
			if !ok {
				continue
			}
			for _, v := range []string{"NaN", "+Inf", "-Inf", "-0"} {
				tried++
				t.Run(strings.Join(cc.path, " ")+"/"+ff.Name+"="+v, func(t *testing.T) {
					dir := t.TempDir()
					args := append(slices.Clone(cc.path), "--"+ff.Name+"="+v)
					for name, value := range map[string]string{
						"data": filepath.Join(dir, "ds"), "output": filepath.Join(dir, "out"),
						"bootstrap": "127.0.0.1:1", "dht-listen": "127.0.0.1:0",
						"duration": "1s", "lock-wait": "0s",
					} {
						if defines(cmd, name) {
							args = append(args, "--"+name, value)
						}
					}
					args = append(args, hashes)
					// A hang guard, not a speed goal: a check that is
					// missing must not leave the test running for good.
					ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
					defer cancel()
					var stdout, stderr strings.Builder
					run := exec.CommandContext(ctx, bin, args...)
					run.Stdout, run.Stderr = &stdout, &stderr
					err := run.Run()
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.ExitCode() != 2 {
						t.Fatalf("infohash %s: %v, want exit 2; stderr:\n%s", strings.Join(args, " "), err, stderr.String())
					}
					msg := strings.TrimSuffix(stderr.String(), "\n")
					if strings.Contains(msg, "\n") || strings.Contains(msg, "panic") || !strings.Contains(msg, "--"+ff.Name) {
						t.Fatalf("infohash %s: stderr %q, want one line naming --%s", strings.Join(args, " "), msg, ff.Name)
					}
					if stdout.Len() != 0 {
						t.Fatalf("stdout holds %q", stdout.String())
					}
					if names, _ := os.ReadDir(dir); len(names) != 0 {
						t.Fatalf("the run left %v: the check came after work began", names)
					}
				})
			}
		}
	}
	if tried == 0 {
		t.Fatal("found no number flag to try")
	}
}
