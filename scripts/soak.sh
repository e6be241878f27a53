#!/usr/bin/env bash
# make soak: the whole pipeline under kill -9. It starts bin/testnet on
# 127.0.0.1 (as make demo does; loopback only, stopped at the end), then
# runs SOAK_PASSES passes (default 12) of the stages on files it keeps in
# SOAK_DIR/files (default soak-data/files):
#
#   capture -o obs-K.parquet → dedup obs-K → plan-retries -o jobs-K.parquet
#   → fetch jobs-K -o res-K.parquet → merge res-K
#
# Each pass kills (SIGKILL) one stage drawn at random (or none, one pass in
# six) after a random delay of up to 1.1 times that stage's last whole run,
# or (one kill in three) as soon as the script sees an event: capture's or
# fetch's -o FILE published; a writer's transaction begun (staging/), its
# CURRENT being replaced (manifest written, commit point next) or its
# commit (CURRENT moved). Then it runs the stage again as an operator or
# cron would, with the same inputs and the same --now (one kill in four is
# followed by a kill of that run too, and so on):
#   capture, fetch   a -o FILE appears whole or not at all: if it is there the
#                    killed run published it and it is used, else the run is
#                    started again (the killed run's leases are still live:
#                    the same jobs file is fetched again);
#   dedup, merge     run again on the same file (applied already: a no-op);
#   plan-retries     none published: planned again to the same -o FILE, which
#                    drops the leases of the file a kill between commit and
#                    rename left unpublished (README, plan-retries). A jobs
#                    file there (an existing -o FILE is refused without
#                    --replace) is planned over with --replace (ending its
#                    leases), or (every other time) fetched as it is while
#                    its jobs are leased: unless it is the file a killed
#                    --replace run had ended the leases of in its commit
#                    (CURRENT moved, the file not replaced), planned over.
# The clock (--now) starts SOAK_PASSES x SOAK_STEP_HOURS (3) + 1 hours back
# and moves SOAK_STEP_HOURS on each pass, so failed fetches come due again;
# each stage gets the pass's time plus the time since the pass began
# (infohash clock --started, as crawl-pass.sh does). SOAK_SEED (default 1)
# seeds the draws: which stage each pass kills and how repeat; the delays,
# drawn against the stages' measured run times, and what the testnet's
# peers do, vary. SOAK_CAPTURE (4s), SOAK_LIMIT (40 jobs).
#
# After every pass bin/duckq (DuckDB) checks, through the documented globs
# (the first invariant broken ends the run, exit 1, naming it):
#   exact   one state row per info_hash; no hash present after an earlier pass
#           is missing later; every kept obs and res file is in the ledger,
#           once; the state's hashes, seen_count, first_seen and last_seen
#           equal a recomputation from the obs files the ledger applied
#           (count, min and max of observed_at per hash; sum(seen_count) = the
#           rows applied: no double count); every torrents row's info_bytes
#           hash (SHA-1) to its info_hash, one row per hash, exactly the
#           fetched hashes; attempts per hash = the res rows applied that
#           count an attempt (outcome not released, local_error nor
#           peers_penalised: a deferral), so a results file applied twice
#           or a lost one shows; metadata_status
#           (fetched: an ok row; failed: a counted failure; else new) and
#           last_attempt (latest attempted_at but released rows) recomputed
#           from the res rows; no lease left once a pass has merged (every
#           job was fetched, or released, and merged; a plan's unpublished
#           leases dropped by the next plan to its file); merge ignored no
#           result as late or stale (every result here is under its live
#           lease); status --verify passes (every file's size and CRC-32C
#           as its manifest says) and lists no partial, rejected or pending
#           input, nor an unpublished snapshot (what a killed commit built
#           is cleared by the next writer). Two controls are fed, without
#           kills, in the same order and with the same --now: one the obs
#           files by dedup alone, which must have the same info_hash,
#           first_seen, last_seen, seen_count, last_source and activity
#           (EXCEPT both ways); the other also each pass's res file by
#           merge, its rows' lease_id nulled and released rows left out (an
#           unleased result counts while the hash has no lease and the
#           attempt is newer than its last, as each leased one did here),
#           which must have the same state (every column), torrents and
#           penalised peers (peers/).
#   not     leases and the ledger against a control: a lease_id derives from
#           the planning snapshot's number (a killed plan-retries that
#           committed adds one), so the control holds no leases (the soaked
#           leases table is checked empty instead), and ledger entries and
#           snapshots differ by design. A fetch run again is not the killed
#           one (outcomes depend on the network's timing): only what was
#           published is compared, not what a killed run would have found.
# Prints a summary (passes, kills by stage and where they landed, hashes,
# torrents). Needs bash 5 (EPOCHREALTIME), and Go to build the binaries.
#
# Archiving and reactivation: the dataset and both controls get the same
# policy, SOAK_POLICY (default archive.min_attempts=1 archive.unseen=2h):
# a failed hash that one pass's capture did not hear is archived by the
# merge of its next failure, and a later sighting makes it hot again. The
# testnet (unlike make demo's) has 6 dead hashes that come and go
# (--dead-flap 3s: one in turn leaves the nodes' stores or is announced
# again every 3 s, so each is sampled 18 s of every 36; a pass takes ~10
# s), and searched hashes (get_peers every second, heard only when a
# capture node is on the lookup's path: mostly in the first passes).
# Each check also keeps the state's tiers
# (SOAK_DIR/passes/K/tiers.parquet); after the passes the soak fails
# unless some hash went cold and some cold hash came back hot on a
# sighting, and (exact) unless the hot->cold and cold->hot-on-a-sighting
# changes seen between passes equal the dataset's totals
# merge_archived_to_cold and dedup_rewarmed (status). The summary prints
# them, and the hashes whose retry a sighting pulled forward.
# SOAK_MODE=cron soaks scripts/cron/crawl-pass.sh instead, as cron runs
# it: scripts/soak-cron.sh's header says how and what it checks.
set -euo pipefail
shopt -s nullglob # globs that match nothing are empty lists
cd "$(dirname "$0")/.."
. scripts/lib.sh

