package plan

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

func TestPlanPicksDueHashes(t *testing.T) {
	p := schedule.Default()
	p.Plan.ColdPartitions = 1 // a new dataset's first sweep reads only partition 00's cold files
	p.Plan.ColdShare = 0.5
	now := ms(t0) + 30*day
	var (
		fresh     = newHash(hashAt(0x01, 1), ms(t0))
		due       = failedHash(t, hashAt(0x02, 1), ms(t0), ms(t0))
		notDue    = failedHash(t, hashAt(0x03, 1), ms(t0), now-minute)
		fetched   = newHash(hashAt(0x04, 1), ms(t0))
		leased    = newHash(hashAt(0x05, 1), ms(t0))
		expired   = newHash(hashAt(0x06, 1), ms(t0))
		blocked   = newHash(hashAt(0x07, 1), ms(t0))
		coldIn    = failedHash(t, hashAt(0x00, 1), ms(t0), ms(t0))
		coldOut   = failedHash(t, hashAt(0x80, 1), ms(t0), ms(t0))
		reactived = failedHash(t, hashAt(0x09, 1), ms(t0), ms(t0))
	)
	schedule.ApplySuccess(&fetched, ms(t0))
	reactived.Reactivated = ms(t0) + day
	coldIn.Tier, coldOut.Tier = schema.TierCold, schema.TierCold
	dir := makeDataset(t, []schema.State{fresh, due, notDue, fetched, leased, expired, blocked, coldIn, coldOut, reactived},
		[]schema.Lease{
			{InfoHash: leased.InfoHash, LeaseID: "Lold", LeaseUntil: now + hour, PlannedAt: now - hour},
			{InfoHash: expired.InfoHash, LeaseID: "Lold", LeaseUntil: now - hour, PlannedAt: now - 3*hour},
		})
	if err := os.WriteFile(dir+"/blocklist", []byte(schema.Hex(blocked.InfoHash)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := schedule.Save(dir, p); err != nil {
		t.Fatal(err)
	}
	jobs, st := runPlan(t, dir, now, 100, nil)
	got := jobSet(jobs)
	want := map[schema.Hash]string{
		fresh.InfoHash: schema.ReasonNew, due.InfoHash: schema.ReasonRetry, expired.InfoHash: schema.ReasonNew,
		coldIn.InfoHash: schema.ReasonCold, reactived.InfoHash: schema.ReasonReactivated,
	}
	if len(got) != len(want) {
		t.Errorf("planned %d hashes, want %d: %v", len(got), len(want), jobs)
	}
	for h, reason := range want {
		j, ok := got[h]
		if !ok {
			t.Errorf("%x not planned", h[:1])
			continue
		}
		if j.Reason != reason || j.LeaseID == "" || j.LeaseUntil != now+2*hour {
			t.Errorf("%x: reason %s lease %s until %d; want %s, a lease until now+2h", h[:1], j.Reason, j.LeaseID, j.LeaseUntil-now, reason)
		}
	}
	if j := got[due.InfoHash]; j.Attempt != 2 {
		t.Errorf("retry job attempt = %d, want 2", j.Attempt)
	}
	if jobs[0].InfoHash != reactived.InfoHash {
		t.Errorf("first job is %x, want the reactivated hash first", jobs[0].InfoHash[:1])
	}
	if st.Fetched != 1 || st.NotDue != 1 || st.Leased != 1 || st.Blocked != 1 || st.Relet != 1 || st.ColdScanned != 1 || st.PlannedCold != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestLeasesStopASecondPlannerUntilTheyExpire(t *testing.T) {
	var states []schema.State
	for i := range uint64(40) {
		states = append(states, newHash(hashAt(byte(i*6), i), ms(t0)))
	}
	dir := makeDataset(t, states, nil)
	now := ms(t0) + hour
	first, _ := runPlan(t, dir, now, 25, nil)
	second, _ := runPlan(t, dir, now+minute, 25, nil)
	if len(first) != 25 || len(second) != 15 {
		t.Fatalf("planned %d then %d, want 25 then the other 15", len(first), len(second))
	}
	a := jobSet(first)
	for _, j := range second {
		if _, dup := a[j.InfoHash]; dup {
			t.Fatalf("%x handed out twice while leased", j.InfoHash)
		}
	}
	if first[0].LeaseID == second[0].LeaseID {
		t.Errorf("two passes share lease id %s", first[0].LeaseID)
	}
	none, st := runPlan(t, dir, now+hour, 25, nil)
	if len(none) != 0 || st.Leased != 40 {
		t.Fatalf("with every hash leased: planned %d, leased %d", len(none), st.Leased)
	}
	// The first leases end (2h): those hashes return to the queue.
	again, st := runPlan(t, dir, now+2*hour, 100, nil)
	if len(again) != 25 || st.Relet != 25 {
		t.Fatalf("after the first leases expired: planned %d (relet %d), want 25", len(again), st.Relet)
	}
	for _, j := range again {
		if _, ok := a[j.InfoHash]; !ok {
			t.Errorf("%x planned again although its lease is live", j.InfoHash)
		}
	}
}

func TestNewHashesKeepTheirShare(t *testing.T) {
	const limit = 100
	var states []schema.State
	for i := range uint64(10 * limit) { // 10× more overdue retries than the limit
		states = append(states, failedHash(t, hashAt(byte(i%16*16), i), ms(t0), ms(t0)))
	}
	for i := range uint64(300) {
		states = append(states, newHash(hashAt(byte(i%16*16+3), 1_000_000+i), ms(t0)+day))
	}
	dir := makeDataset(t, states, nil)
	jobs, st := runPlan(t, dir, ms(t0)+10*day, limit, nil)
	if len(jobs) != limit || st.PlannedNew != limit/2 || st.PlannedRetry != limit/2 {
		t.Fatalf("planned %d: %d new, %d retries; want %d, half new", len(jobs), st.PlannedNew, st.PlannedRetry, limit)
	}
	share := 0.8
	_, st = runPlan(t, dir, ms(t0)+10*day, limit, func(o *Options) { o.NewShare = &share })
	if st.PlannedNew != 80 {
		t.Errorf("--new-share 0.8: %d new of %d", st.PlannedNew, st.Planned)
	}
}

func TestRetriesFillWhatNewLeaves(t *testing.T) {
	var states []schema.State
	for i := range uint64(50) {
		states = append(states, failedHash(t, hashAt(byte(i), i), ms(t0), ms(t0)))
	}
	states = append(states, newHash(hashAt(9, 999), ms(t0)))
	dir := makeDataset(t, states, nil)
	_, st := runPlan(t, dir, ms(t0)+day, 20, nil)
	if st.PlannedNew != 1 || st.PlannedRetry != 19 {
		t.Fatalf("%d new, %d retries; want 1 and 19", st.PlannedNew, st.PlannedRetry)
	}
}

func TestSelectionIsGlobalAndReproducible(t *testing.T) {
	var states []schema.State
	for i := range uint64(1024) { // 64 equal hashes in every 16th partition
		states = append(states, newHash(hashAt(byte(i/64*16), i), ms(t0)))
	}
	dirA := makeDataset(t, states, nil)
	dirB := makeDataset(t, states, nil)
	seed := uint64(42)
	a, _ := runPlan(t, dirA, ms(t0)+hour, 256, func(o *Options) { o.Seed = &seed })
	b, _ := runPlan(t, dirB, ms(t0)+hour, 256, func(o *Options) { o.Seed = &seed; o.Workers = 1 })
	low := 0
	for i := range a {
		if a[i].InfoHash != b[i].InfoHash || a[i].LeaseID != b[i].LeaseID {
			t.Fatalf("job %d differs between identical runs", i)
		}
		if a[i].InfoHash[0] < 0x80 {
			low++
		}
	}
	if low < 100 || low > 156 {
		t.Errorf("%d of 256 picks below prefix 0x80; want about half", low)
	}
	c, _ := runPlan(t, makeDataset(t, states, nil), ms(t0)+hour, 256, nil)
	same := 0
	for i := range c {
		if c[i].InfoHash == a[i].InfoHash {
			same++
		}
	}
	if same == len(c) {
		t.Errorf("another seed picked the same hashes in the same order")
	}
}

func TestPlanBadInput(t *testing.T) {
	dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), ms(t0))}, nil)
	tests := []struct {
		name, want string
		setup      func()
		edit       func(o *Options)
	}{
		{name: "negative limit", want: "--limit", edit: func(o *Options) { o.Limit = -1 }},
		{name: "share", want: "--new-share", edit: func(o *Options) { v := 1.5; o.NewShare = &v }},
		{name: "not a dataset", want: "not an infohash dataset", edit: func(o *Options) { o.Data = t.TempDir() }},
		{name: "bad policy", want: "policy.json: jitter", setup: func() { os.WriteFile(dir+"/policy.json", []byte(`{"jitter": 3}`), 0o644) }},
		{name: "bad blocklist", want: "blocklist:1", setup: func() {
			os.Remove(dir + "/policy.json")
			os.WriteFile(dir+"/blocklist", []byte("zz\n"), 0o644)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			o := DefaultOptions()
			o.Data, o.Output, o.Now = dir, t.TempDir()+"/jobs.parquet", t0
			if tt.edit != nil {
				tt.edit(&o)
			}
			_, err := Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tt.want) || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d), want exit 2 mentioning %q", err, exitcode.Of(err), tt.want)
			}
			if _, err := os.Stat(o.Output); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a jobs file was written")
			}
		})
	}
}

