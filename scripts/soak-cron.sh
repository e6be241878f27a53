# shellcheck shell=bash
# SOAK_MODE=cron make soak: scripts/soak.sh sources this file once its
# testnet runs (loopback only) to soak the cron path under kill -9. It runs
# SOAK_PASSES passes of scripts/cron/crawl-pass.sh SOAK_DIR/cron
# SOAK_CAPTURE, as cron would (INFOHASH, BOOTSTRAP, LIMIT=SOAK_LIMIT,
# CAPTURE_ARGS and FETCH_ARGS as make demo sets them, LOCK_WAIT=1m,
# PASS=K, NOW the soak's clock, SOAK_STEP_HOURS apart), each in a process
# group of its own. Six passes in seven are killed (SIGKILL), drawn at
# random: the whole pass, its process group (one kill in six), after a
# random delay of up to 1.1 times the last whole pass; or one stage
# (capture, dedup, plan-retries, fetch or merge, drawn alike), the first
# process whose command line is that stage of the binary (a catch-up run
# too), found by pgrep in the pass's group, after a random delay of up to
# 1.1 times that stage's last run (its --stats-json seconds; none, one
# kill in three). The next pass
# runs as cron would run it: no operator action, its catch-up of leftovers
# has to recover.
#
# crawl-pass.sh removes a stream once it is applied (marker FILE.applied).
# So that the checks can recompute from what the dataset applied, INFOHASH
# is a wrapper (SOAK_DIR/cron-bin/infohash) that, for dedup and merge,
# copies the input file (the last argument) to SOAK_DIR/spool/PASS--NAME
# and then execs the binary (so the stage's command line is the binary's).
# When dedup or merge runs, the stream's writer has ended (it holds the
# pass's lock until then), so the copy is what the stage reads. After
# each pass bin/arrows2csv prints each copy's whole batches (a stream cut
# by a kill up to its last whole batch, as dedup and merge apply it) as
# CSV, which DuckDB reads.
#
# Exact after every pass (the first broken ends the run, exit 1):
#   - the pass's exit status is 0 or 3 (partial) when not killed; killed,
#     137 (whole pass), or 1 or 3 (a stage: exit 1 for the pass's own
#     step, 3 for a catch-up run), or 0/3 if it ended first; never 2 (a
#     cut stream taken for bad input) nor 75 (a lock left held);
#   - the checks both modes share (soak.sh's exact_rows): one state row per
#     hash, no hash lost, existence columns and sum(seen_count) equal a
#     recomputation from the copies of the observation streams the ledger
#     applied, each input in the ledger once, torrents verified (SHA-1,
#     one row per fetched hash);
#   - every input in the ledger has its copy, and the ledger's row count
#     for it equals the copy's whole-batch rows;
#   - no double count of attempts: per hash, attempts at most the counted
#     result rows applied (merge ignores failures that come after their
#     lease ended, which a killed pass's leftovers can, so not equal);
#     fetched exactly when an ok row was applied; failed only with a
#     counted row applied; last_attempt not after the latest row applied;
#   - status --verify passes (sizes and CRC-32C) and lists no rejected
#     input; after a pass not killed, also no partial, pending or
#     unpublished input and no unapplied work file;
#   - after a pass not killed, or whose plan-retries ran (its plan.json):
#     no lease outlives its lease_until by more than one pass
#     (lease_until + SOAK_STEP_HOURS before the pass's clock). Leases a
#     killed stream cut legitimately stay until then.
# After the passes (soak.sh's tiers_check, under SOAK_POLICY set in
# SOAK_DIR/cron before the first pass): some hash went cold and some cold
# hash came back hot on a sighting, seen between passes, and no more often
# than the totals merge_archived_to_cold and dedup_rewarmed say (not
# equal: a killed pass's catch-up merge, at the next pass's clock, can
# archive hashes unseen since, which that pass's dedup then rewarms).
# Not checked here (the default mode does): the controls replayed without
# kills (crawl-pass gives each step its own --now, and a killed pass's
# catch-up applies its inputs at the next pass's clock) and "no result
# ignored as late or stale" (leftovers are late by design).

