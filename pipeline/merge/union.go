package merge

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

// UnionStats are the counters of merge --from.
type UnionStats struct {
	From           string `json:"from"`
	FromSnapshot   int64  `json:"from_snapshot"`
	AlreadyMerged  bool   `json:"already_merged"`
	Additive       bool   `json:"counts_added"`
	Partitions     int    `json:"partitions_rewritten"`
	HashesAdded    int64  `json:"hashes_added"`
	HashesCombined int64  `json:"hashes_combined"`
	Reactivated    int64  `json:"reactivated"` // combined hashes whose next_retry a sighting pulled closer (as dedup's)
	Rewarmed       int64  `json:"rewarmed"`    // combined hashes a sighting made hot again (as dedup's)
	TorrentsAdded  int64  `json:"torrents_added"`
	PeersCombined  int    `json:"peer_rows"`
	LedgerEntries  int    `json:"ledger_entries_added"`
}

// runFrom unions the dataset o.From into o.Data in one commit. Every
// column has a rule (see unionState); the applied-input ledgers are
// unioned, so an input both datasets applied counts once, and the union
// itself is recorded by the other manifest's checksum, so repeating it is
// a no-op. Leases are not copied: the other dataset's jobs report to it.
func runFrom(ctx context.Context, o Options, start time.Time) (_ Stats, err error) {
	st := Stats{Union: &UnionStats{From: o.From}}
	od, err := dataset.OpenReadOnly(o.From)
	if err != nil {
		return st, fromError(o.From, err)
	}
	defer od.Close()
	if same(o.Data, o.From) {
		return st, exitcode.BadInput(fmt.Errorf("merge --from: %s is the dataset itself", o.From))
	}
	d, err := dataset.Open(ctx, o.Data, dataset.OpenOptions{Create: true, LockWait: o.LockWait, Keep: o.Keep, Now: o.Now})
	if err != nil {
		return st, err
	}
	defer d.Close() // then app's newData may remove a dataset it created
	// A migration Open committed stays: the error says so (app's texts).
	defer func() { err = d.KeptMigration(err) }()
	// A new dataset is announced once committed to: one that ends with
	// nothing committed is removed again (app's newData).
	if _, err := schedule.Load(d.Dir); err != nil { // each try reads it again (schedule.Of)
		return st, exitcode.BadInput(err)
	}
	var base *dataset.Manifest
	m, after, err := o.tries("merge --from", &st).Run(ctx, d, func(tx *dataset.Tx, _ int) (bool, error) {
		// Each try reads the other's snapshot anew: the last try's may
		// have been collected by the other's writers (otherCollected).
		om, id, err := otherSnapshot(od)
		if err != nil {
			return false, err
		}
		// A try counts only what it unions: an earlier try's counters
		// went with its transaction (see Run).
		st.Union = &UnionStats{From: o.From, FromSnapshot: om.Snapshot}
		base = tx.Base()
		p, err := policyOf(tx, &st)
		if err != nil {
			return false, err
		}
		applied, err := d.AppliedAmong(tx.Base(), []string{id})
		if err != nil || applied[id] {
			return false, err
		}
		u := &unioner{runner: runner{d: d, tx: tx, base: tx.Base(), p: p, now: schema.Millis(o.Now), progressTo: o.ProgressTo}, od: od, om: om, maxMeta: o.MaxMetadataSize}
		if testFromRead != nil {
			testFromRead()
		}
		us, err := u.run(ctx)
		if err != nil {
			return false, otherCollected(od, om, tx.Moved(err))
		}
		us.From, us.FromSnapshot = o.From, om.Snapshot
		st.Union = &us
		// The other dataset by its absolute path, as the ledger names inputs.
		tx.AddApplied(dataset.Applied{ID: id, Name: "merge --from " + dataset.AbsName(o.From, o.From) + fmt.Sprintf(" (snapshot %d)", om.Snapshot),
			Rows: om.Table(dataset.TableState).Rows(), At: o.Now})
		tx.SetPolicy(p.JSON())
		if testBeforeCommit != nil {
			testBeforeCommit()
		}
		return true, nil
	})
	if err != nil {
		return st, gaveUpOnOther(err)
	}
	if m == nil { // merged before: the ledger has id
		st.Union.AlreadyMerged = true
		st.Snapshot = base.Snapshot
		st.Seconds = time.Since(start).Seconds()
		return st, nil
	}
	if d.Created {
		slog.Info("merge --from: created a new dataset", "dir", d.Dir, "snapshot", m.Snapshot)
	}
	st.Snapshot, st.Committed = m.Snapshot, true
	st.Seconds = time.Since(start).Seconds()
	if after != nil {
		return st, fmt.Errorf("merge --from: %w", after)
	}
	return st, nil
}

func same(a, b string) bool {
	x, err1 := os.Stat(a)
	y, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(x, y)
}