PASSES=${SOAK_PASSES:-12}
SEED=${SOAK_SEED:-1}
OUT=${SOAK_DIR:-soak-data}
CAPTURE=${SOAK_CAPTURE:-4s}
LIMIT=${SOAK_LIMIT:-40}
STEP_H=${SOAK_STEP_HOURS:-3}
read -r -a POLICY <<<"${SOAK_POLICY:-archive.min_attempts=1 archive.unseen=2h}"
MODE=${SOAK_MODE:-stages}
IH=${INFOHASH_BIN:-bin/infohash}
DQ=bin/duckq
case ${BASH_VERSION:-} in '' | [0-4].*) die "needs bash 5 or newer (EPOCHREALTIME)" ;; esac
case $MODE in stages | cron) ;; *) die "SOAK_MODE is stages (the default) or cron, not '$MODE'" ;; esac
for v in "$PASSES" "$SEED" "$LIMIT" "$STEP_H"; do
	case $v in '' | *[!0-9]*) die "SOAK_PASSES, SOAK_SEED, SOAK_LIMIT and SOAK_STEP_HOURS are whole numbers, not '$v'" ;; esac
done

DS=$OUT/dataset CTL=$OUT/control FULL=$OUT/control-full F=$OUT/files
rm -rf "$OUT"
mkdir -p "$F/unleased" "$OUT/passes"

say "soak: building bin/infohash, bin/testnet, bin/duckq"
if [ -z "${INFOHASH_BIN:-}" ]; then
	$GO build -o bin/infohash ./cmd/infohash || die "cannot build bin/infohash"
fi
$GO build -o bin/testnet ./tools/testnet/cmd/testnet || die "cannot build bin/testnet"
(cd tools/duckcheck && $GO build -o ../../bin/duckq ./cmd/duckq && $GO build -o ../../bin/arrows2csv ./cmd/arrows2csv) ||
	die "cannot build bin/duckq and bin/arrows2csv"

# The same policy for the dataset and its controls (cron mode: its own).
DIRS=("$DS" "$CTL" "$FULL")
[ "$MODE" = stages ] || DIRS=("$OUT/cron")
for d in "${DIRS[@]}"; do
	mkdir -p "$d"
	[ ${#POLICY[@]} = 0 ] || "$IH" policy set --data "$d" "${POLICY[@]}" 2>>"$OUT/policy.log" ||
		die "cannot set the policy '${POLICY[*]}' in $d ($OUT/policy.log)"
done

# The testnet of make demo, plus dead hashes that come and go, on
# 127.0.0.1, until the script ends.
bin/testnet --seed "$SEED" --bad-peers 2 --dead 6 --dead-flap 3s --duration 0 --truth "$OUT/truth.json" >"$OUT/testnet.out" 2>"$OUT/testnet.log" &
TESTNET=$!
trap 'kill "$TESTNET" 2>/dev/null || true; wait "$TESTNET" 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do [ -s "$OUT/testnet.out" ] && break; sleep 0.1; done
BOOT=$(head -1 "$OUT/testnet.out")
[ -n "$BOOT" ] || die "the testnet did not start; see $OUT/testnet.log"
case ,$BOOT, in *,127.*) ;; *) die "the testnet's nodes are not on 127.0.0.0/8: $BOOT" ;; esac