CD=$OUT/cron SPOOL=$OUT/spool WRAP=$OUT/cron-bin/infohash
REAL=$(cd "$(dirname "$IH")" && pwd)/$(basename "$IH")
mkdir -p "$SPOOL" "${WRAP%/*}"
cat >"$WRAP" <<EOF
#!/usr/bin/env bash
# soak: a copy of dedup's or merge's input, then the binary itself.
case \${1:-} in dedup | merge)
	in=\${*: -1} name=
	if [ -s "\$in" ]; then
		name=\${in%/*} && name=\${name##*/}--\${in##*/}
		cp -f -- "\$in" "$SPOOL/.\$name.\$\$" && mv -f -- "$SPOOL/.\$name.\$\$" "$SPOOL/\$name"
	fi ;;
esac
exec "$REAL" "\$@"
EOF
chmod +x "$WRAP"

export INFOHASH=$WRAP BOOTSTRAP=$BOOT LIMIT LOCK_WAIT=1m
export CAPTURE_ARGS="--dht-listen 127.0.0.1:0 --node-ids 4"
export FETCH_ARGS="--dht-listen 127.0.0.1:0 --timeout 5s --deadline 20s"
# A soak stopped during a pass stops that pass too (its group), then the testnet.
RUNNING=''
trap '[ -z "$RUNNING" ] || kill -9 -- "-$RUNNING" 2>/dev/null; kill "$TESTNET" 2>/dev/null || true; wait "$TESTNET" 2>/dev/null || true' EXIT
CSTAGES=(capture dedup plan-retries fetch merge)
declare -A CKILLS=() CLANDED=()
for s in "${CSTAGES[@]}" pass; do CKILLS[$s]=0 CLANDED[$s]=''; done
EST_PASS=12000 NONE=0 PARTIAL=0

# cron_pass K T: runs pass K at clock T; kills it or a stage of it as
# drawn. Sets RC, VICTIM (none, pass or a stage) and WHERE.
cron_pass() {
	local k=$1 t=$2 t0 pid pg delay seen=''
	t0=$(ms)
	rnd 7
	VICTIM=none WHERE=''
	case $R in 5) VICTIM=pass ;; 6) ;; *) VICTIM=${CSTAGES[$R]} ;; esac
	set -m # the pass gets a process group of its own (its pid)
	NOW=$t PASS=$k scripts/cron/crawl-pass.sh "$CD" "$CAPTURE" 2>"$P/pass.log" &
	pid=$!
	set +m
	pg=$pid RUNNING=$pid
	case $VICTIM in
	none) ;;
	pass)
		rnd $((EST_PASS * 11 / 10 + 1))
		delay=$R
		sleep "$(secs "$delay")"
		kill -9 -- "-$pg" 2>/dev/null && WHERE="killed after $delay ms" ;;
	*)
		# The stage's first process in the group, then a random delay.
		while kill -0 "$pid" 2>/dev/null; do
			seen=$(pgrep -g "$pg" -f -- "^$REAL $VICTIM " | head -1) || true
			[ -z "$seen" ] || break
			sleep 0.005
		done
		WHERE="not seen before the pass ended"
		if [ -n "$seen" ]; then
			rnd 3
			delay=0
			[ "$R" = 0 ] || { rnd $((EST[$VICTIM] * 11 / 10 + 1)) && delay=$R; }
			sleep "$(secs "$delay")"
			WHERE="ended first"
			kill -9 "$seen" 2>/dev/null && WHERE="killed after $delay ms"
		fi ;;
	esac
	RC=0
	{ wait "$pid"; } 2>/dev/null || RC=$?
	RUNNING=''
	if [ "$VICTIM" = none ]; then
		EST_PASS=$(($(ms) - t0))
		NONE=$((NONE + 1))
		return
	fi
	CKILLS[$VICTIM]=$((CKILLS[$VICTIM] + 1))
	[ -n "$WHERE" ] || WHERE="ended first"
	WHERE+=" (exit $RC)"
	CLANDED[$VICTIM]+="${CLANDED[$VICTIM]:+, }$WHERE"
	say "  pass $k: kill -9 $VICTIM: $WHERE"
}

# cron_est: EST[stage], the stage's run in pass K (its --stats-json
# seconds, fetch's elapsed_ms, plus 50 ms to start), for the delays of the next stage kills.
cron_est() {
	local st f whole frac
	for st in capture dedup plan-retries fetch merge; do
		f=$CD/work/$K/${st%-retries}.json
		[ -f "$f" ] || continue
		if [ "$st" = fetch ]; then # its elapsed_ms
			whole=$(sed -n 's/^ *"elapsed_ms": \([0-9]*\).*/\1/p' "$f")
			[ -z "$whole" ] || EST[fetch]=$((10#$whole + 50))
			continue
		fi
		read -r whole frac < <(sed -n 's/^ *"seconds": \([0-9]*\)\.\{0,1\}\([0-9]\{0,3\}\).*/\1 \2/p' "$f") || continue
		frac=${frac}000
		EST[$st]=$((10#$whole * 1000 + 10#${frac:0:3} + 50))
	done
}

# cron_rc: the pass's exit status as the header says, else the soak fails.
cron_rc() {
	local okc='0 3'
	case $VICTIM in none) ;; pass) okc='0 3 137' ;; *) okc='0 1 3' ;; esac
	[ "$RC" != 3 ] || PARTIAL=$((PARTIAL + 1))
	case " $okc " in *" $RC "*) return ;; esac
	tail -5 "$P/pass.log" >&2
	die "pass $K: invariant broken: crawl-pass.sh exited $RC (victim $VICTIM; log: $P/pass.log)"
}

