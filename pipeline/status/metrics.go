package status

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// Metrics renders the report as a Prometheus text file (node_exporter's
// textfile collector) with the gauges an operator alerts on: hashes by
// metadata_status and tier, failed hashes by last_failure, live leases,
// overdue retries and the retry waves by tier and kind, overdue retries by tier and last failure, table rows and
// bytes, the last applied input's time, what is set aside under DIR/inbox,
// crawl-pass's unapplied work files, and the snapshot. Known statuses,
// tiers, failure classes, kinds and waves are written even at 0, so that
// an alert rule always has a series. A report whose --verify found
// damaged files has no counts: then only the snapshot, the totals (the
// manifest's), blocklist_unreadable and the verification are written, and last, the
// last_success_timestamp_seconds of the file this one replaces (read back
// by the caller; 0 for none): a run that found damage is no success. Nor
// is one that could not read DIR/blocklist: blocklist_unreadable is 1, the
// blocklisted, overdue, overdue_retries and retry_wave gauges (which leave its hashes out) are missing,
// every other count is written, and the last success's time is kept. took is the run's duration, at the
// time the file describes.
func (r *Report) Metrics(took time.Duration, at time.Time, last float64) []byte {
	var b strings.Builder
	m := func(name, help string) *family {
		return &family{b: &b, name: "infohash_status_" + name, help: help}
	}
	m("snapshot", "Number of the dataset's latest committed snapshot.").set(float64(r.Snapshot))
	m("snapshot_timestamp_seconds", "When the latest snapshot was committed (Unix time).").set(unix(r.CommittedAt))
	r.totalMetrics(&b)
	unreadable := 0.0
	if r.BlocklistError != nil {
		unreadable = 1
	}
	m("blocklist_unreadable", "1 when DIR/blocklist could not be read (plan-retries and export refuse to run; status counts no retry waves "+
		"and exits 1), else 0.").set(unreadable)
	if v := r.Verified; v != nil {
		m("verified_files", "Files of the snapshot read by --verify.").set(float64(v.Files))
		m("verify_problems", "Files that do not match the manifest (--verify); 0 when all match.").set(float64(len(v.Problems)))
		if len(v.Problems) > 0 {
			if last > 0 {
				m("last_success_timestamp_seconds", lastSuccessHelp).set(last)
			}
			return []byte(b.String())
		}
	}
	h := m("hashes", "Known hashes by metadata_status and tier.")
	statuses := union([]string{schema.StatusNew, schema.StatusFetched, schema.StatusFailed}, slices.Collect(maps.Keys(r.ByStatusTier)))
	tiers := []string{schema.TierHot, schema.TierCold}
	for _, byTier := range r.ByStatusTier {
		tiers = union(tiers, slices.Collect(maps.Keys(byTier)))
	}
	for _, s := range statuses {
		for _, t := range tiers {
			h.set(float64(r.ByStatusTier[s][t]), "metadata_status", s, "tier", t)
		}
	}
	f := m("failed_hashes", "Failed hashes by their last failure class.")
	for _, c := range union(slices.Sorted(slices.Values(schedule.FailureClasses())), slices.Collect(maps.Keys(r.ByFailure))) {
		f.set(float64(r.ByFailure[c]), "last_failure", c)
	}
	m("leases_live", "Live leases: hashes planned by plan-retries and not yet merged.").set(float64(deref(r.Leased)))
	m("leases_expired", "Leases whose lease_until passed with no result merged: jobs whose fetch died or whose results were not merged "+
		"(the hashes are planned again; kept 7 days for a late result).").set(float64(deref(r.LeasesExpired)))
	if r.WavesBy != nil {
		r.waveMetrics(m)
	}
	tables := slices.Sorted(maps.Keys(r.TableRows))
	rows := m("table_rows", "Rows of each table in the latest snapshot.")
	for _, t := range tables {
		rows.set(float64(r.TableRows[t]), "table", t)
	}
	size := m("table_bytes", "Bytes of each table's files in the latest snapshot.")
	for _, t := range tables {
		size.set(float64(r.TableBytes[t]), "table", t)
	}
	m("inputs_applied", "Inputs in the ledger of applied inputs.").set(float64(r.InputsLedger))
	if a := r.LastInput; a != nil {
		m("last_input_timestamp_seconds", "When the newest input of the ledger was applied (Unix time).").set(unix(a.At))
	}
	m("partial_inputs", "Half-read inputs set aside under DIR/inbox by runs killed, or out of disk space, while reading a pipe (not applied).").set(float64(len(r.Partial)))
	m("rejected_inputs", "Inputs set aside as bad input under DIR/inbox (*.bad, not applied).").set(float64(len(r.Rejected)))
	m("pending_inputs", "Whole spools of stdin or a pipe under DIR/inbox not applied yet (the next dedup or merge applies them).").set(float64(len(r.Pending)))
	m("spooling_inputs", "Spools under DIR/inbox still being written, or cut short by a killed run.").set(float64(len(r.Spooling)))
	m("foreign_files", "Files under DIR/inbox that no run wrote (copied in by hand; a folder counts once): dedup and merge never read them.").set(float64(len(r.Foreign)))
	m("unapplied_work_files", "Files crawl-pass keeps under DIR/work/*/ (observations.arrows, results.arrows; older passes' .parquet) that dedup or merge has not committed "+
		"(no FILE.applied marker): left by passes that stopped or failed, or briefly a running pass's own; and DIR/work/jobs.parquet while its leases are live (jobs left unfetched).").set(float64(len(r.UnappliedWork)))
	m("unpublished_bytes", "Bytes held by what commits built for snapshots CURRENT does not name (a failed or killed commit's, which the next writer removes, or a running one's).").set(float64(r.UnpublishedBytes))
	m("staging_bytes", "Bytes held by the writers' folders under DIR/staging (a running writer's, or a killed one's, which the next writer removes).").set(float64(r.StagingBytes))
	if r.BlocklistError != nil {
		// No success: as after damage, the last one's time stays.
		if last > 0 {
			m("last_success_timestamp_seconds", lastSuccessHelp).set(last)
		}
		return []byte(b.String())
	}
	m("run_duration_seconds", "Wall time of the last successful status run.").set(took.Seconds())
	m("last_success_timestamp_seconds", lastSuccessHelp).set(unix(at))
	return []byte(b.String())
}

