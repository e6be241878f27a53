#!/usr/bin/env bash
# bench-export.sh: times `infohash export` of a generated state (tools/stategen)
# in each format, and DuckDB's COPY of the same state files (the documented
# glob) to Parquet (zstd) and CSV in the same run, and prints each export's
# time, peak RSS and its ratio to DuckDB's copy of that kind (no targets:
# DuckDB copies rows as they are, export also sorts, filters and renders
# hashes, times and lists).
#
#   scripts/bench-export.sh                    # a 4M-hash state
#   SIZE=1M scripts/bench-export.sh
#   CASES="state:parquet catalog:csv" scripts/bench-export.sh
#   INFOHASH_BIN=path scripts/bench-export.sh  # another infohash binary (A/B)
#
# The state is generated once and cached in $BENCH_DIR (default
# bench-data/state-SIZE, shared with bench-schedule.sh). Linux only: GNU
# time (lib.sh's timed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

SIZE=${SIZE:-4M}
BENCH_DIR=${BENCH_DIR:-bench-data}
CASES=${CASES:-"state:parquet state:csv state:jsonl state:arrow state:magnet catalog:parquet catalog:csv catalog:jsonl"}
NOW=${NOW:-$(date -u +%Y-%m-%dT00:00:00Z)}
OUT=$BENCH_DIR/run
mkdir -p "$OUT"

build_tools
$GO build -o bin/stategen ./tools/stategen || die "cannot build bin/stategen"
IH=${INFOHASH_BIN:-bin/infohash} DQ=bin/duckq

state=$BENCH_DIR/state-$SIZE
if [ ! -s "$state/CURRENT" ]; then
	rm -rf "$state"
	say "generating a state of $SIZE hashes in $state ..."
	bin/stategen -data "$state" -n "$(count_of "$SIZE")" -now "$NOW" || die "stategen failed"
fi
glob="$state/state/current/prefix=*/*.parquet"
rows=$(duck_scalar "SELECT count(*) FROM read_parquet('$glob')")
echo "== export of a $SIZE-hash state ($rows rows, $(du -sm "$state/state" | cut -f1) MB of state files)"

# DuckDB's copies first, each a baseline for the exports of its kind.
duck() { # NAME FORMAT-OPTIONS
	rm -f "$OUT/duckdb.$1"
	warm $glob
	timed "duckdb-$1" "$DQ" --threads 2 "COPY (SELECT * FROM read_parquet('$glob')) TO '$OUT/duckdb.$1' ($2)"
	printf '  %-26s %7.2f s  peak RSS %5d MB\n' "DuckDB COPY to $1" "$TIMED_S" "$TIMED_MB"
}
duck parquet "FORMAT parquet, COMPRESSION zstd"
pq_s=$TIMED_S
duck csv "FORMAT csv, HEADER"
csv_s=$TIMED_S

for c in $CASES; do
	table=${c%%:*} format=${c#*:}
	out=$OUT/export.$table.$format
	rm -f "$out"
	warm $glob
	timed "export-$table-$format" "$IH" export --data "$state" --table "$table" --format "$format" -o "$out"
	base=$csv_s kind=csv
	if [ "$format" = parquet ] || [ "$format" = arrow ]; then base=$pq_s kind=parquet; fi
	printf '  %-26s %7.2f s  peak RSS %5d MB  %5sx DuckDB COPY to %s\n' "export $table $format" \
		"$TIMED_S" "$TIMED_MB" "$(ratio "$TIMED_S" "$base")" "$kind"
	rm -f "$out"
done
rm -f "$OUT/duckdb.parquet" "$OUT/duckdb.csv"
