#!/usr/bin/env bash
# bench-schedule.sh: times `infohash plan-retries` and `infohash merge` over
# generated states of 10M and 100M hashes and prints time, rows/s and peak
# RSS beside the targets of issue 5 (< 60 s each for 100M hashes, memory
# bounded by one partition).
#
#   scripts/bench-schedule.sh              # 10M and 100M
#   SIZES=10M scripts/bench-schedule.sh    # one size
#   LIMIT=10000 SIZES=10M scripts/bench-schedule.sh
#
# States are generated once by tools/stategen and cached in
# $BENCH_DIR (default bench-data/; delete state-* to regenerate). Each run
# works on a hard-link copy (infohash never changes a file in place), so
# the cached state stays as generated. The state mixes never-tried (35%),
# fetched (20%) and failed hashes at every step of the schedule, due or
# not, with some in the cold tier. merge applies one fetch result for
# every planned job (no_peers, a tenth peer-level failures). Linux only:
# GNU time (lib.sh's timed) and GNU cp -al.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

SIZES=${SIZES-"10M 100M"}
BENCH_DIR=${BENCH_DIR:-bench-data}
LIMIT=${LIMIT:-100000}
NOW=${NOW:-$(date -u +%Y-%m-%dT00:00:00Z)} # today: a fixed date would be refused 10 years on
OUT=$BENCH_DIR/run
mkdir -p "$OUT"

if [ -z "${INFOHASH_BIN:-}" ]; then
	$GO build -o bin/infohash ./cmd/infohash || die "cannot build bin/infohash"
fi
$GO build -o bin/stategen ./tools/stategen || die "cannot build bin/stategen"
IH=${INFOHASH_BIN:-bin/infohash}
# merge runs an hour after plan-retries: infohash's clock arithmetic, not
# GNU date -d, which macOS and the BSDs lack. It also checks NOW before a
# state is generated.
merge_now=$("$IH" clock --now "$NOW" --add 1h) ||
	die "NOW=$NOW: cannot add an hour with $IH clock --add (see above)"

for size in $SIZES; do
	n=$(count_of "$size")
	base=$BENCH_DIR/state-$size
	if [ ! -s "$base/CURRENT" ]; then
		rm -rf "$base"
		say "generating a state of $size hashes in $base ..."
		timed "stategen-$size" bin/stategen -data "$base" -n "$n" -now "$NOW"
		say "  generated in $TIMED_S s"
	fi
	ds=$BENCH_DIR/ds-schedule-$size
	rm -rf "$ds"
	cp -al "$base" "$ds" # portability: Linux only, as timed (GNU time) is: GNU cp's hard-link copy
	# The data files are never written in place, but LOCK is (host and PID): give the copy its own.
	rm -f "$ds/LOCK" && : >"$ds/LOCK"
	part_mb=$(du -sk "$base/state" | awk '{ printf "%.1f", $1 / 1024 / 256 }')

	# --replace: OUT keeps the last bench's jobs file (its leases are in
	# a copy of the state since removed).
	timed "plan-$size" "$IH" plan-retries --data "$ds" --now "$NOW" --limit "$LIMIT" --replace \
		-o "$OUT/jobs-$size.parquet" --stats-json "$OUT/plan-$size.json"
	plan_s=$TIMED_S plan_mb=$TIMED_MB
	planned=$(json_int "$OUT/plan-$size.json" planned)

	bin/stategen -jobs "$OUT/jobs-$size.parquet" -results "$OUT/results-$size.parquet"
	timed "merge-$size" "$IH" merge --data "$ds" --now "$merge_now" \
		"$OUT/results-$size.parquet" --stats-json "$OUT/merge-$size.json"
	merge_s=$TIMED_S merge_mb=$TIMED_MB
	applied=$(json_int "$OUT/merge-$size.json" failures_applied)

	echo "== $size hashes (one partition: ~$part_mb MB on disk), --limit $LIMIT"
	printf '  %-14s %8.2f s  %7.2f M hashes/s  peak RSS %6d MB  (%s jobs)\n' plan-retries "$plan_s" "$(ratio "$n" "${plan_s}e6")" "$plan_mb" "$planned"
	printf '  %-14s %8.2f s  %7.2f M hashes/s  peak RSS %6d MB  (%s results applied)\n' merge "$merge_s" "$(ratio "$n" "${merge_s}e6")" "$merge_mb" "$applied"
	if [ "$size" = 100M ]; then
		echo "  target < 60 s each: plan-retries $(verdict "$plan_s < 60"), merge $(verdict "$merge_s < 60")"
	fi
	[ "$applied" = "$planned" ] || echo "  WRONG: $planned jobs but $applied results applied"
	rm -rf "$ds"
done
