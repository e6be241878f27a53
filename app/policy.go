package app

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

func policyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "show or change the dataset's retry policy (DIR/policy.json)",
		UsageText: `infohash policy show --data DIR [--hash]
   infohash policy set --data DIR PATH=VALUE...

   infohash policy show --data ./ih
   infohash policy set --data ./ih jitter=0.1 backoff.no_peers=30m,2h,8h,1d,7d,30d
   infohash policy set --data ./ih reactivation.reset_schedule=true plan.lease=90m
   infohash policy set --data ./ih archive.new_unseen=0   # keep never-tried hashes hot however long unseen
   infohash policy set --data ./ih plan.new_overdue_after=3d plan.new_overdue_share=0.2   # default 7d, 0.1
   infohash policy set --data ./ih reactivation.announce_min_interval=1d   # default 12h, at most min_interval`,
		Description: `The policy is read by every stage that schedules: dedup (reactivation),
plan-retries and merge. dedup writes DIR/policy.json with the documented
defaults when the dataset has none; until then plan-retries and merge use
(and "show" prints) the defaults without writing the file. "set" writes
the whole file atomically.
Each commit records the policy it ran under (a writer running as "set"
replaces it re-applies its work under the new one), and --hash prints
its fingerprint: the "policy" that plan-retries' and merge's --stats-json
and their "policy saved" log line carry.

PATH is the setting's JSON path as errors name it (backoff.no_peers,
backoff.no_peers[2], peer_penalty.base.rejected); an unknown PATH is
refused with the list of settings. Lists take comma-separated items;
durations read like 30m, 8h, 1d, 7d. All the assignments are applied to
the file as it is and the result is validated once: an invalid result is
refused with the reason and nothing is written, and a file that breaks a
rule can be repaired with set. "set" takes the dataset's writer lock
(exit 75 while another writer holds it; --lock-wait waits). DIR must
exist (mkdir it to set a policy before the first dedup); "set" refuses a
folder dedup would not make a dataset in (not one, and not empty: exit 2).
The file may also be edited by hand: fields left out keep their defaults
(a file written before archive.new_unseen existed archives never-tried
hashes unseen 90 days, the default; set it to 0 to keep them hot; one
written before plan.new_overdue_after and plan.new_overdue_share existed
gives the share 0.1 of the new hashes' jobs to never-tried hashes due over
7 days, oldest first; a share of 0 turns that off; one written before
reactivation.announce_min_interval existed lets an announce_peer
reactivate a hash 12h after its last reactivation, where any other
sighting waits reactivation.min_interval, 7d). Older binaries refuse a
file naming a setting they do not know.

` + exitHelp("policy"),
		ArgsUsage: "show | set PATH=VALUE...",
		Flags:     []cli.Flag{dataFlag},
		Subcommands: []*cli.Command{
			{
				Name:  "show",
				Usage: "print the policy in force (DIR/policy.json, or the defaults)",
				UsageText: `infohash policy show --data DIR [--hash]

   infohash policy show --data ./ih                    # the whole policy as JSON
   infohash policy show --data ./ih | jq .backoff      # the backoff schedule per failure class
   infohash policy show --data ./ih --hash             # its fingerprint, as plan-retries' and merge's --stats-json carry it`,
				Description: `Prints the policy in force on stdout as JSON: DIR/policy.json with the
fields it leaves out filled in from the defaults (all of them when there is
no file). --hash prints only its fingerprint (the "policy" of plan-retries'
and merge's --stats-json: equal for equal policies however written). A file
that breaks a rule is refused (exit 2) with the reason; "policy set" can
repair it. DIR must exist and hold a dataset or be a folder dedup would
make one in (else exit 2). It takes no lock and writes nothing.

` + exitHelp("policy show"),
				Flags:  []cli.Flag{dataFlag, &cli.BoolFlag{Name: "hash", Usage: "print only the policy's fingerprint"}},
				Action: policyShow,
			},
			{
				Name:      "set",
				Usage:     "change settings of DIR/policy.json",
				ArgsUsage: "PATH=VALUE...",
				UsageText: `infohash policy set --data DIR PATH=VALUE...

   infohash policy set --data ./ih jitter=0.1 backoff.no_peers=30m,2h,8h,1d,7d,30d`,
				Description: `Applies every PATH=VALUE to DIR/policy.json as it is (the defaults when
there is none), validates the result once and writes the whole file
atomically; an invalid result is refused with the reason and nothing is
written (exit 2). PATH is the setting's JSON path as errors name it
(backoff.no_peers, backoff.no_peers[2], peer_penalty.base.rejected); an
unknown PATH is refused with the list of settings. Lists take
comma-separated items; durations read like 30m, 8h, 1d, 7d. It takes the
dataset's writer lock (exit 75 while another writer holds it; --lock-wait
waits). DIR must exist (mkdir it to set a policy before the first dedup)
and be a dataset or a folder dedup would make one in: a folder of other
files is refused (exit 2) and nothing is written there.

` + exitHelp("policy set"),
				Flags: []cli.Flag{dataFlag,
					lockWaitFlag()},
				Action: policySet,
			},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return exitcode.BadInput(errors.New("policy: say show or set PATH=VALUE..."))
			}
			return exitcode.BadInput(fmt.Errorf("policy: %q is not show or set", c.Args().First()))
		},
	}
}