RANDOM=$SEED
# rnd N: R = a draw from 0..N-1 (N < 2^30). Not in $(...): a subshell's
# draws would not move this shell's sequence.
rnd() { R=$(((RANDOM * 32768 + RANDOM) % $1)); }
ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
STAGES=(capture dedup plan-retries fetch merge)
declare -A EST=([capture]=4500 [dedup]=200 [plan-retries]=100 [fetch]=8000 [merge]=500)
declare -A KILLS=() LANDED=()
for s in "${STAGES[@]}"; do KILLS[$s]=0 LANDED[$s]=''; done
NONE=0

# run STAGE CMD...: runs CMD, its stderr appended to the pass's STAGE.log.
# While the pass's victim is armed (its first run; one pass in four, the
# next too), kills it (a random delay, or an event), setting KILLED and
# DELAY. Sets RC (137: killed) and, for a whole run, EST[STAGE] (ms).
run() {
	local st=$1 t0 pid delay
	shift
	t0=$(ms)
	echo "== $(date -u +%T) $*" >>"$P/$st.log"
	KILLED=0
	if [ "$st" = "$VICTIM" ] && [ "$armed" -gt 0 ]; then
		armed=$((armed - 1)) KILLED=1
		"$@" 2>>"$P/$st.log" &
		pid=$!
		rnd 3
		if [ "$R" = 0 ]; then
			# At an event: capture's or fetch's -o FILE published; a
			# writer's transaction begun (a new folder in staging/),
			# its manifest written and CURRENT's replacement being
			# written and synced (.tmp-CURRENT-*: the commit point
			# next) or its commit (CURRENT moved). Writers are polled
			# without a fork: their windows last milliseconds.
			EVENT=publication
			case $st in capture | fetch) ;; *)
				rnd 3
				EVENT=${EVENTS[$R]} ;;
			esac
			# capture and fetch: a look every few ms until 80% of their
			# last run, then without a pause (the rename is their end).
			while kill -0 "$pid" 2>/dev/null && ! event "$st"; do
				case $st in capture | fetch)
					[ $((${EPOCHREALTIME/./} / 1000 - t0)) -gt $((EST[$st] * 8 / 10)) ] || sleep 0.003 ;;
				esac
			done
			delay="$(($(ms) - t0)) ms, at its $EVENT"
		else
			rnd $((EST[$st] * 11 / 10 + 1))
			delay=$R
			sleep "$(secs "$delay")"
			delay="$delay ms"
		fi
		kill -9 "$pid" 2>/dev/null || true
		RC=0
		{ wait "$pid"; } 2>/dev/null || RC=$? # bash's "Killed" line: the kill is ours
		KILLS[$st]=$((KILLS[$st] + 1))
		DELAY=$delay
		return
	fi
	RC=0
	"$@" 2>>"$P/$st.log" || RC=$?
	[ "$RC" = 137 ] || EST[$st]=$(($(ms) - t0))
}

# ok STAGE CODES...: fails the soak unless RC is one of CODES.
ok() {
	local st=$1 c
	shift
	for c in "$@"; do [ "$RC" = "$c" ] && return; done
	tail -5 "$P/$st.log" >&2
	die "pass $K: $st exited $RC (log: $P/$st.log)"
}

current() { cat "$DS/CURRENT" 2>/dev/null || true; }