// unioner folds one other dataset into a transaction.
type unioner struct {
	runner
	od       *dataset.Dataset
	om       *dataset.Manifest
	additive bool
	maxMeta  int64 // Options.MaxMetadataSize, for the other's torrents
}

func (u *unioner) run(ctx context.Context) (UnionStats, error) {
	var us UnionStats
	// Counts add up only when the two histories share no input (and
	// neither ledger records a union of the other: unionedBefore);
	// otherwise the larger count is kept (a lower bound that never double
	// counts).
	theirs, err := u.od.LedgerEntries(u.om)
	if err != nil {
		return us, fmt.Errorf("merge --from: %w", err)
	}
	ids := make([]string, len(theirs))
	for i, a := range theirs {
		ids[i] = a.ID
	}
	mine, err := u.d.AppliedAmong(u.base, ids)
	if err != nil {
		return us, err
	}
	if u.additive = len(mine) == 0; u.additive {
		shared, err := u.unionedBefore(theirs)
		if err != nil {
			return us, err
		}
		u.additive = !shared
	}
	us.Additive = u.additive
	added := map[string]bool{}
	for _, a := range theirs {
		if !mine[a.ID] && !added[a.ID] {
			u.tx.AddApplied(a)
			added[a.ID] = true
			us.LedgerEntries++
		}
	}
	ot, tt := u.om.Table(dataset.TableState), u.om.Table(dataset.TableTorrents)
	prog := u.newProgress("merge --from: unioning partitions", int64(len(ot.PartitionKeys())+len(tt.PartitionKeys())))
	defer prog.Done()
	for _, key := range ot.PartitionKeys() {
		if err := ctx.Err(); err != nil {
			return us, err
		}
		ps, err := u.statePartition(key)
		if err != nil {
			return us, err
		}
		prog.Add(1)
		us.Partitions++
		us.HashesAdded += ps.added
		us.HashesCombined += ps.combined
		us.Reactivated += ps.reactivated
		us.Rewarmed += ps.rewarmed
	}
	for _, key := range tt.PartitionKeys() {
		n, err := u.torrentPartitionFrom(key)
		if err != nil {
			return us, err
		}
		prog.Add(1)
		us.TorrentsAdded += n
	}
	n, err := u.peersFrom()
	if err != nil {
		return us, err
	}
	us.PeersCombined = n
	return us, nil
}

// unionCounts are the counters of one partition's union.
type unionCounts struct {
	added, combined, reactivated, rewarmed int64
}

// statePartition joins partition key of both datasets.
func (u *unioner) statePartition(key string) (c unionCounts, err error) {
	mine, err := readPartition(u.d, u.base, key, statecol.ReadStateFile)
	if err != nil {
		return c, fmt.Errorf("merge --from: %s: %w", u.d.Dir, err)
	}
	theirs, named, err := u.readTheirState(key)
	if err != nil && named {
		return c, fmt.Errorf("merge --from: %w", err)
	} else if err != nil {
		return c, fmt.Errorf("merge --from: %s: %w", u.od.Dir, err)
	}
	byHash := func(a, b schema.State) int { return hashCmp(a.InfoHash, b.InfoHash) }
	slices.SortFunc(mine, byHash)
	slices.SortFunc(theirs, byHash)
	out := make([]schema.State, 0, len(mine)+len(theirs))
	i, j := 0, 0
	for i < len(mine) || j < len(theirs) {
		switch {
		case j == len(theirs) || i < len(mine) && hashCmp(mine[i].InfoHash, theirs[j].InfoHash) < 0:
			out = append(out, mine[i])
			i++
		case i == len(mine) || hashCmp(mine[i].InfoHash, theirs[j].InfoHash) > 0:
			s := theirs[j]
			s.LeaseID, s.LeaseUntil = "", 0
			out = append(out, s)
			c.added++
			j++
		default:
			s, w := unionState(u.p, mine[i], theirs[j], u.additive)
			out = append(out, s)
			c.combined++
			if w.reactivated {
				c.reactivated++
			}
			if w.rewarmed {
				c.rewarmed++
			}
			i++
			j++
		}
	}
	var hot, cold []schema.State
	for _, s := range out {
		if s.Tier == schema.TierCold {
			cold = append(cold, s)
		} else {
			hot = append(hot, s)
		}
	}
	files, err := schedule.WriteTiers(nil, hot, cold, func(name string, rows []schema.State) (dataset.FileInfo, error) {
		return u.writeStaged(dataset.TableState, key, name, rows)
	})
	if err != nil {
		return c, err
	}
	u.tx.SetPartition(dataset.TableState, key, files)
	if c.added > 0 {
		u.tx.DropBloom(dataset.TableState, key)
	}
	return c, nil
}

