package schedule

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	goldentest.Check(t, path, got, *update)
}

func TestDefaultPolicyGolden(t *testing.T) {
	p := Default()
	if err := p.Validate(); err != nil {
		t.Fatalf("default policy is invalid: %v", err)
	}
	golden(t, "default_policy.json", p.JSON())
	golden(t, "default_policy.hash", []byte(p.Hash()+"\n"))
}

func TestDefaultScheduleIsTheSeeds(t *testing.T) {
	want := []time.Duration{30 * time.Minute, 2 * time.Hour, 8 * time.Hour, Day, 7 * Day, 30 * Day}
	p := Default()
	for _, c := range []string{"no_peers", "connect_failed", "timeout"} {
		for i, w := range want {
			if got := time.Duration(p.Delay(c, int32(i))); got != w {
				t.Errorf("%s step %d = %v, want %v", c, i, got, w)
			}
		}
		if got := time.Duration(p.Delay(c, 50)); got != 30*Day {
			t.Errorf("%s step 50 = %v, want the last step to repeat (30d)", c, got)
		}
	}
}

func TestPolicyRoundTrip(t *testing.T) {
	p := Default()
	p.Seed = 1<<64 - 1 // survives JSON exactly
	p.Jitter = 0.35
	p.Backoff["no_peers"] = []Duration{Duration(time.Minute), Duration(time.Hour)}
	p.Reactivation.ResetSchedule = true
	p.Reactivation.Classes = []string{"timeout", "no_peers"}
	dir := t.TempDir()
	if err := Save(dir, p); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p.canonical()) {
		t.Fatalf("round trip changed the policy:\n got %+v\nwant %+v", got, p.canonical())
	}
	if got.Hash() != p.Hash() {
		t.Fatalf("hash changed over a round trip")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != FileName {
		t.Fatalf("Save left %v in the directory, want only %s", entries, FileName)
	}
}

func TestLoadMissingIsDefault(t *testing.T) {
	p, err := Load(t.TempDir())
	if err != nil || p.Hash() != Default().Hash() {
		t.Fatalf("Load of a dataset without policy.json = %v; want the default", err)
	}
}

// TestSaveDefaultKeepsAPolicySet: the defaults a reader writes into a new
// dataset never replace a policy written before them.
func TestSaveDefaultKeepsAPolicySet(t *testing.T) {
	dir := t.TempDir()
	custom := Default()
	custom.Jitter = 0.05
	if err := Save(dir, custom); err != nil {
		t.Fatal(err)
	}
	if err := SaveDefault(dir); err != nil {
		t.Fatal(err)
	}
	if p, err := Load(dir); err != nil || p.Hash() != custom.Hash() {
		t.Fatalf("after SaveDefault: %v, jitter %v; want the policy set before (jitter 0.05)", err, p.Jitter)
	}
	empty := t.TempDir()
	if err := SaveDefault(empty); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(Path(empty)); err != nil || !bytes.Equal(got, Default().JSON()) {
		t.Fatalf("SaveDefault on a new dataset wrote %q, %v", got, err)
	}
}

// TestSaveKeepsLinkAndMode: a policy.json that is a symbolic link to a
// managed file keeps the link (its target gets the new policy), and a
// replaced file keeps its mode.
func TestSaveKeepsLinkAndMode(t *testing.T) {
	dir := t.TempDir()
	managed := filepath.Join(t.TempDir(), "managed.json")
	if err := os.WriteFile(managed, Default().JSON(), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(managed, Path(dir)); err != nil {
		t.Fatal(err)
	}
	p := Default()
	p.Jitter = 0.05
	if err := Save(dir, p); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(Path(dir)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("policy.json is no longer a link: %v", err)
	}
	fi, err := os.Stat(managed)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("the linked file: %v, mode %v; want 0640", err, fi.Mode().Perm())
	}
	if got, err := Load(dir); err != nil || got.Jitter != 0.05 {
		t.Fatalf("Load after Save through a link: jitter %v, %v", got.Jitter, err)
	}
}

