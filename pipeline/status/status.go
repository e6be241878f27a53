// Package status summarises a dataset for operators: how many hashes are
// in each metadata status and tier, why the failed ones failed, how big the
// tables are, and when the next retry waves fall due.
package status

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/plural"
	"github.com/infohash/infohash/internal/progress"
	"github.com/infohash/infohash/pipeline/schedule"
)

// Report is what status prints (and --format json emits).
type Report struct {
	Dir         string    `json:"dir"`
	Snapshot    int64     `json:"snapshot"`
	CommittedAt time.Time `json:"committed_at"`
	Writer      string    `json:"writer"`
	// DatasetID is the manifest's dataset_id (the end of plan-retries'
	// lease IDs, which merge checks); nil (null) for a dataset of format 7
	// or older not yet migrated by a writer.
	DatasetID *string `json:"dataset_id"`
	// AncestorIDs are the ids the dataset had before it was copied (its
	// manifest's ancestor_ids, newest first: merge takes the results of
	// jobs planned under them); [] if none.
	AncestorIDs []string `json:"ancestor_ids"`
	// AncestorPasses are the passes (plan-retries runs) of an ancestor's
	// jobs merge takes, those the dataset held leases of when copied
	// (the manifest's ancestor_passes); an ancestor not in it has all
	// its jobs taken (a copy made before format 11); {} if none.
	AncestorPasses map[string][]string `json:"ancestor_passes"`
	// Copied: the snapshot was committed in another folder, and DIR is a
	// copy of it that no writer has given an id of its own yet (the next
	// one will; until then its jobs merge into the original).
	Copied bool `json:"copied"`
	// StateGlob globs the current state files by DIR's absolute path (as
	// the DuckDB line reads them: a relative glob read nothing in DuckDB
	// started in another folder), DIR's own glob characters escaped
	// (globUnder), so that it matches DIR's files alone. Nil (null in
	// JSON) while the snapshot has no state file (a new dataset: no dedup
	// has committed observations yet), as FrozenGlob is: a glob that
	// matches no file fails in DuckDB ("No files found").
	StateGlob *string `json:"state_glob"`
	// FrozenGlob globs the state files of this snapshot alone, by DIR's
	// absolute path too; nil (null in JSON) while the dataset has no state
	// file yet.
	FrozenGlob *string `json:"frozen_state_glob"`
	// Hashes counts the state's rows. When --verify found damaged files
	// nothing is read from the files: Hashes is then the manifest's row
	// count of the state, and the counts below that come from reading
	// them (ByStatus to WavesBy, and LastInput) are nil, null in JSON.
	Hashes    int64            `json:"hashes"`
	ByStatus  map[string]int64 `json:"by_status"`
	ByTier    map[string]int64 `json:"by_tier"`
	ByFailure map[string]int64 `json:"by_last_failure"`
	// ByStatusTier counts hashes by metadata_status, then tier.
	ByStatusTier map[string]map[string]int64 `json:"by_status_and_tier"`
	// Leased counts the live leases of the leases table (lease_until
	// after Now): hashes planned and not yet reported back by merge.
	Leased *int64 `json:"leased"`
	// LeasesExpired counts the leases of the leases table whose
	// lease_until has passed with no result merged: jobs whose fetch
	// died, or whose results were never merged (the hashes are planned
	// again; a late result is still applied within leases.Grace).
	// OldestExpired is the earliest such lease_until (null when none).
	LeasesExpired *int64     `json:"leases_expired"`
	OldestExpired *time.Time `json:"oldest_expired_lease_until"`
	// RetryWaves counts the hashes not fetched, not under a live lease
	// and not blocklisted by when their next retry falls due (a null
	// next_retry is overdue), all tiers and kinds together: the sums of
	// WavesBy. Both are nil (null) when the blocklist is unreadable.
	RetryWaves WaveCounts `json:"retry_waves"`
	// WavesBy splits RetryWaves by tier (hot, cold) and kind (retry:
	// failed before; new: never tried). Its hot overdue retries are what
	// plan-retries counts as due_retry at the same time, its hot overdue
	// new hashes its due_new.
	WavesBy WavesBy `json:"retry_waves_by_tier_and_kind"`
	// OverdueByFailure splits WavesBy's overdue retries by tier and last
	// failure class; nil (null) when WavesBy is.
	OverdueByFailure OverdueByFailure `json:"overdue_retries_by_tier_and_last_failure"`
	TableRows        map[string]int64 `json:"table_rows"`
	TableBytes       map[string]int64 `json:"table_bytes"`
	InputsLedger     int64            `json:"inputs_applied"`
	// LastInput is the newest entry of the ledger of applied inputs; nil
	// (null in JSON, the key kept for jq and scripts) when the ledger is
	// empty or --verify found damage.
	LastInput *dataset.Applied `json:"last_input"`
	// Partial are inputs a run killed (or out of disk space) had half
	// read from a pipe, set aside (not applied) under inbox/: apply them
	// if their producer will not send them again (dedup, or merge for
	// inbox/merge/, removes one once the commit that applies it is
	// durable).
	Partial []string `json:"partial_inputs"`
	// Rejected are inputs set aside as bad input (DIR/inbox/*.bad, and
	// inbox/merge/): spooled stdin or pipes that dedup or merge refused,
	// a killed run's spool cut short, crawl-pass files that dedup or
	// merge refused (rejectedWhat tells them apart). Never applied, kept
	// for a person to look at or delete.
	Rejected []string `json:"rejected_inputs"`
	// Pending are whole spools of stdin or a pipe (DIR/inbox/part-*.spool,
	// inbox/merge/part-*.results) not applied yet: a run killed after
	// spooling left them, or a run is applying them now; the next dedup
	// (or merge) applies them.
	Pending []string `json:"pending_inputs"`
	// Spooling are spools still under their temporary names: a run is
	// reading its stream now, or a killed run cut it short (the next
	// dedup or merge sets what it holds aside as a partial input).
	Spooling []string `json:"spooling_inputs"`
	// Foreign are the files under DIR/inbox that no run wrote, which
	// dedup and merge leave alone and never read (they take only their
	// own spools there): a file copied in by hand, a folder (listed once,
	// ending in a separator) but inbox/merge.
	Foreign []string `json:"foreign_files"`
	// UnappliedWork are the files scripts/cron/crawl-pass.sh keeps under
	// DIR/work/PASS/ (observations.arrows, results.arrows; older passes'
	// .parquet) that dedup or merge has not committed (no FILE.applied
	// marker): left by a pass that stopped or failed (the next pass
	// applies them), or the file of a pass running now, unmarked until
	// its dedup or merge commits it; and DIR/work/jobs.parquet while its
	// leases are live (jobs a stopped pass left unfetched).
	UnappliedWork []string `json:"unapplied_work"`
	// Unpublished are the manifests and table directories numbered above
	// the snapshot: what a commit that failed or was killed before
	// CURRENT named them left (the next writer to open the dataset removes
	// them), or what a commit running now is building. UnpublishedBytes
	// is what they alone hold (a snapshot directory's unchanged files are
	// hard links to the snapshot's).
	Unpublished      []string  `json:"unpublished"`
	UnpublishedBytes int64     `json:"unpublished_bytes"`
	Now              time.Time `json:"now"`
	// Verified is what --verify found (nil without it).
	Verified *dataset.VerifyResult `json:"verified,omitempty"`
	// Staging are the writers' folders under DIR/staging: a running
	// writer's, or what a killed one left (the next writer to open the
	// dataset removes those). StagingBytes is what they alone hold.
	Staging      []string `json:"staging"`
	StagingBytes int64    `json:"staging_bytes"`
	// Totals are the snapshot's cumulative counts of committed work
	// (dataset.Manifest.Totals; {} before any, or in a dataset older than
	// format 7 not yet migrated).
	Totals map[string]int64 `json:"totals"`
	// TotalsSince is when Totals began (dataset.CursorTotalsSince: a dataset
	// migrated from a format that kept none); null: from its first commit.
	TotalsSince *time.Time `json:"totals_since"`
	// BlocklistError says why DIR/blocklist could not be read
	// ("blocklist: DIR/blocklist:7: ..."); null when it was read or there
	// is none. Then the retry waves, which leave its hashes out, are not
	// counted (nil), every other count is, and the run fails (exit 1)
	// after its report and gauges are written.
	BlocklistError *string `json:"blocklist_error"`
	// Blocklisted counts the known hashes DIR/blocklist lists (any
	// status): never planned nor exported, and left out of the retry
	// waves. Nil (null) when the blocklist is unreadable or --verify
	// found damage; blocklistLen is how many hashes the list names.
	Blocklisted  *int64 `json:"blocklisted"`
	blocklistLen int
	// absDir is Dir made absolute (once, when the report is built), and
	// frozenDir the frozen state's folder under it: the DuckDB and frozen
	// lines read from there, so that they read DIR's files from DuckDB
	// started in any folder, not only where status ran.
	absDir, frozenDir string
}

