package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// helpOf returns the help text of a command path ("plan-retries",
// "policy show").
func helpOf(t *testing.T, path ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	args := append(append([]string{"infohash"}, path...), "--help")
	if code := Main(args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("%s --help: exit %d: %s", strings.Join(path, " "), code, errb.String())
	}
	return out.String()
}

// TestHelpDefaultsOnce checks that no flag states its default twice (a
// hand-written "(default: ...)" in Usage plus urfave/cli's own) and that
// flags whose default comes from the policy say so.
func TestHelpDefaultsOnce(t *testing.T) {
	for _, c := range commands() {
		paths := [][]string{{c.Name}}
		for _, s := range c.Subcommands {
			paths = append(paths, []string{c.Name, s.Name})
		}
		for _, p := range paths {
			for _, line := range strings.Split(helpOf(t, p...), "\n") {
				if strings.Count(line, "default") > 1 {
					t.Errorf("%s: default stated twice: %q", strings.Join(p, " "), line)
				}
			}
		}
	}
	tests := []struct{ cmd, flag, want string }{
		{"plan-retries", "--new-share", "(default: the policy's plan.new_share, 0.5 unless changed)"},
		{"plan-retries", "--lease", "(default: the policy's plan.lease, 2h unless changed)"},
		{"plan-retries", "--seed", "(default: the policy's seed, 0 unless changed)"},
		{"dedup", "--half-life", "(default: the policy's plan.activity_half_life, 1d unless changed)"},
		{"dedup", "--batch-hashes", "(default: "},
		{"plan-retries", "--limit", "(0: none, a dry run that counts what a pass would find due, the cold window's too, and leases nothing; without -o it writes nothing, with -o no jobs)"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd+" "+tt.flag, func(t *testing.T) {
			for _, line := range strings.Split(helpOf(t, tt.cmd), "\n") {
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
}

// TestHelpOffersStdoutOnlyWhereFree: --metrics-file and --stats-json
// offer "-" (stdout) in --help only on commands that take it; status
// prints its report there and refuses "-".
func TestHelpOffersStdoutOnlyWhereFree(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.Name, func(t *testing.T) {
			if len(c.Subcommands) > 0 {
				return // policy: no reports
			}
			seen := 0
			for _, line := range strings.Split(helpOf(t, c.Name), "\n") {
				f := strings.Fields(line)
				if len(f) < 2 || (f[0] != "--metrics-file" && f[0] != "--stats-json") || (f[1] != "FILE" && f[1] != "PATH") {
					continue
				}
				seen++
				offers := strings.Contains(line, "- for stdout")
				if offers == reportsOnStdout[c.Name] {
					t.Errorf("%s %s: offers - for stdout: %v; want %v", c.Name, f[0], offers, !offers)
				}
			}
			if seen == 0 {
				t.Errorf("%s --help lists no report flag", c.Name)
			}
		})
	}
}

// TestReadmeReportFlags checks README's lists of the commands that take
// --stats-json and --metrics-file against the commands' flags (wired as
// in New, subcommands with their command).
func TestReadmeReportFlags(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	const stagesSay = "The stages ("
	i := strings.Index(readme, stagesSay)
	if i < 0 {
		t.Fatalf("README does not list the stages (%q)", stagesSay)
	}
	list, rest, ok := strings.Cut(readme[i+len(stagesSay):], ")")
	if !ok || !strings.HasPrefix(rest, " take `--stats-json FILE`") {
		t.Fatalf("README: %q is not followed by the --stats-json sentence", stagesSay+list+")")
	}
	stages := strings.Split(list, ", ")
	metricsTakers := append(slices.Clone(stages), "status")
	if !strings.Contains(readme, "The stages and `status` take `--metrics-file PATH`") {
		t.Errorf("README does not say the stages and status take --metrics-file")
	}
	for _, c := range commands() {
		wire(c, c.Name)
		has := func(name string) bool {
			return slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
		}
		if got, want := has("stats-json"), slices.Contains(stages, c.Name); got != want {
			t.Errorf("%s: takes --stats-json %v, README says %v", c.Name, got, want)
		}
		if got, want := has("metrics-file"), slices.Contains(metricsTakers, c.Name); got != want {
			t.Errorf("%s: takes --metrics-file %v, README says %v", c.Name, got, want)
		}
		if !has("log-format") || !has("debug") {
			t.Errorf("%s: lacks --log-format or --debug, README says every command takes them", c.Name)
		}
	}
}

// TestReadmeSaysBusyAndWrongSchema: README names what dedup's and merge's
// summary line says of a file still being written, left for the next run
// (skipped_busy=N: TestStreamFileLockedWhileWritten checks the line), and
// that an observed_at typed DATE, TIME or DECIMAL is wrong schema
// (TestOptionalColumnTypes checks the refusals), beside the facts they
// qualify.
func TestReadmeSaysBusyAndWrongSchema(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		"dedup and merge skip FILE (exit 3, `skipped_busy=N`) while it is written",
		"timestamps of any unit (plain INT64: epoch ms; DATE, TIME, DECIMAL: wrong schema)",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README does not say %q", want)
		}
	}
}

