package schedule

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestSet(t *testing.T) {
	tests := []struct {
		path, value string
		check       func(p Policy) bool
		wantErr     string
	}{
		{path: "jitter", value: "0.1", check: func(p Policy) bool { return p.Jitter == 0.1 }},
		{path: "seed", value: "18446744073709551615", check: func(p Policy) bool { return p.Seed == 1<<64-1 }},
		{path: "backoff.no_peers", value: "1h, 1d,30d", check: func(p Policy) bool {
			return len(p.Backoff["no_peers"]) == 3 && time.Duration(p.Backoff["no_peers"][1]) == Day
		}},
		{path: "backoff.timeout[5]", value: "60d", check: func(p Policy) bool { return time.Duration(p.Backoff["timeout"][5]) == 60*Day }},
		{path: "reactivation.reset_schedule", value: "true", check: func(p Policy) bool { return p.Reactivation.ResetSchedule }},
		{path: "reactivation.classes", value: "no_peers", check: func(p Policy) bool { return len(p.Reactivation.Classes) == 1 }},
		{path: "peer_penalty.base.rejected", value: "0", check: func(p Policy) bool { return p.PeerPenalty.Base["rejected"] == 0 }},
		{path: "plan.lease", value: "90m", check: func(p Policy) bool { return time.Duration(p.Plan.Lease) == 90*time.Minute }},
		{path: "archive.min_attempts", value: "10", check: func(p Policy) bool { return p.Archive.MinAttempts == 10 }},
		{path: "archive.new_unseen", value: "0", check: func(p Policy) bool { return p.Archive.NewUnseen == 0 }},
		{path: "jitter", value: "2", wantErr: "jitter: 2 is outside"},
		{path: "jitter", value: "x", wantErr: `"jitter": "x" is not a number`},
		{path: "backoff.no_peers", value: "1h,30m", wantErr: "backoff.no_peers[1]: 30m is shorter"},
		{path: "backoff.no_peers[9]", value: "1h", wantErr: "no such list item"},
		{path: "backoff.slow", value: "1h", wantErr: "backoff.slow: unknown failure class"},
		{path: "plan.nope", value: "1", wantErr: `"plan.nope": unknown setting (settable: plan.new_share, plan.cold_share, plan.cold_partitions, plan.lease, plan.activity_half_life, plan.new_overdue_after, plan.new_overdue_share)`},
		{path: "nope.x", value: "1", wantErr: `"nope.x": unknown setting (settable: version, seed, jitter, retry_soon, backoff.CLASS, bad_metadata.sources,`},
		{path: "nosuch", value: "1", wantErr: `"nosuch": unknown setting (settable: version, seed, jitter,`},
		{path: "nosuch", value: "x", wantErr: `"nosuch": unknown setting`},
		{path: "reactivation.nosuch[0]", value: "1h", wantErr: `"reactivation.nosuch[0]": unknown setting (settable: reactivation.classes,`},
		{path: "jitter.x", value: "1", wantErr: `"jitter.x": no such setting ("jitter" is not an object)`},
		{path: "backoff.no_peers.x", value: "1", wantErr: `no such setting ("no_peers" is not an object)`},
		{path: "plan", value: "1", wantErr: `"plan": cannot be set from the command line; edit policy.json`},
		{path: "backoff", value: "1h", wantErr: `"backoff": cannot be set from the command line; edit policy.json`},
		{path: "archive.min_attempts", value: "1.5", wantErr: "archive.min_attempts: want an integer"},
		{path: "plan.lease", value: "soon", wantErr: `plan.lease: duration "soon"`},
		{path: "plan..lease", value: "1h", wantErr: "empty name"},
		{path: "reactivation.classes", value: "zzz,no_peers", wantErr: `reactivation.classes: "zzz" is not a failure class`},
		{path: "reactivation.classes", value: "no_peers,timeout,no_peers", wantErr: `reactivation.classes: "no_peers" is listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.path+"="+tt.value, func(t *testing.T) {
			p, err := Set(Default(), tt.path, tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(p) {
				t.Errorf("not set: %s", p.JSON())
			}
		})
	}
}

// TestAssignRepairs starts from an invalid policy: Set refuses any change
// (it validates the whole result), Assign applies it, and the repaired
// policy validates.
func TestAssignRepairs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(Path(dir), []byte(`{"jitter":5,"plan":{"lease":"0"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "jitter: 5 is outside") {
		t.Fatalf("Load: %v", err)
	}
	p, err := LoadUnvalidated(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Set(p, "jitter", "0.1"); err == nil || !strings.Contains(err.Error(), "plan.lease: must be positive") {
		t.Fatalf("Set on an invalid policy: %v", err)
	}
	if p, err = Assign(p, "jitter", "0.1"); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "plan.lease") {
		t.Fatalf("half repaired: %v", err)
	}
	if p, err = Assign(p, "plan.lease", "1h"); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil || p.Jitter != 0.1 || p.Plan.Lease != Duration(time.Hour) {
		t.Fatalf("repaired: %v\n%s", err, p.JSON())
	}
	if _, err := os.Stat(Path(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Path(dir), []byte(`{"jitter":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadUnvalidated(dir); err == nil || !strings.Contains(err.Error(), "jitter: want a number") {
		t.Fatalf("LoadUnvalidated of a malformed file: %v", err)
	}
}

// TestSettingsAreSettable assigns every path Settings lists (a map's
// CLASS as a real class) its current value.
func TestSettingsAreSettable(t *testing.T) {
	p := Default()
	values := map[string]string{"version": "1", "seed": "7", "jitter": "0.1", "bad_metadata.sources": "3",
		"peer_penalty.factor": "3", "reactivation.classes": "no_peers", "reactivation.reset_schedule": "true",
		"archive.min_attempts": "4", "plan.new_share": "0.4", "plan.cold_share": "0.1", "plan.cold_partitions": "8",
		"reactivation.spread": "1h", "plan.lease": "3h", "plan.new_overdue_share": "0.3",
		"reactivation.announce_min_interval": "1d"}
	list := Settings()
	if len(list) < 20 {
		t.Fatalf("Settings() = %q", list)
	}
	for _, path := range list {
		v, ok := values[path]
		if !ok {
			v = "9d"
		}
		path = strings.ReplaceAll(path, "CLASS", "timeout")
		if _, err := Set(p, path, v); err != nil {
			t.Errorf("Set(%s=%s): %v", path, v, err)
		}
	}
}

// FuzzSet checks that any path and value either fail with an error or
// yield a valid policy.
func FuzzSet(f *testing.F) {
	f.Add("jitter", "0.1")
	f.Add("backoff.no_peers[2]", "9h")
	f.Add("reactivation.classes", "no_peers,timeout")
	f.Add("peer_penalty.base.rejected", "0")
	f.Add("seed", "18446744073709551615")
	f.Add("a[", "x")
	f.Fuzz(func(t *testing.T, path, value string) {
		p, err := Set(Default(), path, value)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Set(%q, %q) gave an invalid policy: %v", path, value, err)
		}
	})
}

// TestErrorsOneLine: a setting's path or a map key holding a newline, from
// "policy set" or from policy.json, is quoted in the error, which stays on
// one line (Assign printed the path raw, and Validate and a bad duration
// the key: a two-line error).
func TestErrorsOneLine(t *testing.T) {
	set := func(path, value string) func() error {
		return func() error { _, err := Set(Default(), path, value); return err }
	}
	parse := func(file string) func() error {
		return func() error { _, err := Parse([]byte(file), "policy.json"); return err }
	}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"unknown setting", set("nos\nuch", "1"), `"nos\nuch": unknown setting (settable: version,`},
		{"unknown setting in an object", set("plan.\nlease", "1h"), `"plan.\nlease": unknown setting (settable: plan.new_share,`},
		{"not an object", set("jitter.x\n", "1"), `"jitter.x\n": no such setting ("jitter" is not an object)`},
		{"bad list index", set("backoff.no_peers[9\n]", "1h"), `"backoff.no_peers[9\n]": bad list index`},
		{"no such list item", set("backoff.no_peers\n[9]", "1h"), `"backoff.no_peers\n[9]": no such list item`},
		{"not a number", set("jitter", "0.1\n"), `"jitter": "0.1\n" is not a number`},
		{"cannot be set", set("plan", "\n"), `"plan": cannot be set from the command line`},
		{"unknown class set", set("backoff.no\npeers", "1h"), `backoff["no\npeers"]: unknown failure class (known: `},
		{"bad duration set", set("backoff.no\npeers", "soon"), `backoff["no\npeers"][0]: duration "soon"`},
		{"unknown peer class set", set("peer_penalty.base.x\ny", "1h"), `peer_penalty.base["x\ny"]: unknown failure class`},
		{"unknown class in the file", parse(`{"backoff": {"no\npeers": ["1h"]}}`), `backoff["no\npeers"]: unknown failure class`},
		{"bad duration in the file", parse(`{"backoff": {"a.b\n": ["1h", "soon"]}}`), `backoff["a.b\n"][1]: duration "soon"`},
		{"unknown peer class in the file", parse(`{"peer_penalty": {"base": {"\n": "1h"}}}`), `peer_penalty.base["\n"]: unknown failure class`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, tt.want) {
				t.Errorf("err = %q, want one line with %s", msg, tt.want)
			}
		})
	}
}