// Options control Run.
type Options struct {
	Verify     bool      // check every file against the manifest
	ProgressTo io.Writer // progress of the verification and of the counts (nil: none)
}

// stateView is the projection status reads (readViews): the state
// columns of the same names, nulls as zero values. InfoHash is read only
// in partitions that hold a live lease, or when the blocklist lists any
// hash. (The state's lease_id and lease_until columns are always null:
// leases live in the leases table.)
type stateView struct {
	InfoHash       schema.Hash
	MetadataStatus string
	Tier           string
	LastFailure    string
	NextRetry      int64 // ms
	ColdFile       bool  // read from a cold file (schedule.IsColdFile)
}

// report builds the report of snapshot m of d, but for what is set aside
// under DIR/inbox (listInbox) and the unapplied work of crawl-pass
// (listWork).
func report(ctx context.Context, d *dataset.Dataset, m *dataset.Manifest, now time.Time, o Options) (*Report, error) {
	var err error
	dir := d.Dir
	st := m.Table(dataset.TableState)
	r := &Report{Dir: dir, Snapshot: m.Snapshot, CommittedAt: inMillis(m.CreatedAt), Writer: m.Writer,
		TableRows: map[string]int64{}, TableBytes: map[string]int64{},
		InputsLedger: m.LedgerLen(), Now: inMillis(now), Totals: map[string]int64{},
		// [] rather than null in JSON when nothing is set aside.
		Partial: []string{}, Rejected: []string{}, Pending: []string{}, Spooling: []string{}, Foreign: []string{}, Unpublished: []string{},
		Staging: []string{}, UnappliedWork: []string{}}
	if m.DatasetID != "" {
		r.DatasetID = &m.DatasetID
	}
	if r.absDir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("status: %s: %w", dir, err)
	}
	r.AncestorIDs = append([]string{}, m.AncestorIDs...)
	r.AncestorPasses = map[string][]string{}
	maps.Copy(r.AncestorPasses, m.AncestorPasses)
	r.Copied = d.Copied(m)
	maps.Copy(r.Totals, m.Totals)
	if ms, ok := m.Cursors[dataset.CursorTotalsSince]; ok {
		r.TotalsSince = new(inMillis(time.UnixMilli(ms)))
	}
	if st.Dir != "" && st.Rows() > 0 { // else the globs would match no file
		r.StateGlob = new(globUnder(r.absDir, "state", "current", "prefix=*", "*.parquet"))
		r.FrozenGlob = new(globUnder(r.absDir, st.Dir, "prefix=*", "*.parquet"))
		r.frozenDir = st.Dir
	}
	for name, t := range m.Tables {
		r.TableRows[name] = t.Rows()
		size := int64(0) // set for every table of TableRows, empty ones too
		for _, fs := range t.Partitions {
			for _, f := range fs {
				size += f.Size
			}
		}
		r.TableBytes[name] = size
	}
	bl, err := schedule.LoadBlocklist(dir)
	if err != nil {
		msg := err.Error() // names the file and line
		r.BlocklistError = &msg
	}
	r.blocklistLen = bl.Len()
	if o.Verify {
		if err := r.verify(ctx, d, m, o); err != nil {
			return nil, err
		}
		if len(r.Verified.Problems) > 0 {
			// The counts would read damaged files: the manifest's
			// count, and no others.
			r.Hashes = st.Rows()
			return r, nil
		}
	}
	if r.LastInput, err = d.LastApplied(m); err != nil {
		return nil, err
	}
	r.ByStatus, r.ByTier, r.ByFailure = map[string]int64{}, map[string]int64{}, map[string]int64{}
	r.ByStatusTier = map[string]map[string]int64{}
	var overdue *overdueCounter // nil: no waves counted
	if r.BlocklistError == nil {
		r.Blocklisted = new(int64(0))
		r.RetryWaves, r.WavesBy = map[string]int64{}, newWavesBy()
		overdue = newOverdueCounter()
		for _, wv := range Waves {
			r.RetryWaves[wv.Name] = 0 // every wave, for "jq .retry_waves.overdue" to read 0
		}
	}
	nowMs := now.UnixMilli()
	ph := o.phase("status: reading the leases table")
	leases, err := leases.Read(d, m)
	if ph.End(); err != nil {
		return nil, fmt.Errorf("status: %s: %w", dir, err)
	}
	live := map[schema.Hash]bool{}
	leasedIn := map[string]bool{} // partitions holding a live lease
	for h, l := range leases {
		if schedule.Leased(&schema.State{LeaseID: l.LeaseID, LeaseUntil: l.LeaseUntil}, nowMs) {
			live[h] = true
			leasedIn[fmt.Sprintf("%02x", schema.Prefix(h))] = true
		}
	}
	leased := int64(len(live))
	r.Leased = &leased
	r.LeasesExpired = new(int64(len(leases)) - leased)
	for h, l := range leases {
		if !live[h] && (r.OldestExpired == nil || l.LeaseUntil < r.OldestExpired.UnixMilli()) {
			r.OldestExpired = new(time.UnixMilli(l.LeaseUntil).UTC())
		}
	}
	var rows []stateView
	prog := o.progress("status: counting hashes", st.Rows())
	defer prog.Done()
	for _, key := range st.PartitionKeys() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows, err = readViews(d, m, key, leasedIn[key] || bl.Len() > 0, rows[:0])
		if err != nil {
			return nil, fmt.Errorf("status: partition %s: %w", key, err)
		}
		prog.Add(int64(len(rows)))
		for i := range rows {
			s := &rows[i]
			r.Hashes++
			r.ByStatus[s.MetadataStatus]++
			r.ByTier[s.Tier]++
			if r.ByStatusTier[s.MetadataStatus] == nil {
				r.ByStatusTier[s.MetadataStatus] = map[string]int64{}
			}
			r.ByStatusTier[s.MetadataStatus][s.Tier]++
			if r.Blocklisted != nil && bl.Contains(s.InfoHash) {
				*r.Blocklisted++
			}
			if s.MetadataStatus == schema.StatusFailed && s.LastFailure != "" {
				r.ByFailure[s.LastFailure]++
			}
			if r.WavesBy != nil && waiting(s, leasedIn[key] && live[s.InfoHash], bl) {
				tier, kind := waveTierKind(s)
				wv := wave(s.NextRetry - nowMs)
				r.RetryWaves[wv]++
				r.WavesBy[tier][kind][wv]++
				if kind == KindRetry && wv == Waves[0].Name {
					overdue.add(tier, s.LastFailure)
				}
			}
		}
	}
	if overdue != nil {
		r.OverdueByFailure = overdue.counts()
	}
	return r, nil
}