# spool_csv: a CSV of every copy's whole batches, made again when the copy
# is newer. A copy with no schema (its writer killed at once) gets none.
spool_csv() {
	local f
	for f in "$SPOOL"/*--*.arrows; do
		[ ! -f "$f.csv" ] || [ "$f" -nt "$f.csv" ] || continue
		if bin/arrows2csv "$f" >"$f.csv.tmp" 2>>"$P/spool.log"; then
			mv -f "$f.csv.tmp" "$f.csv"
		else
			rm -f "$f.csv.tmp" "$f.csv"
		fi
	done
}

# cron_status: status --verify passes; no rejected input; after a pass not
# killed, nothing partial, pending, unapplied or unpublished.
cron_status() {
	local k lists=rejected_inputs
	[ "$VICTIM" != none ] || lists+=" partial_inputs pending_inputs unapplied_work unpublished"
	"$IH" status --data "$CD" --now "$("$IH" clock --now "$T" --started "$WALL")" --verify --format json \
		>"$P/status.json" 2>"$P/status.log" ||
		die "pass $K: invariant broken: status --verify exited $? ($P/status.log)"
	for k in $lists; do
		grep -q "^  \"$k\": \[\]" "$P/status.json" ||
			die "pass $K: invariant broken: status lists $k ($P/status.json)"
	done
}

# cron_check: the DuckDB checks of the header on the dataset after pass K.
cron_check() {
	local obsl='' resl='' f sql leases="SELECT 0"
	for f in "$SPOOL"/*--observations.arrows.csv; do obsl+="${obsl:+, }'$f'"; done
	for f in "$SPOOL"/*--results.arrows.csv; do resl+="${resl:+, }'$f'"; done
	local prev="SELECT info_hash FROM st WHERE false"
	[ ! -f "$OUT/hashes.parquet" ] || prev="SELECT info_hash FROM read_parquet('$OUT/hashes.parquet')"
	local csv="header = true, all_varchar = true, filename = true"
	local oc="SELECT NULL AS name, NULL::BLOB AS info_hash, NULL::TIMESTAMPTZ AS observed_at WHERE false"
	[ -z "$obsl" ] || oc="SELECT parse_filename(filename, true) AS name, unhex(info_hash) AS info_hash,
  observed_at::TIMESTAMPTZ AS observed_at FROM read_csv([$obsl], $csv)"
	local rc="SELECT NULL AS name, NULL::BLOB AS info_hash, NULL AS outcome, NULL::TIMESTAMPTZ AS attempted_at WHERE false"
	[ -z "$resl" ] || rc="SELECT parse_filename(filename, true) AS name, unhex(info_hash) AS info_hash, outcome,
  attempted_at::TIMESTAMPTZ AS attempted_at FROM read_csv([$resl], $csv)"
	# The leases an ended lease's hash had: dropped by the pass's plan.
	[ "$VICTIM" != none ] && [ ! -f "$CD/work/$K/plan.json" ] || leases="SELECT count(*) FROM read_parquet('$CD/leases/current/*.parquet')
  WHERE lease_until + INTERVAL $STEP_H HOUR < TIMESTAMPTZ '$T'"
	sql="CREATE TEMP VIEW st AS SELECT * FROM read_parquet('$CD/state/current/$STATE_GLOB);
CREATE TEMP VIEW tor AS SELECT * FROM read_parquet('$CD/torrents/current/$STATE_GLOB);
CREATE TEMP VIEW led AS SELECT replace(regexp_replace(name, '^.*/work/', ''), '/', '--') AS name, rows
  FROM read_parquet('$CD/ledger/current/*.parquet');
CREATE TEMP VIEW ocopy AS $oc;
CREATE TEMP VIEW rcopy AS $rc;
CREATE TEMP VIEW copies AS SELECT name, count(*) AS n FROM (SELECT name FROM ocopy UNION ALL SELECT name FROM rcopy) GROUP BY 1;
CREATE TEMP VIEW obs AS SELECT info_hash, observed_at FROM ocopy WHERE name IN (SELECT name FROM led);
CREATE TEMP VIEW res AS SELECT * FROM rcopy WHERE name IN (SELECT name FROM led);
$(exact_views)
SELECT 'CHECK', * FROM (VALUES
$(exact_rows "$prev")
 ('every input in the ledger has its copy', (SELECT count(*) FROM (SELECT name FROM led EXCEPT SELECT name FROM copies))),
 ('ledger rows = the copy''s whole-batch rows', (SELECT count(*) FROM led JOIN copies USING (name) WHERE rows <> n)),
 ('attempts <= counted result rows applied', (SELECT count(*) FROM st LEFT JOIN tried USING (info_hash)
   WHERE st.attempts > coalesce(tried.attempts, 0))),
 ('fetched = an ok row applied; failed: a counted row applied', (SELECT count(*) FROM st LEFT JOIN tried USING (info_hash)
   WHERE (metadata_status = 'fetched') <> (coalesce(status, 'new') = 'fetched')
     OR (metadata_status = 'failed' AND coalesce(status, 'new') = 'new'))),
 ('last_attempt not after the latest result applied', (SELECT count(*) FROM st LEFT JOIN tried USING (info_hash)
   WHERE st.last_attempt > tried.last_attempt OR (st.last_attempt IS NOT NULL AND tried.last_attempt IS NULL))),
 ('no lease past its lease_until + one pass', ($leases))
) v(name, bad);
COPY (SELECT info_hash FROM st) TO '$OUT/hashes-new.parquet' (FORMAT parquet);
$(tiers_copy)"
	run_checks "$sql" "$CD"
}