// waveMetrics writes the blocklisted hashes, the overdue hashes and the
// retry waves.
func (r *Report) waveMetrics(m func(name, help string) *family) {
	if r.Blocklisted != nil {
		m("blocklisted", "Known hashes DIR/blocklist lists, any status: never planned nor exported, and left out of the overdue "+
			"and retry_wave gauges.").set(float64(*r.Blocklisted))
	}
	o := m("overdue", "Hashes not fetched, leased nor blocklisted whose next retry is due, by tier and kind "+
		"(retry: failed before; new: never tried). Hot retries are what plan-retries counts as due_retry, hot new ones its due_new; "+
		"cold hashes are planned only in its cold sweep.")
	for _, t := range WaveTiers {
		for _, k := range WaveKinds {
			o.set(float64(r.WavesBy[t][k][Waves[0].Name]), "tier", t, "kind", k)
		}
	}
	if r.OverdueByFailure != nil {
		r.overdueMetrics(m)
	}
	w := m("retry_wave", "Hashes not fetched, leased nor blocklisted by tier, kind and when their next retry falls due.")
	for _, t := range WaveTiers {
		for _, k := range WaveKinds {
			for _, wv := range Waves {
				w.set(float64(r.WavesBy[t][k][wv.Name]), "tier", t, "kind", k, "wave", wv.Name)
			}
		}
	}
}

// lastSuccessHelp is the HELP of last_success_timestamp_seconds.
const lastSuccessHelp = "When the last successful status run ended (Unix time); one whose --verify found damage, or that could not read DIR/blocklist, leaves it as it was."

// family writes one gauge's (or counter's) HELP and TYPE lines before its
// first sample; its samples must be written before the next family's.
type family struct {
	b          *strings.Builder
	name, help string
	counter    bool
	started    bool
}

// set writes a sample with label name/value pairs.
func (f *family) set(v float64, labels ...string) {
	if !f.started {
		kind := "gauge"
		if f.counter {
			kind = "counter"
		}
		fmt.Fprintf(f.b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, kind)
		f.started = true
	}
	f.b.WriteString(f.name)
	for i := 0; i+1 < len(labels); i += 2 {
		sep := ","
		if i == 0 {
			sep = "{"
		}
		fmt.Fprintf(f.b, "%s%s=\"%s\"", sep, labels[i], escapeLabel(labels[i+1]))
	}
	if len(labels) > 0 {
		f.b.WriteByte('}')
	}
	fmt.Fprintf(f.b, " %s\n", formatValue(v))
}

// escapeLabel escapes a label value as the text format wants: backslash,
// double quote and newline.
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func formatValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func unix(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMilli()) / 1000
}

// union returns a followed by the items of b it lacks, sorted.
func union(a, b []string) []string {
	out := slices.Clone(a)
	slices.Sort(b)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