// NoState is what the DuckDB and frozen lines say of a snapshot that
// holds no state file (the JSON globs are null then).
const NoState = "no state yet: dedup --data DIR INPUT writes it, with the first observations it commits"

// inMillis is t in UTC cut to the millisecond, as every other time of
// the tool's JSON is (the ledger's, the leases'): the manifest's commit
// time and --now otherwise came out with nanoseconds.
func inMillis(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// verify checks the snapshot's files (before reading any of them for the
// counts, which a damaged file could make fail).
func (r *Report) verify(ctx context.Context, d *dataset.Dataset, m *dataset.Manifest, o Options) error {
	files := d.Files(m)
	var total int64
	for _, f := range files {
		total += f.Info.Size
	}
	prog := o.progress("status: verifying files (bytes)", total)
	v, err := dataset.Verify(ctx, files, prog.Add)
	prog.Done()
	if err != nil {
		return fmt.Errorf("status: %s: %w", r.Dir, err)
	}
	r.Verified = &v
	return nil
}

// Print writes the report for people.
func (r *Report) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	id := "none yet: a writer's migration draws it"
	if r.DatasetID != nil {
		id = *r.DatasetID
	}
	switch {
	case r.Copied:
		id += ", a copy made elsewhere: the next writer's commit gives it an id of its own"
	case len(r.AncestorIDs) > 0:
		id += ", copied from " + r.AncestorIDs[0]
	}
	fmt.Fprintf(tw, "dataset\t%s (snapshot %d by %s at %s; id %s)\n", r.Dir, r.Snapshot, r.Writer, r.CommittedAt.Format(time.RFC3339), id)
	if v := r.Verified; v != nil && len(v.Problems) > 0 {
		fmt.Fprintf(tw, "hashes\t%d per the manifest (%s applied)\n", r.Hashes, plural.Count(r.InputsLedger, "input", "inputs"))
		r.printBlocklist(tw)
		tw.Flush()
		fmt.Fprintf(w, "verified %s (%s) against the manifest: %s (not counted further)\n",
			plural.Count(int64(v.Files), "file", "files"), humanBytes(v.Bytes), plural.Count(int64(len(v.Problems)), "does not match", "do not match"))
		for _, p := range v.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
		r.printUnpublished(w)
		return
	}
	fmt.Fprintf(tw, "hashes\t%d (%d leased to fetch jobs, %s applied)\n", r.Hashes, deref(r.Leased), plural.Count(r.InputsLedger, "input", "inputs"))
	if n := deref(r.LeasesExpired); n > 0 {
		fmt.Fprintf(tw, "expired leases\t%d with no result merged (fetch died or its results were not merged; the oldest ended %s): "+
			"plan-retries plans their hashes again as they fall due; until then a late result still counts\n", n, r.OldestExpired.Format(time.RFC3339))
	}
	fmt.Fprintf(tw, "by status\t%s\n", counts(r.ByStatus, nil))
	fmt.Fprintf(tw, "by tier\t%s\n", counts(r.ByTier, nil))
	fmt.Fprintf(tw, "last failure\t%s\n", counts(r.ByFailure, nil))
	r.printBlocklist(tw)
	if a := r.LastInput; a != nil {
		fmt.Fprintf(tw, "last input\t%s (%s) applied at %s\n", a.Name, plural.Count(a.Rows, "row", "rows"), a.At.Format(time.RFC3339))
	}
	for _, name := range slices.Sorted(maps.Keys(r.TableRows)) {
		fmt.Fprintf(tw, "table %s\t%s, %s\n", name, plural.Count(r.TableRows[name], "row", "rows"), humanBytes(r.TableBytes[name]))
	}
	r.printTotals(tw)
	tw.Flush()
	r.printWaves(w)
	if v := r.Verified; v != nil {
		fmt.Fprintf(w, "verified %s (%s) against the manifest: all match\n", plural.Count(int64(v.Files), "file", "files"), humanBytes(v.Bytes))
	}
	for _, p := range r.Partial {
		fmt.Fprintf(w, "partial input (set aside, not applied, by a run killed or out of disk space while reading a pipe, or whose stream or list was cut short; apply it with dedup, or merge under inbox/merge/, and it goes): %s\n", p)
	}
	for _, p := range r.Rejected {
		fmt.Fprintf(w, "rejected input (%s; set aside, not applied: look, then delete or fix and apply it): %s\n", rejectedWhat(r.Dir, p), p)
	}
	for _, p := range r.Pending {
		st := stageOf(r.Dir, p)
		fmt.Fprintf(w, "pending input (stdin or a pipe that %s spooled, not applied yet: the next %s applies it): %s\n", st, st, p)
	}
	for _, p := range r.Spooling {
		st := stageOf(r.Dir, p)
		fmt.Fprintf(w, "spooling (stdin or a pipe that %s is reading now, or a killed run cut short: the next %s sets it aside): %s\n", st, st, p)
	}
	r.printForeign(w)
	for _, p := range r.UnappliedWork {
		fmt.Fprintf(w, "unapplied work (a crawl-pass file that %s has not committed: a pass that stopped or failed left it for the next pass to apply, "+
			"or a pass running now has yet to apply it): %s\n", workStage(p), p)
	}
	r.printUnpublished(w)
	if r.StateGlob == nil {
		// No glob: it would match no file, and DuckDB fails on that.
		fmt.Fprintf(w, "DuckDB: none (%s)\nfrozen: none (%s)\n", NoState, NoState)
		return
	}
	r.printRead(w, "DuckDB", "state", "current")
	r.printRead(w, "frozen", r.frozenDir)
}