say "soak: cron mode, seed $SEED, $PASSES passes of crawl-pass.sh from $START, testnet ${BOOT%%,*},…"
for K in $(seq 1 "$PASSES"); do
	P=$OUT/passes/$K
	mkdir -p "$P"
	T=$("$IH" clock --now "$START" --add="$((K * STEP_H))h")
	WALL=$("$IH" clock)
	cron_pass "$K" "$T"
	cron_rc
	cron_est
	if [ ! -f "$CD/CURRENT" ]; then
		# A pass killed before its dedup's commit, the dataset's first.
		[ "$VICTIM" != none ] || die "pass $K: invariant broken: a pass not killed left no dataset in $CD"
		say "  pass $K ($T): victim $VICTIM, exit $RC; no dataset yet"
		continue
	fi
	spool_csv
	cron_status
	cron_check
	say "  pass $K ($T): victim $VICTIM, exit $RC; $((CHECKS + 2)) invariants hold"
done

tiers_check '' # a killed pass's catch-up merge can archive a hash its dedup then rewarms: not exact
CATCHUPS=$(cat "$OUT"/passes/*/pass.log | grep -c ': catch-up: ' || true)
read -r HASHES SIGHTINGS FETCHED TORRENTS < <("$DQ" --header=false --threads 2 "SELECT
  (SELECT count(*) FROM read_parquet('$CD/state/current/$STATE_GLOB)),
  (SELECT sum(seen_count) FROM read_parquet('$CD/state/current/$STATE_GLOB)),
  (SELECT count(*) FROM read_parquet('$CD/state/current/$STATE_GLOB) WHERE metadata_status = 'fetched'),
  (SELECT count(*) FROM read_parquet('$CD/torrents/current/$STATE_GLOB))" 2>/dev/null | tail -1)
echo "soak: cron mode, seed $SEED, $PASSES passes in $(($(date +%s) - BEGAN)) s: all $((CHECKS + 2)) invariants held after every pass"
echo "  passes without a kill: $NONE; passes that exited 3 (partial): $PARTIAL; catch-up lines logged: $CATCHUPS"
for s in pass "${CSTAGES[@]}"; do
	printf '  %-12s %d kills%s\n' "$s" "${CKILLS[$s]}" "${CLANDED[$s]:+: ${CLANDED[$s]}}"
done
echo "  dataset: $HASHES hashes, $SIGHTINGS sightings, $FETCHED fetched, $TORRENTS torrents"
echo "  archive: $ARCHIVED hashes went cold ($COLDED times; merge_archived_to_cold $T_ARCH), $REWARMED came back hot on a sighting ($WARMED times; dedup_rewarmed $T_WARM); retry pulled forward: $PULLED hashes, $PULLED_COLD while cold (dedup_reactivated $T_REACT)"
