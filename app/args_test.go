package app

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestReorderArgs(t *testing.T) {
	a := &cli.App{Commands: []*cli.Command{
		{Name: "dedup", Flags: []cli.Flag{
			&cli.StringFlag{Name: "data"}, &cli.BoolFlag{Name: "debug"}, &cli.StringFlag{Name: "now"}}},
		{Name: "policy", Flags: []cli.Flag{&cli.StringFlag{Name: "data"}}, Subcommands: []*cli.Command{
			{Name: "show", Flags: []cli.Flag{&cli.StringFlag{Name: "data"}, &cli.BoolFlag{Name: "hash"}}},
			{Name: "set", Flags: []cli.Flag{&cli.StringFlag{Name: "data"}}}}},
	}}
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"flags first", []string{"ih", "dedup", "--data", "D", "in.parquet"}, []string{"ih", "dedup", "--data", "D", "--", "in.parquet"}},
		{"flags after", []string{"ih", "dedup", "in.parquet", "--data", "D"}, []string{"ih", "dedup", "--data", "D", "--", "in.parquet"}},
		{"mixed with bool and =", []string{"ih", "dedup", "a", "--debug", "b", "--now=X", "--data", "D", "-"},
			[]string{"ih", "dedup", "--debug", "--now=X", "--data", "D", "--", "a", "b", "-"}},
		{"double dash", []string{"ih", "dedup", "--data", "D", "--", "--weird"}, []string{"ih", "dedup", "--data", "D", "--", "--weird"}},
		{"unknown command untouched", []string{"ih", "nope", "x", "--y"}, []string{"ih", "nope", "x", "--y"}},
		{"no positionals", []string{"ih", "dedup", "--data", "D"}, []string{"ih", "dedup", "--data", "D"}},
		{"help after positional", []string{"ih", "dedup", "x.parquet", "-h"}, []string{"ih", "dedup", "--help"}},
		{"help among flags", []string{"ih", "dedup", "--data", "D", "--help", "x"}, []string{"ih", "dedup", "--help"}},
		{"help=true", []string{"ih", "dedup", "x", "--help=true"}, []string{"ih", "dedup", "--help"}},
		{"help=false is not help", []string{"ih", "dedup", "x", "--help=false"}, []string{"ih", "dedup", "--help=false", "--", "x"}},
		{"help=maybe is left to the parser", []string{"ih", "dedup", "x", "--help=maybe"}, []string{"ih", "dedup", "--help=maybe", "--", "x"}},
		{"help after --- is a positional", []string{"ih", "dedup", "--", "-h"}, []string{"ih", "dedup", "--", "-h"}},
		{"help as a flag's value", []string{"ih", "dedup", "--now", "-h", "x"}, []string{"ih", "dedup", "--now", "-h", "--", "x"}},
		{"subcommand help", []string{"ih", "policy", "show", "--help"}, []string{"ih", "policy", "show", "--help"}},
		{"subcommand help after flags", []string{"ih", "policy", "--data", "D", "set", "jitter=1", "-h"}, []string{"ih", "policy", "set", "--help"}},
		{"subcommand flags go after it", []string{"ih", "policy", "--data", "D", "show", "--hash"}, []string{"ih", "policy", "show", "--data", "D", "--hash"}},
		{"subcommand positionals", []string{"ih", "policy", "set", "a=1", "--data", "D", "b=2"}, []string{"ih", "policy", "set", "--data", "D", "--", "a=1", "b=2"}},
		{"no subcommand", []string{"ih", "policy", "bogus", "--data", "D"}, []string{"ih", "policy", "--data", "D", "--", "bogus"}},
		{"parent help", []string{"ih", "policy", "-h"}, []string{"ih", "policy", "--help"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reorderArgs(a, tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHelpAnywhere asks every command and subcommand for help with
// --help or -h in front of, among and after positionals and flags: each
// prints its own help on stdout and exits 0.
func TestHelpAnywhere(t *testing.T) {
	type target struct{ path []string }
	var targets []target
	for _, c := range commands() {
		targets = append(targets, target{[]string{c.Name}})
		for _, s := range c.Subcommands {
			targets = append(targets, target{[]string{c.Name, s.Name}})
		}
	}
	for _, tg := range targets {
		for _, tail := range [][]string{
			{"--help"},
			{"-h"},
			{"x.parquet", "--help"},
			{"x.parquet", "-h", "y"},
			{"--data", "D", "a=1", "-h"},
		} {
			args := append(append([]string{"infohash"}, tg.path...), tail...)
			if len(tg.path) == 2 { // also with flags before the subcommand
				args = append([]string{"infohash", tg.path[0], "--data", "D", tg.path[1]}, tail...)
			}
			name := strings.Join(args[1:], " ")
			t.Run(name, func(t *testing.T) {
				var out, errb bytes.Buffer
				code := Main(args, strings.NewReader(""), &out, &errb)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q", code, errb.String())
				}
				want := "infohash " + strings.Join(tg.path, " ") + " - "
				if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "OPTIONS:") {
					t.Fatalf("stdout lacks %q:\n%s", want, out.String())
				}
			})
		}
	}
}

// TestErrorLineFollowsLogFormat: with --log-format json the final error
// is a JSON record (with the exit status) like the log lines before it;
// with text logs it is the usual "infohash: ..." line.
func TestErrorLineFollowsLogFormat(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.parquet")
	for _, tc := range []struct {
		name string
		args []string
		json bool
	}{
		{"text", []string{"infohash", "dedup", "--data", t.TempDir(), missing}, false},
		{"json", []string{"infohash", "dedup", "--log-format", "json", "--data", t.TempDir(), missing}, true},
		{"json, flag after", []string{"infohash", "dedup", "--data", t.TempDir(), missing, "--log-format=json"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tc.args, strings.NewReader(""), &out, &errb)
			if code != 2 {
				t.Fatalf("exit %d, stderr %s", code, errb.String())
			}
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			last := lines[len(lines)-1]
			var rec struct {
				Level string `json:"level"`
				Msg   string `json:"msg"`
				Exit  int    `json:"exit"`
			}
			isJSON := json.Unmarshal([]byte(last), &rec) == nil
			if isJSON != tc.json {
				t.Fatalf("last stderr line %q: JSON %v, want %v", last, isJSON, tc.json)
			}
			if tc.json && (rec.Level != "ERROR" || rec.Exit != 2 || !strings.Contains(rec.Msg, "missing.parquet")) {
				t.Fatalf("record %+v", rec)
			}
			if !tc.json && !strings.HasPrefix(last, "infohash: ") {
				t.Fatalf("last line %q", last)
			}
		})
	}
}

