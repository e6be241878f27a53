// Package plan is the plan-retries stage: it picks the hashes whose
// metadata should be fetched next, leases them, and writes them as jobs.
//
//	capture → dedup → plan-retries → fetch → merge → export
//
// One pass streams the hot tier of the state (only the columns planning
// needs), skipping hashes that are fetched, not yet due, blocklisted or
// under a live lease, and keeps the best candidates in bounded heaps, one
// per pool: never-tried hashes (new, and reactivated after a deferral),
// failed ones (retry and reactivated), and cold ones met in the budgeted cold sweep (the cold
// files of plan.cold_partitions partitions from a cursor kept in the
// manifest, which each plan commit moves on; the cold rows merge left in
// those partitions' hot files too, and only then). Selection is
// global across partitions; --limit is split in order: new hashes get
// --new-share of it (rounded up, at least one job), cold hashes the
// policy's cold share of what is left (at least one job), retried hashes
// the rest, and a pool's unused part goes to the others (new, then retry,
// then cold); with --limit 2 or more each tier with due hashes gets a
// job (quota). Within a pool hashes are taken in schedule.Priority order
// (reactivated, starved: due for longer than their last delay, or never
// tried and cold, the longest waiting first; then activity, attempts,
// waiting time, seeded tie-break), but for plan.new_overdue_share of the
// new pool's jobs, kept for never-tried hashes due longer than
// plan.new_overdue_after, the longest waiting first (pools.pick). The
// jobs file interleaves the pools by their shares, each best first
// (byShare), so that a fetch cut short has tried each pool's share.
//
// A job's avoid_peers are the hash's, less the endpoints whose penalty in
// DIR/peers/ has ended (or that merge has forgotten). The jobs file carries
// every live penalty once, in its metadata (schema.AvoidPeersKey), and
// fetch skips those endpoints for every job. A job's peers are the
// hash's (announced, newest first) less every endpoint penalised then.
//
// Leases live in a small side table, DIR/leases/ (schema.Lease, read and
// written with formats/leases), written in the same commit: planning
// never rewrites the state. A hash whose lease is live is not planned
// again; once the lease expires the hash returns to the queue, so a
// crashed fetch never loses a job. merge removes a lease when the job's
// result is applied.
package plan
