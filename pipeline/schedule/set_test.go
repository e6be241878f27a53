package schedule

import (
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
		{path: "jitter", value: "2", wantErr: "jitter: 2 is outside"},
		{path: "jitter", value: "x", wantErr: `jitter: "x" is not a number`},
		{path: "backoff.no_peers", value: "1h,30m", wantErr: "backoff.no_peers[1]: 30m is shorter"},
		{path: "backoff.no_peers[9]", value: "1h", wantErr: "no such list item"},
		{path: "backoff.slow", value: "1h", wantErr: "backoff.slow: unknown failure class"},
		{path: "plan.nope", value: "1", wantErr: `unknown field "nope"`},
		{path: "nope.x", value: "1", wantErr: "no such setting"},
		{path: "archive.min_attempts", value: "1.5", wantErr: "archive.min_attempts: want an integer"},
		{path: "plan.lease", value: "soon", wantErr: `plan.lease: duration "soon"`},
		{path: "plan..lease", value: "1h", wantErr: "empty name"},
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