func TestSaveRefusesInvalid(t *testing.T) {
	dir := t.TempDir()
	p := Default()
	p.Jitter = 2
	err := Save(dir, p)
	if err == nil || !strings.Contains(err.Error(), "jitter") {
		t.Fatalf("Save(invalid) = %v, want a jitter error", err)
	}
	if _, err := os.Stat(Path(dir)); !os.IsNotExist(err) {
		t.Fatalf("an invalid policy was written")
	}
}

func TestHashIsCanonical(t *testing.T) {
	a, err := Parse([]byte(`{"retry_soon":"600s","reactivation":{"classes":["timeout","no_peers"]}}`), "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse([]byte(`{"retry_soon":"10m","reactivation":{"classes":["no_peers","timeout"]}}`), "b")
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() {
		t.Errorf("equal policies written differently hash differently")
	}
	c := b
	c.Seed = 7
	if c.Hash() == b.Hash() {
		t.Errorf("changing the seed did not change the hash")
	}
}

func TestParsePartialKeepsDefaults(t *testing.T) {
	p, err := Parse([]byte(`{"backoff":{"no_peers":["1h","1d"]},"peer_penalty":{"base":{"rejected":"0"}}}`), "x")
	if err != nil {
		t.Fatal(err)
	}
	d := Default()
	if got := p.Backoff["no_peers"]; len(got) != 2 || time.Duration(got[1]) != Day {
		t.Errorf("no_peers = %v, want [1h 1d]", got)
	}
	if !reflect.DeepEqual(p.Backoff["timeout"], d.Backoff["timeout"]) || p.Jitter != d.Jitter {
		t.Errorf("fields left out lost their defaults")
	}
	if _, ok := PenalizePeer(p, nil, "127.0.0.1:1", "rejected", 0); ok {
		t.Errorf(`"rejected": "0" should disable the penalty`)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"syntax", "{\n  \"jitter\": 0.2,\n  oops\n}", "policy: F: line 3, column 3: invalid character 'o'"},
		{"empty", "", "policy: F: empty or truncated JSON"},
		{"trailing", `{} {}`, "unexpected data after the policy object"},
		{"unknown field", `{"jiter": 0.1}`, `policy: F: unknown field "jiter"`},
		{"type", `{"jitter": "x"}`, "policy: F: jitter: want a number, got string"},
		{"type nested", `{"archive": {"min_attempts": 1.5}}`, "archive.min_attempts: want an integer"},
		{"bad duration", `{"backoff": {"no_peers": ["30m", "2h", "8x"]}}`, `policy: F: backoff.no_peers[2]: duration "8x": unknown unit "x"`},
		{"duration number", `{"seed": 5, "plan": {"lease": 5}}`, `policy: F: plan.lease: want a string such as "30m"`},
		{"decreasing", `{"backoff": {"no_peers": ["30m", "2h", "8m"]}}`, "policy: F: backoff.no_peers[2]: 8m is shorter than the step before it (2h)"},
		{"zero step", `{"backoff": {"timeout": ["0"]}}`, "backoff.timeout[0]: delay must be positive"},
		{"empty schedule", `{"backoff": {"timeout": []}}`, "backoff.timeout: empty schedule"},
		{"unknown class", `{"backoff": {"slow": ["1h"]}}`, "backoff.slow: unknown failure class"},
		{"local schedule", `{"backoff": {"local_error": ["1h"]}}`, "backoff.local_error: local errors are retried after retry_soon"},
		// A null is no value (it read as the default, or an empty list).
		{"null backoff", `{"backoff": null}`, "policy: F: backoff: null is no value: give one, or leave the field out for its default"},
		{"null jitter", `{"jitter": null}`, "policy: F: jitter: null is no value"},
		{"null schedule step", `{"backoff": {"timeout": ["1h", null]}}`, "policy: F: backoff.timeout[1]: null is no value"},
		{"null classes", `{"reactivation": {"classes": null}}`, "policy: F: reactivation.classes: null is no value"},
		{"null policy", `null`, "policy: F: policy: want an object, got null"},
		// A key given twice: the last one won, unsaid.
		{"key twice", `{"jitter": 0.1, "seed": 1, "jitter": 0.3}`, "policy: F: jitter: given twice: keep one"},
		{"nested key twice", `{"backoff": {"no_peers": ["1h"], "no_peers": ["2h"]}}`, "policy: F: backoff.no_peers: given twice"},
		{"key twice in another case", `{"plan": {"lease": "1h", "Lease": "2h"}}`, "policy: F: plan.Lease: given twice"},
		{"version", `{"version": 2}`, "version: 2 is not supported"},
		{"jitter", `{"jitter": 0.95}`, "jitter: 0.95 is outside [0, 0.9]"},
		{"negative seed", `{"seed": -1}`, "seed: want a non-negative integer"},
		{"sources", `{"bad_metadata": {"sources": 0}}`, "bad_metadata.sources: must be at least 1"},
		{"penalty class", `{"peer_penalty": {"base": {"no_peers": "1h"}}}`, "peer_penalty.base.no_peers: no_peers is not a failure of one peer"},
		{"per-hash class", `{"peer_penalty": {"base": {"peer_lacks_torrent": "1h"}}}`,
			"peer_penalty.base.peer_lacks_torrent: peer_lacks_torrent is a fact about one hash, not a failure of the endpoint"},
		{"factor", `{"peer_penalty": {"factor": 0.5}}`, "peer_penalty.factor"},
		// The classes are a set, kept sorted: an index would name the
		// sorted position, not the one written, so the value is named.
		{"reactivation class", `{"reactivation": {"classes": ["no_peers", "ok"]}}`, `reactivation.classes: "ok" is not a failure class`},
		{"reactivation class first", `{"reactivation": {"classes": ["zzz", "no_peers"]}}`, `reactivation.classes: "zzz" is not a failure class`},
		{"reactivation dup", `{"reactivation": {"classes": ["timeout", "no_peers", "timeout"]}}`, `reactivation.classes: "timeout" is listed twice`},
		{"new share", `{"plan": {"new_share": 1.5}}`, "plan.new_share: 1.5 is outside [0, 1]"},
		{"overdue share", `{"plan": {"new_overdue_share": 1.5}}`, "plan.new_overdue_share: 1.5 is outside [0, 1]"},
		{"overdue share negative", `{"plan": {"new_overdue_share": -0.1}}`, "plan.new_overdue_share: -0.1 is outside [0, 1]"},
		{"overdue after negative", `{"plan": {"new_overdue_after": "-1d"}}`, `policy: F: plan.new_overdue_after: duration "-1d"`},
		{"cold share 0", `{"plan": {"cold_share": 0}}`, "plan.cold_share: 0 is outside (0, 1]: cold hashes are still retried"},
		{"lease", `{"plan": {"lease": "0"}}`, "plan.lease: must be positive"},
		{"lease over a week", `{"plan": {"lease": "8d"}}`, "plan.lease: 8d is longer than 7d"},
		// lease_until is kept in milliseconds: a shorter lease has ended
		// when it is planned, and leases nothing.
		{"lease under a millisecond", `{"plan": {"lease": "999us"}}`, "plan.lease: 999us is shorter than 1ms"},
		{"archive", `{"archive": {"min_attempts": 0}}`, "archive.min_attempts: must be at least 1"},
		{"archive new_unseen", `{"archive": {"new_unseen": "-1d"}}`, `policy: F: archive.new_unseen: duration "-1d"`},
		{"reactivation spread", `{"reactivation": {"spread": "2d"}}`, "reactivation.spread: must be between 0 (none) and 1d, got 2d"},
		{"announce interval over min_interval", `{"reactivation": {"announce_min_interval": "8d"}}`,
			"reactivation.announce_min_interval: 8d is longer than reactivation.min_interval (7d): an announce must not wait longer than any sighting"},
		{"min_interval under the default announce interval", `{"reactivation": {"min_interval": "6h"}}`,
			"reactivation.announce_min_interval: 12h is longer than reactivation.min_interval (6h)"},
		{"announce interval negative", `{"reactivation": {"announce_min_interval": "-1h"}}`, `policy: F: reactivation.announce_min_interval: duration "-1h"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), "F")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%s) error = %v\nwant it to contain %q", tt.in, err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestLoadErrorNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(Path(dir), []byte(`{"backoff": {"no_peers": ["30m", "2h", "-1h"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	want := "policy: " + Path(dir) + ": backoff.no_peers[2]: "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Load error = %v, want prefix %q", err, want)
	}
	if err := os.WriteFile(Path(dir), bytes.Repeat([]byte(" "), maxPolicySize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Load of a huge file = %v, want a size error", err)
	}
}

// FuzzParsePolicy checks that any input either fails with a one-line
// error naming the file, or yields a valid policy that survives a JSON
// round trip unchanged.
func FuzzParsePolicy(f *testing.F) {
	f.Add(Default().JSON())
	f.Add([]byte(`{"backoff": {"no_peers": ["30m", "2h", "8x"]}}`))
	f.Add([]byte(`{"seed": 18446744073709551615, "jitter": 0, "plan": {"lease": "1.5h"}}`))
	f.Add([]byte(`{"reactivation": {"classes": ["timeout"], "reset_schedule": true}}`))
	f.Add([]byte(`{"peer_penalty": {"base": {"rejected": "0"}, "factor": 1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "F")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "policy: F: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q does not name the file on one line", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid policy: %v", err)
		}
		back, err := Parse(p.JSON(), "F")
		if err != nil {
			t.Fatalf("re-parsing the written policy: %v\n%s", err, p.JSON())
		}
		if back.Hash() != p.Hash() {
			t.Fatalf("round trip changed the policy:\n%s\n%s", p.JSON(), back.JSON())
		}
	})
}

// TestPolicyWithoutTooLargePenaltyLoads: a policy.json written before
// too_large penalised the endpoint (its peer_penalty.base has no
// too_large) still loads, and takes the default penalty.
func TestPolicyWithoutTooLargePenaltyLoads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "policy_before_too_large_penalty.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(b, "old")
	if err != nil {
		t.Fatalf("an older policy file no longer loads: %v", err)
	}
	if got := time.Duration(p.PeerPenalty.Base["too_large"]); got != 7*Day {
		t.Errorf("peer_penalty.base.too_large = %v, want the default 7d", got)
	}
	if got := time.Duration(p.Delay("too_large", 0)); got != 30*Day {
		t.Errorf("backoff.too_large = %v, want 30d", got)
	}
	if _, err := Parse([]byte(`{"peer_penalty": {"base": {"too_large": "1d"}}}`), "new"); err != nil {
		t.Errorf("peer_penalty.base.too_large refused: %v", err)
	}
}

// TestPolicyBeforePeerLacksTorrentLoads: a policy file written before the
// class peer_lacks_torrent existed (the default of then) still loads, and
// the class takes the default schedule, is peer-level and penalises no
// endpoint.
func TestPolicyBeforePeerLacksTorrentLoads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "policy_before_peer_lacks_torrent.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(b, "old")
	if err != nil {
		t.Fatalf("an older policy file no longer loads: %v", err)
	}
	const c = schema.OutcomePeerLacksTorrent
	if got := time.Duration(p.Delay(c, 0)); got != 30*time.Minute {
		t.Errorf("backoff.%s[0] = %v, want the default 30m", c, got)
	}
	if KindOf(c) != KindPeer {
		t.Errorf("%s is %v, want peer", c, KindOf(c))
	}
	if _, ok := p.PeerPenalty.Base[c]; ok {
		t.Errorf("peer_penalty.base has %s", c)
	}
}

// TestPolicyBeforeNewUnseenLoads: a policy file written before
// archive.new_unseen existed (the default of then) reads as the default,
// 90 days, as every key a file leaves out does: never-tried hashes go
// cold on such a dataset too; archive.new_unseen=0 keeps them hot.
func TestPolicyBeforeNewUnseenLoads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "policy_before_new_unseen.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("new_unseen")) {
		t.Fatal("the old policy file names new_unseen")
	}
	p, err := Parse(b, "old")
	if err != nil {
		t.Fatalf("an older policy file no longer loads: %v", err)
	}
	if got := time.Duration(p.Archive.NewUnseen); got != 90*Day {
		t.Errorf("archive.new_unseen = %v, want the default 90d", got)
	}
	if p.Hash() != Default().Hash() {
		t.Errorf("the default of before reads as %s, not today's default", p.JSON())
	}
	st := newState(1) // never tried, seen at t0
	if !ShouldArchive(p, &st, t0+90*day) {
		t.Errorf("a never-tried hash 90 days unseen stays hot under the old file")
	}
	neg := Default()
	neg.Archive.NewUnseen = -1
	if err := neg.Validate(); err == nil || err.Error() != "archive.new_unseen: must not be negative (0 keeps never-tried hashes hot)" {
		t.Errorf("a negative new_unseen: %v", err)
	}
	off, err := Parse([]byte(`{"archive": {"new_unseen": "0"}}`), "off")
	if err != nil || ShouldArchive(off, &st, t0+900*day) {
		t.Errorf("archive.new_unseen 0 (%v): a never-tried hash went cold", err)
	}
}

// TestPolicyBeforeNewOverdueLoads: a policy file written before
// plan.new_overdue_after and plan.new_overdue_share existed (the default
// of then) reads as today's default, 7d and 0.1, as every key a file
// leaves out does; the overdue share 0 turns the reserve off.
func TestPolicyBeforeNewOverdueLoads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "policy_before_new_overdue.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("new_overdue")) {
		t.Fatal("the old policy file names new_overdue_*")
	}
	p, err := Parse(b, "old")
	if err != nil {
		t.Fatalf("an older policy file no longer loads: %v", err)
	}
	if got := time.Duration(p.Plan.NewOverdueAfter); got != 7*Day || p.Plan.NewOverdueShare != 0.1 {
		t.Errorf("plan.new_overdue_after, share = %v, %v; want the defaults 7d, 0.1", got, p.Plan.NewOverdueShare)
	}
	if p.Hash() != Default().Hash() {
		t.Errorf("the default of before reads as %s, not today's default", p.JSON())
	}
	neg := Default()
	neg.Plan.NewOverdueAfter = -1
	if err := neg.Validate(); err == nil || err.Error() != "plan.new_overdue_after: must not be negative" {
		t.Errorf("a negative new_overdue_after: %v", err)
	}
}

// TestPolicyBeforeAnnounceMinIntervalLoads: a policy file written before
// reactivation.announce_min_interval existed (the default of then) reads
// as today's default, 12h, as every key a file leaves out does; it may
// equal min_interval (announces then count as any sighting), not pass it.
func TestPolicyBeforeAnnounceMinIntervalLoads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "policy_before_announce_min_interval.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("announce_min_interval")) {
		t.Fatal("the old policy file names announce_min_interval")
	}
	p, err := Parse(b, "old")
	if err != nil {
		t.Fatalf("an older policy file no longer loads: %v", err)
	}
	if got := time.Duration(p.Reactivation.AnnounceMinInterval); got != 12*time.Hour {
		t.Errorf("reactivation.announce_min_interval = %v, want the default 12h", got)
	}
	if p.Hash() != Default().Hash() {
		t.Errorf("the default of before reads as %s, not today's default", p.JSON())
	}
	for _, tc := range []struct {
		name    string
		edit    func(r *ReactivationRule)
		wantErr string
	}{
		{"equal to min_interval", func(r *ReactivationRule) { r.AnnounceMinInterval = r.MinInterval }, ""},
		{"0", func(r *ReactivationRule) { r.AnnounceMinInterval = 0 }, ""},
		{"both 0", func(r *ReactivationRule) { r.AnnounceMinInterval, r.MinInterval = 0, 0 }, ""},
		{"a millisecond over", func(r *ReactivationRule) { r.AnnounceMinInterval = r.MinInterval + Duration(time.Millisecond) },
			"reactivation.announce_min_interval: 7d1ms is longer than reactivation.min_interval (7d)"},
		{"negative", func(r *ReactivationRule) { r.AnnounceMinInterval = -1 },
			"reactivation.announce_min_interval: must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := Default()
			tc.edit(&q.Reactivation)
			err := q.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)) {
				t.Errorf("Validate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