func policyShow(c *cli.Context) error {
	if c.NArg() > 0 {
		return exitcode.BadInput(fmt.Errorf("policy show: unexpected argument %q (the dataset is --data DIR)", c.Args().First()))
	}
	data, err := policyDir(c)
	if err != nil {
		return err
	}
	if err := showable(data); err != nil {
		return err
	}
	p, err := schedule.Load(data)
	if errors.As(err, new(*schedule.FieldError)) {
		return exitcode.BadInput(fmt.Errorf("%w (policy set PATH=VALUE can repair it)", err))
	}
	if err != nil {
		return exitcode.BadInput(err)
	}
	_, serr := os.Stat(schedule.Path(data))
	slog.Debug("policy show: read", "file", schedule.Path(data), "from_file", serr == nil, "hash", p.Hash())
	if c.Bool("hash") {
		_, err = fmt.Fprintln(c.App.Writer, p.Hash())
		return err
	}
	_, err = c.App.Writer.Write(p.JSON())
	return err
}

// showable refuses, as status and export do, a folder data that holds
// no dataset unless dedup would make one there (an empty one, or one
// policy set wrote policy.json into first: dataset.Creatable): it showed
// the defaults for any folder, exit 0, while policy set refused it.
func showable(data string) error {
	if _, err := os.Stat(filepath.Join(data, "CURRENT")); err == nil {
		return nil
	}
	err := dataset.Creatable(data)
	if nested, ok := errors.AsType[*dataset.NestedError](err); ok {
		return exitcode.BadInput(fmt.Errorf("policy show: dataset: %s: %w; it lies inside the dataset %s: give that folder", data, dataset.ErrNotDataset, nested.Outer))
	}
	if errors.Is(err, dataset.ErrNotEmpty) {
		return exitcode.BadInput(fmt.Errorf("policy show: dataset: %s: %w", data, dataset.ErrNotDataset))
	}
	if err != nil {
		return fmt.Errorf("policy show: %w", err)
	}
	return nil
}

// policySet applies every PATH=VALUE to the file as it is (valid or not)
// and validates the result once, under the dataset's writer lock.
func policySet(c *cli.Context) error {
	args := c.Args().Slice()
	if c.String("data") == "" {
		// "policy set DIR k=v": a stray DIR, not a PATH=VALUE to refuse.
		for _, a := range args {
			if !strings.Contains(a, "=") {
				return exitcode.BadInput(fmt.Errorf("policy set: unexpected argument %q (the dataset is --data DIR)", a))
			}
		}
	}
	data, err := policyDir(c)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return exitcode.BadInput(errors.New("policy set: give at least one PATH=VALUE"))
	}
	type assignment struct{ path, value string }
	var as []assignment
	for _, a := range args {
		path, value, ok := strings.Cut(a, "=")
		if !ok {
			return exitcode.BadInput(fmt.Errorf("policy set: %q is not PATH=VALUE", a))
		}
		as = append(as, assignment{path, value})
	}
	// LOCK and policy.json are a dataset's: not among the user's files.
	if err := dataset.Creatable(data); err != nil {
		return fmt.Errorf("policy set: %w", err)
	}
	// A dataset this user cannot write (a read-only mount, a folder
	// without write permission) is said so in one line, as a writer's
	// Open says it, rather than as open(2)'s error on DIR/LOCK.
	if err := unix.Access(data, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("policy set: dataset %s is not writable: %w; policy.json cannot be written there (policy show only reads it)", data, err)
	}
	l, err := dataset.LockWriter(c.Context, data, flagDuration(c, "lock-wait"))
	if err != nil {
		return fmt.Errorf("policy set: %w", err)
	}
	defer l.Release()
	p, err := schedule.LoadUnvalidated(data)
	if err != nil {
		return exitcode.BadInput(fmt.Errorf("policy set: %w", err))
	}
	slog.Debug("policy set: read", "file", schedule.Path(data), "hash", p.Hash(), "assignments", len(as))
	for _, a := range as {
		if p, err = schedule.Assign(p, a.path, a.value); err != nil {
			return exitcode.BadInput(fmt.Errorf("policy set: %w", err))
		}
	}
	if err := p.Validate(); err != nil {
		return exitcode.BadInput(fmt.Errorf("policy set: %s: %w (nothing written)", schedule.Path(data), err))
	}
	if err := schedule.Save(data, p); err != nil {
		return err
	}
	slog.Info("policy saved", "file", schedule.Path(data), "hash", p.Hash())
	return nil
}

// policyDir returns --data, which must be an existing directory: a
// mistyped path is an error, not a dataset with the default policy.
func policyDir(c *cli.Context) (string, error) {
	data, err := requireData(c)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(data)
	if err != nil || !info.IsDir() {
		hint := "" // set: the help's remedy, on the line that needs it
		if c.Command.Name == "set" {
			hint = " (to set a policy before the first dedup, mkdir it first)"
		}
		return "", exitcode.BadInput(fmt.Errorf("policy %s: dataset: %s: %w%s", c.Command.Name, data, dataset.ErrNoFolder, hint))
	}
	return data, nil
}