// unionState combines the two records of one hash. Each column's rule:
//
//   - first_seen: the earlier (ignoring nulls), with first_source from the
//     same record (even null: unknown; ties: the greater, a known one);
//     last_seen: the later, with last_source from the same record (a
//     record with seen_count 0 has none: the other's);
//   - seen_count and activity (decayed to the later last_seen): added when
//     the two histories share no input, else the larger;
//   - metadata_status: fetched beats failed beats new; a fetched record
//     brings its attempt columns, and no retry;
//   - otherwise the retry columns (last_attempt, last_failure,
//     last_failure_at, next_retry, backoff_step, bad_metadata) come from the record with the later
//     last_attempt (ties: the later reactivated_at, which pulled its
//     next_retry for a newer sighting, then the later next_retry),
//     attempts are added or the larger as for seen_count, and
//     backoff_step and bad_metadata are the larger of the two;
//   - reactivated_at: the later; tier: hot if either is hot;
//   - then, if the record the retry columns came from has not seen the
//     newer last_seen (its own is older), that sighting goes through the
//     reactivation rule, as dedup would have put it (schedule.Reactivate:
//     a dormant hash has next_retry pulled closer, a cold one is made hot);
//   - hash_type, info_hash_v2: a fetched record's (its metadata proved
//     them), else v2 if either says so (see unionHashType); avoid_peers:
//     both lists; peers: the later-seen record's, then the other's
//     (peers_at: the later known one of those that gave an endpoint);
//   - lease columns: null (leases live in DIR/leases/).
//
// Every rule but the additive one is a maximum or minimum, so merging the
// same or a newer copy of a dataset again changes nothing more (a record
// the rule reactivated has the sighting as its own last_seen and, by its
// later reactivated_at, keeps its retry columns).
func unionState(p schedule.Policy, a, b schema.State, additive bool) (schema.State, woke) {
	out := a
	out.HashType, out.InfoHashV2, out.InfoHashV2Source = unionHashType(a, b)
	out.FirstSeen = minKnown(a.FirstSeen, b.FirstSeen)
	out.FirstSource = unionFirstSource(&a, &b)
	// A record never sighted (seen_count 0: merge added it for a fetch
	// result) has the attempt's time and "import" as placeholders there:
	// the other record's sightings, if it has any, are the hash's.
	laterB := b.LastSeen > a.LastSeen
	if (a.SeenCount == 0) != (b.SeenCount == 0) {
		laterB = a.SeenCount == 0
	}
	if laterB {
		out.LastSeen, out.LastSource = b.LastSeen, b.LastSource
	}
	half := float64(time.Duration(p.Plan.ActivityHalfLife).Milliseconds())
	decay := func(s schema.State) float64 {
		return s.Activity * math.Exp2(-float64(out.LastSeen-s.LastSeen)/half)
	}
	if additive {
		out.SeenCount = addSat64(a.SeenCount, b.SeenCount)
		out.Activity = decay(a) + decay(b)
	} else {
		out.SeenCount = max(a.SeenCount, b.SeenCount)
		out.Activity = max(decay(a), decay(b))
	}
	rank := map[string]int{schema.StatusNew: 0, schema.StatusFailed: 1, schema.StatusFetched: 2}
	src := a // the record whose attempt columns win
	switch {
	case a.MetadataStatus == schema.StatusFetched:
	case b.MetadataStatus == schema.StatusFetched:
		src = b
	case b.LastAttempt != a.LastAttempt:
		if b.LastAttempt > a.LastAttempt {
			src = b
		}
	case b.Reactivated != a.Reactivated:
		if b.Reactivated > a.Reactivated {
			src = b
		}
	case b.NextRetry > a.NextRetry:
		src = b
	}
	out.MetadataStatus = a.MetadataStatus
	if rank[b.MetadataStatus] > rank[a.MetadataStatus] {
		out.MetadataStatus = b.MetadataStatus
	}
	out.LastAttempt, out.LastFailure, out.NextRetry = src.LastAttempt, src.LastFailure, src.NextRetry
	out.LastFailureAt = src.LastFailureAt
	out.Attempts, out.BackoffStep, out.BadMetadata = src.Attempts, src.BackoffStep, src.BadMetadata
	if out.MetadataStatus != schema.StatusFetched {
		if additive {
			out.Attempts = addSat32(a.Attempts, b.Attempts)
		} else {
			out.Attempts = max(a.Attempts, b.Attempts)
		}
		out.BackoffStep = max(a.BackoffStep, b.BackoffStep)
		out.BadMetadata = max(a.BadMetadata, b.BadMetadata)
	}
	out.Reactivated = max(a.Reactivated, b.Reactivated)
	if a.Tier == schema.TierHot || b.Tier == schema.TierHot { // a fetched one too: archive.fetched_unseen archives those
		out.Tier = schema.TierHot
	}
	out.LeaseID, out.LeaseUntil = "", 0
	out.AvoidPeers = unionAvoid(out.BadMetadata, &a, &b)
	out.Peers, out.PeersAt = unionPeers(&a, &b)
	var w woke
	if out.LastSeen > src.LastSeen {
		retry := out.NextRetry
		schedule.Reactivate(p, &out, out.LastSeen, schedule.LastAnnounce(&out))
		w.reactivated = out.NextRetry != retry
		w.rewarmed = src.Tier == schema.TierCold && out.Tier != schema.TierCold
	}
	return out, w
}