// printBlocklist says that DIR/blocklist is unreadable, else how many known hashes it holds back.
func (r *Report) printBlocklist(w io.Writer) {
	if r.BlocklistError != nil {
		fmt.Fprintf(w, "blocklist\tunreadable, retry waves not counted: %s\n", *r.BlocklistError)
	} else if r.Blocklisted != nil && r.blocklistLen > 0 {
		fmt.Fprintf(w, "blocklisted\t%d of the known hashes (%s/%s lists %d): never planned nor exported, nor in the retry waves\n",
			*r.Blocklisted, r.Dir, schedule.BlocklistName, r.blocklistLen)
	}
}

// printUnpublished lists what commits built for snapshots that CURRENT
// does not name.
// It lists the writers' folders under DIR/staging too.
func (r *Report) printUnpublished(w io.Writer) {
	if len(r.Unpublished) > 0 {
		fmt.Fprintf(w, "unpublished (above snapshot %d, %s: left by a commit that failed or was killed before CURRENT named them, "+
			"or being built by one now; the next dedup, plan-retries or merge removes them):\n", r.Snapshot, humanBytes(r.UnpublishedBytes))
		for _, p := range r.Unpublished {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	if len(r.Staging) > 0 {
		fmt.Fprintf(w, "staging (%s: the files of a writer running now, or left by one that was killed; "+
			"the next dedup, plan-retries or merge removes a dead writer's):\n", humanBytes(r.StagingBytes))
		for _, p := range r.Staging {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
}

// progress starts a report of work on label with total units on
// ProgressTo, or returns nil (reports nothing) without one.
func (o Options) progress(label string, total int64) *progress.Reporter {
	if o.ProgressTo == nil {
		return nil
	}
	return progress.New(o.ProgressTo, label, total)
}

// phase starts reporting a step that counts nothing
// (progress.StartPhase) when ProgressTo is set, or returns nil.
func (o Options) phase(label string) *progress.Phase {
	if o.ProgressTo == nil {
		return nil
	}
	return progress.StartPhase(label)
}