// TestHelpCommand: "infohash help [CMD [SUB]]", and "h", the alias the
// help lists, print the same help as "[CMD [SUB]] --help" on stdout
// (exit 0); a topic that is no command is the unknown command's usage
// error (exit 2, one line). "h" was refused as an unknown command,
// "help policy set" printed policy's help, and "help nosuch" exited 1.
func TestHelpCommand(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // the help's NAME line, or "" for none
		stderr string
	}{
		{"help", []string{"help"}, 0, "infohash - crawl", ""},
		{"h", []string{"h"}, 0, "infohash - crawl", ""},
		{"help help", []string{"help", "help"}, 0, "infohash - crawl", ""},
		{"help status", []string{"help", "status"}, 0, "infohash status - ", ""},
		{"h status", []string{"h", "status"}, 0, "infohash status - ", ""},
		{"h export", []string{"h", "export"}, 0, "infohash export - ", ""},
		{"help policy", []string{"help", "policy"}, 0, "infohash policy - ", ""},
		{"help policy set", []string{"help", "policy", "set"}, 0, "infohash policy set - ", ""},
		{"h policy show", []string{"h", "policy", "show"}, 0, "infohash policy show - ", ""},
		{"help nosuch", []string{"help", "nosuch"}, 2, "",
			"infohash: unknown command \"nosuch\" (infohash --help lists them)\n"},
		{"h nosuch", []string{"h", "nosuch"}, 2, "",
			"infohash: unknown command \"nosuch\" (infohash --help lists them)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, tt.args...)
			name, _, _ := strings.Cut(strings.TrimPrefix(stdout, "NAME:\n   "), "\n")
			if code != tt.code || stderr != tt.stderr || (tt.stdout == "") != (stdout == "") ||
				!strings.HasPrefix(name, tt.stdout) {
				t.Fatalf("exit %d, NAME %q, stderr %q; want exit %d, NAME %q…, stderr %q",
					code, name, stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}
