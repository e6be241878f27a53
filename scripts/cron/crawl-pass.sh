#!/usr/bin/env bash
# One unattended crawl pass: capture for a while, fold the observations in,
# plan due retries, fetch their metadata, merge the results, export.
#
#   crawl-pass.sh DATA_DIR [CAPTURE_DURATION]
#
# Environment: INFOHASH (binary, default infohash on PATH), BOOTSTRAP
# (host:port,... for capture and fetch; default: infohash's public
# routers), LIMIT (jobs per pass, default 5000), EXPORT_DIR (default
# DATA_DIR/export), NOW (RFC 3339, fixes the clock: tests and demos),
# METRICS_DIR (node_exporter textfile directory; off when unset),
# CAPTURE_ARGS / FETCH_ARGS (extra flags, e.g. "--listen 127.0.0.1:0",
# "--timeout 5s").
#
# Every step's output is a file under DATA_DIR/work/PASS/ before the next
# step reads it, so a failed step can be re-run alone and nothing is lost:
# dedup and merge are idempotent on the same input. Exit statuses:
#   0  pass complete            75 another writer holds the dataset (skipped)
#   3  pass partial (some work left for the next pass; what was done is committed)
#   1/2 a step failed (see the log); 130 interrupted
set -uo pipefail

DATA=${1:?usage: crawl-pass.sh DATA_DIR [CAPTURE_DURATION]}
DURATION=${2:-10m}
IH=${INFOHASH:-infohash}
LIMIT=${LIMIT:-5000}
EXPORT_DIR=${EXPORT_DIR:-$DATA/export}
PASS=${PASS:-$(date -u +%Y%m%dT%H%M%SZ)}
WORK=$DATA/work/$PASS
mkdir -p "$WORK" "$EXPORT_DIR"

[ -n "${NOW:-}" ] && now=(--now "$NOW") || now=()
boot=()
[ -n "${BOOTSTRAP:-}" ] && boot=(--bootstrap "$BOOTSTRAP")
metrics() { [ -n "${METRICS_DIR:-}" ] && echo "--metrics-file=$METRICS_DIR/infohash_$1.prom"; }

log() { printf '%s crawl-pass %s: %s\n' "$(date -u +%FT%TZ)" "$PASS" "$*" >&2; }
partial=0

# step NAME CMD...: run a step; decide from its exit status whether to go on.
step() {
	local name=$1; shift
	log "$name: $*"
	"$@"
	local rc=$?
	case $rc in
		0) return 0 ;;
		3) log "$name: partial (exit 3): committed what was done; going on"; partial=1; return 0 ;;
		75) log "$name: dataset locked by another writer (exit 75): skipping this pass"; exit 75 ;;
		130) log "$name: interrupted (exit 130)"; exit 130 ;;
		2) log "$name: bad input or usage (exit 2): stopping; fix and re-run"; exit 2 ;;
		*) log "$name: failed (exit $rc): stopping"; exit "$rc" ;;
	esac
}

# shellcheck disable=SC2086 # CAPTURE_ARGS and FETCH_ARGS are word lists
step capture "$IH" capture --data "$DATA" "${boot[@]}" --duration "$DURATION" ${CAPTURE_ARGS:-} \
	--stats-json "$WORK/capture.json" $(metrics capture) -o "$WORK/observations.parquet"
step dedup "$IH" dedup --data "$DATA" "${now[@]}" --lock-wait 10m \
	--stats-json "$WORK/dedup.json" $(metrics dedup) "$WORK/observations.parquet"

if "$IH" plan-retries --help >/dev/null 2>&1; then
	step plan-retries "$IH" plan-retries --data "$DATA" "${now[@]}" --limit "$LIMIT" \
		--stats-json "$WORK/plan.json" $(metrics plan_retries) -o "$WORK/jobs.parquet"
	# fetch shares capture's DHT state directory (its own files there) to
	# start warm from the nodes that answered it last pass.
	step fetch "$IH" fetch "${boot[@]}" --dht-state "$DATA/dht-state" ${FETCH_ARGS:-} --stats-json "$WORK/fetch.json" $(metrics fetch) \
		"$WORK/jobs.parquet" -o "$WORK/results.parquet"
	step merge "$IH" merge --data "$DATA" "${now[@]}" --lock-wait 10m \
		--stats-json "$WORK/merge.json" $(metrics merge) "$WORK/results.parquet"
fi

step export "$IH" export --data "$DATA" --table catalog --format parquet \
	$(metrics export) -o "$EXPORT_DIR/catalog.parquet"
"$IH" status --data "$DATA" "${now[@]}" >&2 || true

# Keep the work files of the last 10 passes for inspection.
ls -1d "$DATA"/work/*/ 2>/dev/null | head -n -10 | xargs -r rm -rf
log "done$([ $partial = 1 ] && echo ' (partial)')"
[ $partial = 1 ] && exit 3
exit 0