// TestReadmeNamesRepeatCounters: README names both counters of capture's
// repeat rule where it states the rule, as capture --help does: the
// repeats dropped, and the pairs the full set evicted before their window
// ended (whose repeats were recorded again); and the cap of a hash's
// get_peers over all senders, with its counter.
func TestReadmeNamesRepeatCounters(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		"`repeats_dropped`; evicted early: `repeat_window_evicted`;",
		"a hash's past `--max-sightings-per-hash`, 32 a window over all senders: `hash_cap_dropped`)",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README does not say %q", want)
		}
	}
}

// TestDedupHelpSaysWrongSchema: dedup --help says, where it gives
// observed_at's accepted types, that one typed DATE, TIME, DECIMAL or a
// narrower integer is wrong schema (exit 2), as README does
// (TestOptionalColumnTypes and TestArrowColumnTypes check the refusals),
// in lines of the help's width.
func TestDedupHelpSaysWrongSchema(t *testing.T) {
	stdout, stderr, code := runMain(t, "dedup", "--help")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	const want = "observed_at (a timestamp of any unit, Spark's INT96 too, or a plain 64-bit integer of epoch milliseconds, signed or not, " +
		"from 2001 to 2200: else bad input; a DATE, TIME, DECIMAL or narrower integer is wrong schema, exit 2)"
	if !strings.Contains(strings.Join(strings.Fields(stdout), " "), want) {
		t.Errorf("dedup --help does not say %q", want)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.Contains(line, "DECIMAL") && len(line) > 80 {
			t.Errorf("a line of %d characters: %q", len(line), line)
		}
	}
}

// TestNoCommand: "infohash" alone is a usage error of one line that says
// where the help is; "infohash --help" prints the help on stdout, exit 0.
func TestNoCommand(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string // stdout: a part of it
	}{
		{"alone", nil, 2, "", "infohash: no command given; run 'infohash --help' for the commands\n"},
		{"--help", []string{"--help"}, 0, "EXIT STATUS:", ""},
		{"-h", []string{"-h"}, 0, "COMMANDS:", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, tt.args...)
			if code != tt.code || stderr != tt.stderr || !strings.Contains(stdout, tt.stdout) || (tt.stdout == "") != (stdout == "") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, stdout with %q, stderr %q", code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

// TestHelpExitStatus: every --help's description ends in an EXIT STATUS
// section (policy show and set had none) that lists exactly the statuses
// that command can end with: status and export take no lock and have no
// partial outcome, so they list neither 75 nor 3 (every command listed
// the same generic table). The top level lists them all.
func TestHelpExitStatus(t *testing.T) {
	want := map[string][]int{
		"":             {0, 1, 2, 3, 75, 130, 141},
		"capture":      {0, 1, 2, 3, 75, 130, 141},
		"dedup":        {0, 1, 2, 3, 75, 130, 141},
		"plan-retries": {0, 1, 2, 75, 130, 141},
		"fetch":        {0, 1, 2, 3, 75, 130, 141},
		"merge":        {0, 1, 2, 3, 75, 130, 141},
		"export":       {0, 1, 2, 130, 141},
		"status":       {0, 1, 2, 130, 141},
		"policy":       {0, 1, 2, 75, 130, 141},
		"policy show":  {0, 1, 2, 141},
		"policy set":   {0, 1, 2, 75, 130},
		"clock":        {0, 2, 141},
	}
	for _, p := range helpPaths() {
		name := strings.Join(p, " ")
		t.Run("infohash "+name, func(t *testing.T) {
			help := helpOf(t, p...)
			desc := strings.Index(help, "DESCRIPTION:")
			exit := strings.Index(help, "EXIT STATUS:")
			if len(p) > 0 && (desc < 0 || exit < desc) {
				t.Fatalf("no DESCRIPTION with EXIT STATUS:\n%s", help)
			}
			if got := exitCodesOf(t, help); !slices.Equal(got, want[name]) {
				t.Errorf("EXIT STATUS lists %v, want %v:\n%s", got, want[name], help[exit:])
			}
		})
	}
	// README's table is the top level's.
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(b), "\n## Exit statuses\n")
	table, _, _ = strings.Cut(table, "\n## ")
	var readme []int
	for _, m := range regexp.MustCompile(`(?m)^\| ([0-9]+) \|`).FindAllStringSubmatch(table, -1) {
		n, _ := strconv.Atoi(m[1])
		readme = append(readme, n)
	}
	if !slices.Equal(readme, want[""]) {
		t.Errorf("README's exit statuses are %v, want %v", readme, want[""])
	}
}

