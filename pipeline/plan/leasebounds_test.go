package plan

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestLeaseBounds: Options.Lease (--lease) under a millisecond is bad
// input (exit 2), before the dataset is opened: lease_until is kept in
// milliseconds, so such a lease ended at the instant it was planned and
// a second plan at that instant leased the same hashes again. A lease
// of 1ms holds: the second plan finds both hashes under lease.
func TestLeaseBounds(t *testing.T) {
	for _, tt := range []struct {
		name  string
		lease time.Duration
		code  int    // exit status of the first run's error; 0: none
		msg   string // in its error
	}{
		{"under a millisecond", 999 * time.Microsecond, exitcode.Usage, "--lease 999us is shorter than 1ms"},
		{"a nanosecond", time.Nanosecond, exitcode.Usage, "--lease 1ns is shorter than 1ms"},
		{"a millisecond", time.Millisecond, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(0x10, 1), ms(t0)), newHash(hashAt(0x20, 2), ms(t0))}, nil)
			run := func(i int) (Stats, error) {
				o := DefaultOptions()
				o.Data, o.Now, o.Limit, o.Lease = dir, t0.Add(time.Minute), 10, tt.lease
				o.Output = filepath.Join(t.TempDir(), "jobs.parquet")
				return Run(context.Background(), o)
			}
			st, err := run(0)
			if exitcode.Of(err) != tt.code || tt.msg != "" && !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("exit %d (%v), want %d and %q", exitcode.Of(err), err, tt.code, tt.msg)
			}
			if tt.code != 0 {
				return
			}
			if st.Planned != 2 {
				t.Fatalf("the first plan planned %d, want 2", st.Planned)
			}
			if st, err = run(1); err != nil || st.Planned != 0 || st.Leased != 2 {
				t.Errorf("the second plan at the same time: planned %d, under lease %d (%v); want 0 and 2", st.Planned, st.Leased, err)
			}
		})
	}
}

// TestLeaseEndsInRFC3339Years: a --now whose lease (--lease, or the
// policy's plan.lease) would end after 9999-12-31T23:59:59.999Z is bad
// input (exit 2), nothing leased: the run committed its leases and then
// failed writing --stats-json (lease_until in the year 10000, which
// RFC 3339 cannot write: exit 1, "committed snapshot N; then: json: ...").
// A lease ending within the year 9999 plans.
func TestLeaseEndsInRFC3339Years(t *testing.T) {
	for _, tt := range []struct {
		name  string
		now   time.Time
		lease time.Duration // 0: the policy's (2h)
		code  int
	}{
		{"ends in the year 9999", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), 0, 0},
		{"the policy's lease ends in the year 10000", time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC), 0, exitcode.Usage},
		{"--lease ends in the year 10000", time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC), 7 * 24 * time.Hour, exitcode.Usage},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(0x10, 1), ms(t0))}, nil)
			o := DefaultOptions()
			o.Data, o.Now, o.Limit, o.Lease = dir, tt.now, 10, tt.lease
			o.Output = filepath.Join(t.TempDir(), "jobs.parquet")
			st, err := Run(context.Background(), o)
			if exitcode.Of(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", exitcode.Of(err), err, tt.code)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.code == 0]; st.Planned != want || st.Committed != (want == 1) {
				t.Errorf("planned %d (committed %v), want %d", st.Planned, st.Committed, want)
			}
			if tt.code != 0 && !strings.Contains(err.Error(), "after the years 0000-9999") {
				t.Errorf("error %q does not say why", err)
			}
		})
	}
}