// woke is what a sighting did to a combined record, counted as dedup
// counts it: reactivated when the rule moved next_retry (it only pulls it
// closer), rewarmed when the record the schedule came from was cold and
// the combined one is hot (made so by the rule, or by the other side's
// hot record of the sighting).
type woke struct {
	reactivated, rewarmed bool
}

// torrentPartitionFrom adds the other dataset's torrents of partition key
// that this one lacks (a torrent both have keeps this dataset's row: the
// info dictionary is the same, its hash is the key).
func (u *unioner) torrentPartitionFrom(key string) (int64, error) {
	mt := u.base.Table(dataset.TableTorrents)
	have := map[schema.Hash]bool{}
	for _, f := range mt.Partitions[key] {
		hs, err := dataset.ReadDataFile[hashOnly](u.d, mt, key, f)
		if err != nil {
			return 0, fmt.Errorf("merge --from: %w", err)
		}
		for _, h := range hs {
			have[h.InfoHash] = true
		}
	}
	ot := u.om.Table(dataset.TableTorrents)
	var rows []torrentRow
	for _, f := range ot.Partitions[key] {
		df := u.od.SourceFile(u.om, dataset.TableTorrents, key, f)
		read := int64(0)
		var forged error // the first torrent whose info_bytes are not its hash's
		err := eachTorrent(df, u.maxMeta, func(t *schema.Torrent) {
			read++
			if !have[t.InfoHash] && forged == nil {
				if forged = checkTorrentHash(df.Path(), read, t); forged == nil {
					have[t.InfoHash] = true
					rows = append(rows, torrentRow{Torrent: cloneTorrent(t)})
				}
			}
		})
		if err == nil {
			err = forged
		}
		if err == nil {
			err = checkFileRows(df.Path(), read, f)
		}
		if err != nil {
			return 0, fmt.Errorf("merge --from: %w", err)
		}
	}
	n, err := u.torrentPartition(key, rows)
	return int64(n), err
}

// peersFrom unions the peer-penalty tables: per endpoint the later until
// (with its class), the larger failure count, the later last_at.
func (u *unioner) peersFrom() (int, error) {
	var err error
	if u.peers, err = readPeers(u.d, u.base); err != nil {
		return 0, err
	}
	theirs, named, err := u.readTheirPeers()
	if err != nil && named {
		return 0, fmt.Errorf("merge --from: %w", err)
	} else if err != nil {
		return 0, fmt.Errorf("merge --from: peers: %w", err)
	}
	for _, t := range theirs {
		m, ok := u.peers.rows[t.Addr]
		next := t
		if ok {
			next = m
			if t.Until > m.Until {
				next.Until, next.Class = t.Until, t.Class
			}
			next.Failures = max(m.Failures, t.Failures)
			next.LastAt = max(m.LastAt, t.LastAt)
		}
		if !ok || next != m {
			u.peers.rows[t.Addr] = next
			u.peers.changed = true
		}
	}
	u.peers.prune(u.p, u.now)
	if err := u.peers.stage(u.tx); err != nil {
		return 0, err
	}
	return len(u.peers.rows), nil
}

// cloneTorrent copies t with slices of its own (a reader may reuse its
// buffers).
func cloneTorrent(t *schema.Torrent) schema.Torrent {
	c := *t
	c.NameRaw = slices.Clone(t.NameRaw)
	c.InfoBytes = slices.Clone(t.InfoBytes)
	c.Files = slices.Clone(t.Files)
	for i := range c.Files {
		c.Files[i].PathRaw = slices.Clone(c.Files[i].PathRaw)
	}
	return c
}

// readPartition reads every state row of partition key of snapshot m
// with read (the other dataset's, which may be of an older format, whose
// missing columns read as zero values, go through readTheirState: its
// values are bounded), each file's footer checked against m's record of it,
// and the whole file once its rows are read (dataset.Dataset.SourceFile:
// they go into a new file).
func readPartition(d *dataset.Dataset, m *dataset.Manifest, key string,
	read func(rowio.DataFile) ([]schema.State, error)) ([]schema.State, error) {
	var out []schema.State
	t := m.Table(dataset.TableState)
	for _, f := range t.Partitions[key] {
		rows, err := read(d.SourceFile(m, dataset.TableState, key, f))
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
