#!/usr/bin/env bash
# sim-schedule.sh: runs the real binary through many simulated passes
# (tools/schedsim: plan-retries → a synthetic fetch failing every hash with
# its own class → merge, --now moving the clock) and prints how the retry
# scheduler kept its design: wake-ups per hour (jitter), how long after
# next_retry hashes were planned, a crashed fetch's jobs and late results,
# the new share under a flood of due retries, cold hashes sighted again.
# It exits 1 if a property failed. Not part of make bench: it takes long.
#
#   scripts/sim-schedule.sh                          # 50k hashes, 60 days, a pass each 6h
#   N=50000 DAYS=60 EVERY=1h LIMIT=2000 scripts/sim-schedule.sh
#
# The passes' counts go to $OUT (default bench-data/sim-schedule.tsv).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

N=${N:-50000}
DAYS=${DAYS:-60}
EVERY=${EVERY:-6h}
LIMIT=${LIMIT:-15000}
FLOOD=${FLOOD:-10000}
SIGHT=${SIGHT:-500}
OUT=${OUT:-bench-data/sim-schedule.tsv}
mkdir -p "$(dirname "$OUT")"

if [ -z "${INFOHASH_BIN:-}" ]; then
	$GO build -o bin/infohash ./cmd/infohash || die "cannot build bin/infohash"
fi
$GO build -o bin/schedsim ./tools/schedsim || die "cannot build bin/schedsim"
exec bin/schedsim -bin "${INFOHASH_BIN:-bin/infohash}" -n "$N" -days "$DAYS" -every "$EVERY" \
	-limit "$LIMIT" -flood "$FLOOD" -sight "$SIGHT" -tsv "$OUT"
