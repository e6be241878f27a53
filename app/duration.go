package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

// durationWant says what a duration flag takes, in its error messages.
const durationWant = "want a duration such as 90m, 2h or 1d"

// parseFlagDuration parses a duration flag's text as the policy does
// (schedule.ParseDuration: w, d, h, m, s, ms, us, ns, fractions), plus
// what time.ParseDuration also takes: a sign and "µs". A negative value
// parses, so that the flag's own check can say why it is refused.
func parseFlagDuration(s string) (time.Duration, error) {
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	s = strings.NewReplacer("µs", "us", "μs", "us").Replace(s)
	d, err := schedule.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if neg {
		d = -d
	}
	return d, nil
}

// durationValue is the cli.Generic value of every duration flag. Set
// keeps a bad value's error instead of returning it (the flag package
// would wrap it as `invalid value "1d" for flag -lease: ...`):
// checkDurations reports it before the command runs.
type durationValue struct {
	d   time.Duration
	raw string
	err error
}

// Set parses s, keeping the error for checkDurations.
func (v *durationValue) Set(s string) error {
	v.raw = s
	v.d, v.err = parseFlagDuration(s)
	return nil
}

// String renders the value as the policy writes durations ("10m", "1d").
func (v *durationValue) String() string {
	if v == nil {
		return ""
	}
	return schedule.Duration(v.d).String()
}

// durationFlag is a flag taking a duration as the policy writes them
// ("90m", "1d12h", "2w"), with default def. Read it with flagDuration.
func durationFlag(name string, def time.Duration, usage string) *cli.GenericFlag {
	return &cli.GenericFlag{Name: name, Value: &durationValue{d: def}, Usage: usage}
}

// flagDuration returns the value of the duration flag name (0 when c's
// command has none).
func flagDuration(c *cli.Context, name string) time.Duration {
	if v, ok := c.Generic(name).(*durationValue); ok && v != nil {
		return v.d
	}
	return 0
}

// checkDurations returns a usage error for the first duration flag of c's
// command whose value (from the command line or an environment variable)
// did not parse.
func checkDurations(c *cli.Context) error {
	if c.Command == nil {
		return nil
	}
	for _, f := range c.Command.Flags {
		g, ok := f.(*cli.GenericFlag)
		if !ok {
			continue
		}
		if v, ok := c.Generic(g.Name).(*durationValue); ok && v != nil && v.err != nil {
			return exitcode.BadInput(fmt.Errorf("--%s: %q: %s", g.Name, v.raw, durationWant))
		}
	}
	return nil
}

// showDuration renders d for messages as the flags take it ("-1h", "0s").
func showDuration(d time.Duration) string { return schedule.Duration(d).String() }

// policyDurationFlag is a duration flag whose default comes from the
// policy: defaultText says which setting, and the flag reads 0 unless set.
func policyDurationFlag(name, usage, defaultText string) *cli.GenericFlag {
	f := durationFlag(name, 0, usage)
	f.DefaultText = defaultText
	return f
}

// lockWaitFlag is the --lock-wait flag of every command that commits.
func lockWaitFlag() *cli.GenericFlag {
	return durationFlag("lock-wait", 0, "wait up to `D` in all (the run's commits and retries together) for other writers instead of failing (exit 75)")
}

// showGap renders how far apart a and b are (whichever is later), for
// messages that print the gap between --now and the wall clock: as
// showDuration does, rounded to the hour, when it fits a time.Duration;
// in whole years ("more than 373 years") when it does not (past about
// 292 years), where Sub gives the largest Duration (106751d23h47m16s...)
// whatever the gap.
func showGap(a, b time.Time) string {
	if b.Before(a) {
		a, b = b, a
	}
	if d := b.Sub(a); a.Add(d).Equal(b) {
		return showDuration(d.Round(time.Hour))
	}
	years := b.Year() - a.Year()
	if a.AddDate(years, 0, 0).After(b) {
		years--
	}
	return fmt.Sprintf("more than %d years", years)
}