# event STAGE: whether STAGE's run has reached EVENT, the point an event
# kill waits for (builtins only: no fork between two looks; nullglob).
event() {
	local c='' n
	case $1:$EVENT in
	capture:*) [ -f "$obs" ] ;;
	fetch:*) [ -f "$res" ] ;;
	*:staging) n=("$DS"/staging/*); [ ${#n[@]} -gt "$staged" ] ;;
	*:rename) n=("$DS"/.tmp-CURRENT*); [ ${#n[@]} -gt "$renaming" ] ;;
	*) { read -r c <"$DS/CURRENT"; } 2>/dev/null; [ "$c" != "$before" ] ;;
	esac
}
# links: where the tables' current links point.
links() {
	local t
	for t in state torrents leases peers ledger; do
		printf '%s ' "$(readlink "$DS/$t/current" 2>/dev/null || true)"
	done
}
# counts: CURRENT, the current links, staging/'s folders, manifests and
# CURRENT's temporary files before a writer runs.
counts() {
	local n
	before=$(current) linked=$(links)
	n=("$DS"/staging/*) && staged=${#n[@]}
	n=("$DS"/manifests/*.json) && manifests=${#n[@]}
	n=("$DS"/.tmp-CURRENT*) && renaming=${#n[@]}
}
EVENTS=(staging rename commit)

# landed STAGE TEXT: records where the kill of STAGE landed.
landed() { LANDED[$1]+="${LANDED[$1]:+, }$2"; say "  pass $K: kill -9 $1 after $DELAY: $2"; }

# A writer's kill: committed or not (CURRENT moved), or it ended first.
writer_kill() { # writer_kill STAGE
	local m=("$DS"/manifests/*.json)
	if [ "$RC" != 137 ]; then landed "$1" "ended first ($RC)"
	elif [ "$(current)" != "$before" ] && [ "$(links)" = "$linked" ]; then
		landed "$1" "after its commit, no current link moved (half-published)"
	elif [ "$(current)" != "$before" ]; then landed "$1" "after its commit"
	elif [ ${#m[@]} -gt "$manifests" ]; then landed "$1" "manifest written, before its commit point"
	else landed "$1" "before its commit"; fi
}

# run_checks SQL DATASET: runs the DuckDB checks SQL (rows "CHECK",
# name, count of offending rows) of pass K on DATASET, and stops at the
# first broken one; then the pass's hash list becomes the one the next
# pass checks against.
run_checks() {
	local sql=$1 out bad
	printf '%s\n' "$sql" >"$P/check.sql"
	out=$("$DQ" --header=false --threads 2 -f "$P/check.sql" 2>"$P/check.log") || {
		tail -5 "$P/check.log" >&2
		die "pass $K: the DuckDB checks failed to run ($P/check.sql)"
	}
	printf '%s\n' "$out" | grep '^CHECK' >"$P/check.out" || true
	CHECKS=$(wc -l <"$P/check.out" | tr -d ' ')
	[ "$CHECKS" -gt 0 ] || die "pass $K: the DuckDB checks printed nothing ($P/check.sql)"
	bad=$(awk -F'\t' '$3 != 0 { print $2 " (" $3 ")"; exit }' "$P/check.out")
	[ -z "$bad" ] || die "pass $K: invariant broken: $bad; queries in $P/check.sql, dataset in $2"
	mv -f "$OUT/hashes-new.parquet" "$OUT/hashes.parquet"
}

STATE_GLOB="prefix=*/*.parquet', hive_partitioning = true, hive_types = {'prefix': VARCHAR}"
# exact_views: given the views obs (info_hash, observed_at) and res
# (info_hash, outcome, attempted_at) of the inputs the ledger applied,
# exist (per hash: n, f, l) and tried (attempts, last_attempt, status)
# recomputed from them. Both modes' checks use them.
exact_views() {
	cat <<'SQL'
CREATE TEMP VIEW exist AS SELECT info_hash, count(*) AS n, min(observed_at) AS f, max(observed_at) AS l FROM obs GROUP BY 1;
CREATE TEMP VIEW tried AS SELECT info_hash,
    count(*) FILTER (WHERE outcome NOT IN ('released', 'local_error', 'peers_penalised'))::INT AS attempts,
    max(attempted_at) FILTER (WHERE outcome <> 'released') AS last_attempt,
    CASE WHEN bool_or(outcome = 'ok') THEN 'fetched'
      WHEN bool_or(outcome NOT IN ('released', 'local_error', 'peers_penalised')) THEN 'failed' ELSE 'new' END AS status
  FROM res GROUP BY 1;
SQL
}
# exact_rows PREV: the checks both modes share, as VALUES rows (name,
# bad) over st, tor, led, obs and exist; PREV selects the hashes of the
# last pass. Each row ends in a comma.
exact_rows() {
	cat <<SQL
 ('one state row per info_hash', (SELECT count(*) - count(DISTINCT info_hash) FROM st)),
 ('each input in the ledger once', (SELECT count(*) FROM (SELECT name FROM led GROUP BY 1 HAVING count(*) > 1))),
 ('no hash lost since the last pass', (SELECT count(*) FROM ($1 EXCEPT SELECT info_hash FROM st))),
 ('existence = recomputed from the applied obs files', (SELECT count(*) FROM (
   (SELECT info_hash, n, f, l FROM exist EXCEPT SELECT info_hash, seen_count, first_seen, last_seen FROM st) UNION ALL
   (SELECT info_hash, seen_count, first_seen, last_seen FROM st EXCEPT SELECT info_hash, n, f, l FROM exist)))),
 ('sum(seen_count) = observation rows applied', (SELECT abs((SELECT sum(seen_count) FROM st) - (SELECT count(*) FROM obs)))),
 ('torrents: info_bytes hash (SHA-1) to info_hash', (SELECT count(*) FROM tor WHERE lower(hex(info_hash)) <> sha1(info_bytes))),
 ('torrents: one row per fetched hash, no other', (SELECT (SELECT count(*) - count(DISTINCT info_hash) FROM tor) + count(*) FROM (
   (SELECT info_hash FROM tor EXCEPT SELECT info_hash FROM st WHERE metadata_status = 'fetched') UNION ALL
   (SELECT info_hash FROM st WHERE metadata_status = 'fetched' EXCEPT SELECT info_hash FROM tor)))),
SQL
}
# check: the invariants above, on the dataset after pass K. Prints the
# name of the first broken one and fails, else records the pass's hashes.
check() {
	local obsl='' resl='' kept='' f sql
	for f in "$F"/obs-*.parquet; do [ -f "$f" ] && obsl+="${obsl:+, }'$f'"; done
	for f in "$F"/res-*.parquet; do [ -f "$f" ] && resl+="${resl:+, }'$f'"; done
	[ -n "$obsl" ] || die "pass $K: no observations file kept"
	local prev="SELECT info_hash FROM st WHERE false"
	[ ! -f "$OUT/hashes.parquet" ] || prev="SELECT info_hash FROM read_parquet('$OUT/hashes.parquet')"
	local resv="SELECT NULL::BLOB AS info_hash, NULL::VARCHAR AS outcome, NULL::TIMESTAMPTZ AS attempted_at, NULL::VARCHAR AS f WHERE false"
	[ -z "$resl" ] || resv="SELECT info_hash, outcome, attempted_at, parse_filename(filename) AS f FROM read_parquet([$resl], filename = true)"
	# A file of no rows (fetch of no job) commits nothing: no ledger entry.
	kept="SELECT DISTINCT parse_filename(filename) FROM read_parquet([$obsl], filename = true)"
	[ -z "$resl" ] || kept+=" UNION SELECT DISTINCT f FROM ($resv)"
	sql="CREATE TEMP VIEW st AS SELECT * FROM read_parquet('$DS/state/current/$STATE_GLOB);
CREATE TEMP VIEW ctl AS SELECT * FROM read_parquet('$CTL/state/current/$STATE_GLOB);
CREATE TEMP VIEW tor AS SELECT * FROM read_parquet('$DS/torrents/current/$STATE_GLOB);
CREATE TEMP VIEW fst AS SELECT * FROM read_parquet('$FULL/state/current/$STATE_GLOB);
CREATE TEMP VIEW ftor AS SELECT * FROM read_parquet('$FULL/torrents/current/$STATE_GLOB);
CREATE TEMP VIEW led AS SELECT parse_filename(name) AS name FROM read_parquet('$DS/ledger/current/*.parquet');
CREATE TEMP VIEW obs AS SELECT info_hash, observed_at FROM read_parquet([$obsl], filename = true)
  WHERE parse_filename(filename) IN (SELECT name FROM led);
CREATE TEMP VIEW res AS SELECT * FROM ($resv) WHERE f IN (SELECT name FROM led);
$(exact_views)
SELECT 'CHECK', * FROM (VALUES
 ('every kept obs and res file applied', (SELECT count(*) FROM ($kept EXCEPT SELECT name FROM led))),
$(exact_rows "$prev")
 ('attempts = counted result rows applied', (SELECT count(*) FROM (
   (SELECT info_hash, attempts FROM st WHERE attempts > 0 EXCEPT SELECT info_hash, attempts FROM tried WHERE attempts > 0) UNION ALL
   (SELECT info_hash, attempts FROM tried WHERE attempts > 0 EXCEPT SELECT info_hash, attempts FROM st WHERE attempts > 0)))),
 ('metadata_status and last_attempt = recomputed from the results', (SELECT count(*) FROM st LEFT JOIN tried USING (info_hash)
   WHERE metadata_status <> coalesce(status, 'new') OR st.last_attempt IS DISTINCT FROM tried.last_attempt)),
 ('no lease left after the pass', (SELECT count(*) FROM read_parquet('$DS/leases/current/*.parquet'))),
 ('control replay (dedup alone, no kill): same existence columns', (SELECT count(*) FROM (
   (SELECT info_hash, first_seen, last_seen, seen_count, last_source, activity FROM st EXCEPT
    SELECT info_hash, first_seen, last_seen, seen_count, last_source, activity FROM ctl) UNION ALL
   (SELECT info_hash, first_seen, last_seen, seen_count, last_source, activity FROM ctl EXCEPT
    SELECT info_hash, first_seen, last_seen, seen_count, last_source, activity FROM st)))),
 ('full control (dedup and unleased results, no kill): same state', (SELECT count(*) FROM (
   (SELECT * EXCLUDE (prefix) FROM st EXCEPT SELECT * EXCLUDE (prefix) FROM fst) UNION ALL
   (SELECT * EXCLUDE (prefix) FROM fst EXCEPT SELECT * EXCLUDE (prefix) FROM st)))),
 ('full control: same torrents', (SELECT count(*) FROM (
   (SELECT * EXCLUDE (prefix) FROM tor EXCEPT SELECT * EXCLUDE (prefix) FROM ftor) UNION ALL
   (SELECT * EXCLUDE (prefix) FROM ftor EXCEPT SELECT * EXCLUDE (prefix) FROM tor)))),
 ('full control: same penalised peers', (SELECT count(*) FROM (
   (SELECT * FROM read_parquet('$DS/peers/current/*.parquet') EXCEPT SELECT * FROM read_parquet('$FULL/peers/current/*.parquet')) UNION ALL
   (SELECT * FROM read_parquet('$FULL/peers/current/*.parquet') EXCEPT SELECT * FROM read_parquet('$DS/peers/current/*.parquet')))))
) v(name, bad);
COPY (SELECT info_hash FROM st) TO '$OUT/hashes-new.parquet' (FORMAT parquet);
$(tiers_copy)"
	run_checks "$sql" "$DS"
}

# tiers_copy: the SQL that keeps, of the state st after pass K, what the
# archive checks read (tiers_check) in P/tiers.parquet.
tiers_copy() {
	echo "COPY (SELECT $K AS pass, info_hash, tier, seen_count, reactivated_at FROM st) TO '$P/tiers.parquet' (FORMAT parquet);"
}

# tiers_check EXACT: after the passes, from the tiers each check kept:
# ARCHIVED, the hashes that went cold (COLDED times: hot after a pass, or
# new, and cold after the next); REWARMED, the cold hashes a sighting made
# hot (WARMED times: cold after a pass, hot after the next with more
# sightings); PULLED, the hashes whose retry a sighting pulled forward
# (reactivated_at moved; PULLED_COLD of them while cold). Fails unless
# the soak reached both, or if COLDED or WARMED is above the totals
# merge_archived_to_cold or dedup_rewarmed of the last status.json; with
# EXACT, unless they are equal (no pass hides a change: merge archives
# and dedup rewarms, each once per pass, and a sighted hash is not
# archived in its pass; in cron mode a killed pass's catch-up merge runs
# at the next pass's clock and can archive hashes its dedup then
# rewarms, unseen between passes).
tiers_check() {
	local st='' k
	for k in $(seq "$PASSES" -1 1); do [ ! -f "$OUT/passes/$k/status.json" ] || { st=$OUT/passes/$k/status.json && break; }; done
	[ -n "$st" ] || die "no pass wrote a status.json to read the totals from"
	read -r ARCHIVED COLDED REWARMED WARMED PULLED PULLED_COLD < <("$DQ" --header=false --threads 2 "
CREATE TEMP VIEW t AS SELECT *, lag(tier) OVER w AS pt, lag(seen_count) OVER w AS ps, lag(reactivated_at) OVER w AS pr
  FROM read_parquet('$OUT/passes/*/tiers.parquet') WINDOW w AS (PARTITION BY info_hash ORDER BY pass);
SELECT count(DISTINCT info_hash) FILTER (WHERE tier = 'cold'),
  count(*) FILTER (WHERE tier = 'cold' AND coalesce(pt, 'hot') = 'hot'),
  count(DISTINCT info_hash) FILTER (WHERE pt = 'cold' AND tier = 'hot' AND seen_count > ps),
  count(*) FILTER (WHERE pt = 'cold' AND tier = 'hot' AND seen_count > ps),
  count(DISTINCT info_hash) FILTER (WHERE reactivated_at IS DISTINCT FROM pr AND reactivated_at IS NOT NULL),
  count(DISTINCT info_hash) FILTER (WHERE pt = 'cold' AND reactivated_at IS DISTINCT FROM pr AND reactivated_at IS NOT NULL)
FROM t" 2>"$OUT/tiers.log" | tail -1) || die "the DuckDB archive checks failed to run ($OUT/tiers.log)"
	[ -n "$PULLED_COLD" ] || die "the DuckDB archive checks printed nothing ($OUT/tiers.log)"
	T_ARCH=$(json_int "$st" merge_archived_to_cold) T_WARM=$(json_int "$st" dedup_rewarmed) T_REACT=$(json_int "$st" dedup_reactivated)
	T_ARCH=${T_ARCH:-0} T_WARM=${T_WARM:-0} T_REACT=${T_REACT:-0}
	[ "$COLDED" -gt 0 ] || die "the soak reached no archiving: no hash went cold in $PASSES passes (policy: ${POLICY[*]})"
	[ "$WARMED" -gt 0 ] || die "the soak reached no reactivation: no cold hash came back hot on a sighting in $PASSES passes ($ARCHIVED went cold)"
	local a=$T_ARCH w=$T_WARM rel=above
	[ -z "$1" ] || a=$COLDED w=$WARMED rel='not equal to'
	[ "$COLDED" -le "$T_ARCH" ] && [ "$T_ARCH" -le "$a" ] ||
		die "invariant broken: $COLDED hot->cold changes between passes, $rel merge_archived_to_cold $T_ARCH ($st; tiers in $OUT/passes/*/tiers.parquet)"
	[ "$WARMED" -le "$T_WARM" ] && [ "$T_WARM" -le "$w" ] ||
		die "invariant broken: $WARMED cold->hot changes on a sighting between passes, $rel dedup_rewarmed $T_WARM ($st; tiers in $OUT/passes/*/tiers.parquet)"
}

# merge_ignored FILE: results a merge ignored as late or stale (none
# should be: each result here is under its live lease).
merge_ignored() {
	local k n sum=0
	for k in late_ok_stored late_failures_ignored stale_failures_ignored failures_after_fetch_ignored stale_releases_ignored; do
		n=$(json_int "$1" "$k")
		sum=$((sum + ${n:-0}))
	done
	echo "$sum"
}

START=$("$IH" clock --now "$(date -u +%FT%TZ)" --add=-$((PASSES * STEP_H + 1))h)
BEGAN=$(date +%s)
if [ "$MODE" = cron ]; then
	. scripts/soak-cron.sh # the passes of crawl-pass.sh, its own checks and summary
	exit 0
fi
say "soak: seed $SEED, $PASSES passes from $START, testnet ${BOOT%%,*},…"
for K in $(seq 1 "$PASSES"); do
	P=$OUT/passes/$K
	mkdir -p "$P"
	T=$("$IH" clock --now "$START" --add="$((K * STEP_H))h")
	WALL=$("$IH" clock)
	rnd 6
	i=$R
	# One kill in four is followed by another, of the run after it.
	rnd 4
	VICTIM=none armed=$((R == 0 ? 2 : 1))
	[ "$i" = 5 ] || VICTIM=${STAGES[$i]}
	[ "$VICTIM" != none ] || NONE=$((NONE + 1))
	obs=$F/obs-$K.parquet jobs=$F/jobs-$K.parquet res=$F/res-$K.parquet
	now() { "$IH" clock --now "$T" --started "$WALL"; }

	n=$(now)
	capture=("$IH" capture --data "$DS" --now "$n" --bootstrap "$BOOT" --dht-listen 127.0.0.1:0 --node-ids 4
		--duration "$CAPTURE" -o "$obs")
	run capture "${capture[@]}"
	while [ "$KILLED" = 1 ]; do
		if [ "$RC" != 137 ]; then landed capture "ended first ($RC)"; break; fi
		if [ -f "$obs" ]; then landed capture "after it published $obs: used"; RC=0; break; fi
		landed capture "before it published: run again"
		run capture "${capture[@]}"
	done
	ok capture 0
	[ -f "$obs" ] || die "pass $K: capture wrote no $obs"

	n=$(now)
	counts
	dedup=("$IH" dedup --data "$DS" --now "$n" --announced-peers --stats-json "$P/dedup.json" "$obs")
	run dedup "${dedup[@]}"
	while [ "$KILLED" = 1 ]; do
		writer_kill dedup
		counts
		run dedup "${dedup[@]}"
	done
	ok dedup 0
	for c in "$CTL" "$FULL"; do
		"$IH" dedup --data "$c" --now "$n" --announced-peers "$obs" 2>>"$P/control.log" ||
			die "pass $K: the control's dedup failed ($P/control.log)"
	done

	n=$(now)
	counts
	plan=("$IH" plan-retries --data "$DS" --now "$n" --limit "$LIMIT" --stats-json "$P/plan.json" -o "$jobs")
	# replacing: the last run was --replace (over $P/jobs.prev, a copy
	# of the file it found); ended: the jobs file there has had its
	# leases ended by a killed --replace run's commit (not published).
	replacing=0 ended=0
	run plan-retries "${plan[@]}"
	while [ "$KILLED" = 1 ]; do
		writer_kill plan-retries
		[ "$RC" = 137 ] || break
		if [ -f "$jobs" ] && { [ "$replacing" = 0 ] || ! cmp -s -- "$jobs" "$P/jobs.prev"; }; then
			ended=0 # the killed run published it: its leases live
		elif [ "$(current)" != "$before" ]; then
			ended=1 # the killed --replace run committed, ending them, and did not publish
		fi
		rnd 2
		counts
		if [ -f "$jobs" ] && { [ "$R" = 0 ] || [ "$ended" = 1 ]; }; then
			landed plan-retries "$jobs there$([ "$ended" = 0 ] || echo ', its leases ended by a killed --replace run'): planned over with --replace"
			cp -f -- "$jobs" "$P/jobs.prev" && replacing=1
			run plan-retries "${plan[@]}" --replace
		elif [ -f "$jobs" ]; then
			landed plan-retries "$jobs there, its jobs leased: fetched as it is"
			RC=0 KILLED=0
		else
			replacing=0
			run plan-retries "${plan[@]}"
		fi
	done
	ok plan-retries 0

	n=$(now)
	fetch=("$IH" fetch --now "$n" --bootstrap "$BOOT" --dht-listen 127.0.0.1:0 --dht-state "$DS/dht-state"
		--timeout 5s --deadline 20s --stats-json "$P/fetch.json" "$jobs" -o "$res")
	run fetch "${fetch[@]}"
	while [ "$KILLED" = 1 ]; do
		if [ "$RC" != 137 ]; then landed fetch "ended first ($RC)"; break; fi
		if [ -f "$res" ]; then landed fetch "after it published $res: used"; RC=0; break; fi
		landed fetch "before it published: run again on the same jobs"
		run fetch "${fetch[@]}"
	done
	ok fetch 0 3

	n=$(now)
	counts
	merge=("$IH" merge --data "$DS" --now "$n" --stats-json "$P/merge.json" "$res")
	run merge "${merge[@]}"
	while [ "$KILLED" = 1 ]; do
		writer_kill merge
		counts
		run merge "${merge[@]}"
	done
	ok merge 0
	# The full control: this pass's results without their leases (fetch
	# of a hash list writes such rows: they count while the hash has no
	# lease and the attempt is newer than its last), released rows left
	# out (they only end a lease), merged with this merge's --now.
	"$DQ" --threads 2 "COPY (SELECT * REPLACE (NULL::VARCHAR AS lease_id) FROM read_parquet('$res')
		WHERE outcome <> 'released') TO '$F/unleased/${res##*/}' (FORMAT parquet)" >/dev/null 2>>"$P/control.log" &&
		"$IH" merge --data "$FULL" --now "$n" "$F/unleased/${res##*/}" 2>>"$P/control.log" ||
		die "pass $K: the full control's merge failed ($P/control.log)"
	ign=$(merge_ignored "$P/merge.json")
	[ "$ign" = 0 ] || die "pass $K: invariant broken: merge ignored $ign results as late or stale ($P/merge.json)"

	# Every file as the manifest says (size, CRC-32C); no input set aside
	# (partial, rejected or pending) and no snapshot left unpublished.
	"$IH" status --data "$DS" --now "$n" --verify --format json >"$P/status.json" 2>"$P/status.log" ||
		die "pass $K: invariant broken: status --verify exited $? ($P/status.log)"
	for k in partial_inputs rejected_inputs pending_inputs unpublished; do
		grep -q "^  \"$k\": \[\]" "$P/status.json" ||
			die "pass $K: invariant broken: status lists $k ($P/status.json)"
	done
	check
	say "  pass $K ($T): victim $VICTIM; $((CHECKS + 6)) invariants hold"
done

tiers_check exact
read -r HASHES SIGHTINGS FETCHED TORRENTS ROWS < <("$DQ" --header=false --threads 2 "SELECT
  (SELECT count(*) FROM read_parquet('$DS/state/current/$STATE_GLOB)),
  (SELECT sum(seen_count) FROM read_parquet('$DS/state/current/$STATE_GLOB)),
  (SELECT count(*) FROM read_parquet('$DS/state/current/$STATE_GLOB) WHERE metadata_status = 'fetched'),
  (SELECT count(*) FROM read_parquet('$DS/torrents/current/$STATE_GLOB)),
  (SELECT count(*) FROM read_parquet('$F/res-*.parquet'))" 2>/dev/null | tail -1)
echo "soak: seed $SEED, $PASSES passes in $(($(date +%s) - BEGAN)) s: all $((CHECKS + 6)) invariants held after every pass"
echo "  passes without a kill: $NONE"
for s in "${STAGES[@]}"; do
	printf '  %-12s %d kills%s\n' "$s" "${KILLS[$s]}" "${LANDED[$s]:+: ${LANDED[$s]}}"
done
echo "  dataset: $HASHES hashes, $SIGHTINGS sightings, $FETCHED fetched, $TORRENTS torrents; $ROWS fetch results merged"
echo "  archive: $ARCHIVED hashes went cold ($COLDED times; merge_archived_to_cold $T_ARCH), $REWARMED came back hot on a sighting ($WARMED times; dedup_rewarmed $T_WARM); retry pulled forward: $PULLED hashes, $PULLED_COLD while cold (dedup_reactivated $T_REACT)"