func TestQuota(t *testing.T) {
	tests := []struct {
		name                    string
		limit, cold             int
		share                   float64
		nNew, nRetry, nCold     int
		wantNew, wantRetry, wCo int
	}{
		// The new share is a share of the whole limit, taken before
		// the cold reserve.
		{"both plenty", 100, 2, 0.5, 1000, 1000, 1000, 50, 48, 2},
		{"few new", 100, 0, 0.5, 10, 1000, 0, 10, 90, 0},
		{"few retries", 100, 0, 0.5, 1000, 10, 0, 90, 10, 0},
		{"share 0", 100, 0, 0, 1000, 1000, 0, 0, 100, 0},
		{"share 0 no retries", 100, 0, 0, 1000, 0, 0, 100, 0, 0},
		{"share 1", 100, 0, 1, 1000, 1000, 0, 100, 0, 0},
		// Each tier with due hashes gets a job once limit has one for
		// each: a new share near 1 leaves one to the cold tier, a cold
		// share of 1 one to the hot tier.
		{"share 1 with cold", 100, 2, 1, 1000, 1000, 1000, 99, 0, 1},
		{"share 0.99 with cold", 100, 2, 0.99, 1000, 1000, 1000, 99, 0, 1},
		{"share 0.99 no cold due", 100, 2, 0.99, 1000, 1000, 0, 99, 1, 0},
		{"share 1 no cold due", 100, 2, 1, 1000, 1000, 0, 100, 0, 0},
		{"share 0 with cold", 100, 2, 0, 1000, 1000, 1000, 0, 98, 2},
		{"limit 2 share 1", 2, 1, 1, 5, 5, 5, 1, 0, 1},
		{"limit 2 share 0.99", 2, 1, 0.99, 5, 5, 5, 1, 0, 1},
		{"limit 2 share 0", 2, 1, 0, 5, 5, 5, 0, 1, 1},
		{"limit 2 share 1 no cold due", 2, 1, 1, 5, 5, 0, 2, 0, 0},
		{"limit 2 cold share 1", 2, 2, 0, 5, 5, 5, 0, 1, 1},
		{"limit 2 cold share 1 only new", 2, 2, 0, 5, 0, 5, 1, 0, 1},
		{"limit 2 cold share 1 only cold", 2, 2, 0, 0, 0, 5, 0, 0, 2},
		{"cold share 1", 10, 10, 0, 5, 5, 50, 0, 1, 9},
		{"limit 1 share 1", 1, 1, 1, 5, 5, 5, 1, 0, 0},
		{"limit 1 share 0.99", 1, 1, 0.99, 5, 5, 5, 1, 0, 0},
		{"limit 1 share 0", 1, 1, 0, 5, 5, 5, 0, 0, 1},
		{"limit 1 share 0 no cold", 1, 1, 0, 5, 5, 0, 0, 1, 0},
		{"limit 0 share 1", 0, 0, 1, 5, 5, 5, 0, 0, 0},
		{"limit 0 share 0", 0, 0, 0, 5, 5, 5, 0, 0, 0},
		{"share 1 few new", 10, 1, 1, 5, 100, 100, 5, 4, 1},
		{"odd", 7, 0, 0.5, 100, 100, 0, 4, 3, 0},
		{"odd with cold", 7, 1, 0.5, 100, 100, 100, 4, 2, 1},
		{"cold short", 100, 10, 0.5, 1000, 1000, 3, 50, 47, 3},
		{"limit 1", 1, 1, 0.5, 2, 5, 5, 1, 0, 0},
		{"limit 2", 2, 1, 0.5, 2, 5, 5, 1, 0, 1},
		{"limit 3", 3, 1, 0.5, 2, 5, 5, 2, 0, 1},
		{"limit 3 one new", 3, 1, 0.5, 1, 5, 5, 1, 1, 1},
		{"tiny share still one slot", 10, 1, 0.01, 2, 100, 5, 1, 8, 1},
		{"limit 1 no new", 1, 1, 0.5, 0, 5, 5, 0, 0, 1},
		{"limit 1 no new no cold", 1, 1, 0.5, 0, 5, 0, 0, 1, 0},
		{"spare goes to new first", 10, 1, 0.5, 100, 2, 100, 7, 2, 1},
		{"nothing", 100, 10, 0.5, 0, 0, 0, 0, 0, 0},
		{"spare goes to cold", 100, 2, 0.5, 10, 20, 500, 10, 20, 70},
		{"spare short of cold", 100, 2, 0.5, 10, 20, 30, 10, 20, 30},
		{"only cold", 49, 1, 0.5, 0, 0, 241, 0, 0, 49},
		{"limit 0", 0, 0, 0.5, 5, 5, 5, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, r, c := quota(tt.limit, tt.cold, tt.share, tt.nNew, tt.nRetry, tt.nCold)
			if n != tt.wantNew || r != tt.wantRetry || c != tt.wCo {
				t.Errorf("quota = %d new, %d retry, %d cold; want %d, %d, %d", n, r, c, tt.wantNew, tt.wantRetry, tt.wCo)
			}
		})
	}
}

func TestEmptyDatasetPlansNothing(t *testing.T) {
	dir := makeDataset(t, nil, nil)
	jobs, st := runPlan(t, dir, ms(t0), 10, nil)
	if len(jobs) != 0 || st.Planned != 0 {
		t.Fatalf("planned %d from an empty dataset", len(jobs))
	}
	_ = time.Second
}