// exitCodesOf returns the statuses an --help's EXIT STATUS section
// lists, in order: the rows' first words (a row's text wraps under
// itself, indented further).
func exitCodesOf(t *testing.T, help string) []int {
	t.Helper()
	i := strings.Index(help, "EXIT STATUS:")
	if i < 0 {
		t.Fatalf("no EXIT STATUS:\n%s", help)
	}
	lineStart := strings.LastIndex(help[:i], "\n") + 1
	row := regexp.MustCompile(`^` + help[lineStart:i] + `   ([0-9]+) +\S`)
	var codes []int
	for _, line := range strings.Split(help[i:], "\n")[1:] {
		if strings.TrimSpace(line) == "" {
			break
		}
		if m := row.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			codes = append(codes, n)
		}
	}
	return codes
}

// TestPlanLimitZero: plan-retries --limit 0 does what its help says: a
// dry run that counts the due hashes, plans and leases nothing, and
// commits no snapshot. With -o it writes an empty jobs file; without -o
// (which it required: exit 2) it writes nothing, and its summary line
// says what is due.
func TestPlanLimitZero(t *testing.T) {
	for _, tt := range []struct {
		name string
		out  string // -o; "" for none
	}{
		{"-o FILE", "jobs.parquet"},
		{"no -o", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, data := seedDataset(t)
			before, err := os.ReadFile(filepath.Join(data, "CURRENT"))
			if err != nil {
				t.Fatal(err)
			}
			work := t.TempDir() // holds only what the run writes
			stats := filepath.Join(dir, "stats.json")
			args := []string{"plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "--limit", "0", "--stats-json", stats}
			if tt.out != "" {
				args = append(args, "-o", filepath.Join(work, tt.out))
			}
			stdout, stderr, code := runMain(t, args...)
			if code != 0 || stdout != "" {
				t.Fatalf("exit %d, %d bytes on stdout: %s", code, len(stdout), stderr)
			}
			if !strings.Contains(stderr, `msg="plan-retries: done" planned=0`) || !strings.Contains(stderr, " due=2 due_unplanned=2 ") {
				t.Errorf("stderr lacks the summary line saying 0 planned of 2 due:\n%s", stderr)
			}
			var st struct{ Planned, Due int }
			if b, err := os.ReadFile(stats); err != nil || json.Unmarshal(b, &st) != nil || st.Planned != 0 || st.Due != 2 {
				t.Fatalf("stats %+v (%v), want 0 planned of 2 due", st, err)
			}
			after, err := os.ReadFile(filepath.Join(data, "CURRENT"))
			if err != nil || !bytes.Equal(before, after) {
				t.Fatalf("CURRENT %q, was %q (%v): a dry run committed", after, before, err)
			}
			ents, err := os.ReadDir(work)
			if err != nil {
				t.Fatal(err)
			}
			if tt.out == "" {
				if len(ents) != 0 {
					t.Fatalf("a dry run without -o wrote %s", ents[0].Name())
				}
				return
			}
			r, err := rowio.Open[schema.Job](filepath.Join(work, tt.out), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if rows, err := r.ReadAll(); err != nil || len(rows) != 0 || len(ents) != 1 {
				t.Fatalf("%d jobs (%v), %d files; want none in the one file", len(rows), err, len(ents))
			}
		})
	}
}

// helpPaths lists every command path whose --help a user can ask for:
// the top level (empty), each command, helpers too, and each
// subcommand.
func helpPaths() [][]string {
	paths := [][]string{{}}
	for _, c := range append(commands(), helperCommands()...) {
		paths = append(paths, []string{c.Name})
		for _, s := range c.Subcommands {
			paths = append(paths, []string{c.Name, s.Name})
		}
	}
	return paths
}

// bareValue matches a flag shown with urfave/cli's placeholder of last
// resort ("--tier value", "-f value"), which says nothing of what the
// flag takes.
var bareValue = regexp.MustCompile(`(^|[\s,\[])--?[a-z][a-z0-9-]* value([\s,\]]|$)`)

// TestHelpNoBareValue: every flag that takes a value names it in --help
// (`FORMAT`, text|json, N…), not "value".
func TestHelpNoBareValue(t *testing.T) {
	for _, p := range helpPaths() {
		t.Run("infohash "+strings.Join(p, " "), func(t *testing.T) {
			for _, line := range strings.Split(helpOf(t, p...), "\n") {
				if bareValue.MatchString(line) {
					t.Errorf("bare value placeholder: %q", strings.TrimSpace(line))
				}
			}
		})
	}
}

// TestHelpHasExamples: every --help's USAGE gives, after its synopsis,
// at least one runnable example (policy show had none).
func TestHelpHasExamples(t *testing.T) {
	for _, p := range helpPaths() {
		t.Run("infohash "+strings.Join(p, " "), func(t *testing.T) {
			_, usage, _ := strings.Cut(helpOf(t, p...), "\nUSAGE:\n")
			n := 0
			for _, line := range strings.Split(usage, "\n") {
				if line != "" && line[0] != ' ' {
					break // the next section ("DESCRIPTION:")
				}
				if strings.HasPrefix(strings.TrimSpace(line), "infohash ") || strings.Contains(line, "| infohash ") {
					n++
				}
			}
			if n < 2 {
				t.Errorf("USAGE has its synopsis and no example:\n%s", usage)
			}
		})
	}
}

// TestHelpSaysIgnoredFailuresPenalisePeers: merge --help and README say
// that a late (or stale) failure, ignored for its hash, still penalises
// its peers' endpoints, and why (they said only "ignored and counted",
// while merge logged late_failures_ignored=28 peer_penalties=28).
func TestHelpSaysIgnoredFailuresPenalisePeers(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, tt := range []struct{ doc, text, want string }{
		{"merge --help", helpOf(t, "merge"), "such a failure's peer_failures still penalise those endpoints in DIR/peers/ (counted in peer_penalties), since a peer that failed did so whichever lease asked"},
		{"README", string(readme), "peer-level failures penalise the endpoint in `peers/`, not the swarm (even in results ignored below)"},
	} {
		if !strings.Contains(flat(tt.text), tt.want) {
			t.Errorf("%s does not say %q", tt.doc, tt.want)
		}
	}
}

// shellUse and shellSet find a shell variable's uses ("$NOW", "${NOW}")
// and assignments ("NOW=...") in an example.
var (
	shellUse = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	shellSet = regexp.MustCompile(`(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=`)
)

// unsetVars returns the variables that script uses before it sets them.
func unsetVars(script string) []string {
	set := map[string]int{}
	for _, m := range shellSet.FindAllStringSubmatchIndex(script, -1) {
		if name := script[m[2]:m[3]]; set[name] == 0 {
			set[name] = m[2] + 1
		}
	}
	var unset []string
	for _, m := range shellUse.FindAllStringSubmatchIndex(script, -1) {
		if at := set[script[m[2]:m[3]]]; at == 0 || at > m[0] {
			unset = append(unset, script[m[2]:m[3]])
		}
	}
	return unset
}

// TestExamplesSetTheirVariables: every --help example (a line of USAGE)
// and every README code block sets each variable it uses ("$NOW") before
// using it, so that it runs as written (fetch's used a $NOW it never set:
// "--now: empty", exit 2).
func TestExamplesSetTheirVariables(t *testing.T) {
	for _, p := range helpPaths() {
		_, usage, _ := strings.Cut(helpOf(t, p...), "\nUSAGE:\n")
		for _, line := range strings.Split(usage, "\n") {
			if line != "" && line[0] != ' ' {
				break
			}
			if unset := unsetVars(line); len(unset) > 0 {
				t.Errorf("infohash %s --help: %v not set in %q", strings.Join(p, " "), unset, strings.TrimSpace(line))
			}
		}
	}
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, block := range strings.Split(string(b), "```") {
		if i%2 == 1 {
			if unset := unsetVars(block); len(unset) > 0 {
				t.Errorf("README: %v not set in the example:\n%s", unset, block)
			}
		}
	}
}
