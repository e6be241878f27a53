#!/usr/bin/env bash
# make demo: a loopback DHT testnet (good torrents, dead hashes, every kind
# of misbehaving peer), two crawl passes as cron runs them (the first with
# every step's clock 3 hours back, the second on the wall clock: past the
# first's retry waits, so its failures are due and retried; every time the
# dataset records is in the past), then a summary and the DuckDB query.
# Loopback only; stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin/infohash}
OUT=${DEMO_DIR:-demo-data}
DATA=$OUT/dataset
START=$(date +%s)
rm -rf "$OUT"
mkdir -p "$OUT"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "building the loopback testnet"
go build -o bin/testnet ./tools/testnet/cmd/testnet

say "starting the testnet on 127.0.0.1: 16 DHT nodes, 2 seeders of 12 torrents, 3 dead hashes, 6 searched-only hashes, a misbehaving peer of every kind"
bin/testnet --seed 7 --bad-peers 2 --duration 240s --truth "$OUT/truth.json" >"$OUT/testnet.out" 2>"$OUT/testnet.log" &
TESTNET=$!
trap 'kill $TESTNET 2>/dev/null || true; wait $TESTNET 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do [ -s "$OUT/testnet.out" ] && break; sleep 0.1; done
BOOT=$(head -1 "$OUT/testnet.out")
[ -n "$BOOT" ] || { echo "demo: the testnet did not start; see $OUT/testnet.log" >&2; exit 1; }
echo "bootstrap: ${BOOT%%,*},… ($(awk -F, '{ print NF }' <<<"$BOOT") nodes)" # not wc -l: macOS pads it

export INFOHASH=$BIN BOOTSTRAP=$BOOT LIMIT=500
export CAPTURE_ARGS="--dht-listen 127.0.0.1:0 --node-ids 4"
export FETCH_ARGS="--dht-listen 127.0.0.1:0 --timeout 10s --deadline 60s"

pass() { # pass NAME NOW WHY
	say "crawl pass $1: capture 12 s → dedup → plan-retries → fetch → merge → export"
	echo "  clock: $2, $3"
	set +e
	NOW=$2 PASS=$1 scripts/cron/crawl-pass.sh "$DATA" 12s 2>"$OUT/pass-$1.log"
	local rc=$?
	set -e
	# Each stage's one-line summary (fetch's is a few lines: its first and
	# its outcomes), and any stage that did not complete.
	grep -E "crawl-pass .*: [a-z-]+: (partial|failed|bad|dataset locked|[^ ]+ is in use)|done|^fetch: [0-9]+ jobs|^  outcomes: " "$OUT/pass-$1.log" | sed 's/^[^ ]* crawl-pass /  pass /' || true
	case $rc in
	0) echo "  exit status 0: the pass completed" ;;
	3) echo "  exit status 3: partial (some jobs left for the next pass; what was done is committed)" ;;
	*) echo "  exit status $rc" ;;
	esac
	[ $rc = 0 ] || [ $rc = 3 ] || { echo "demo: pass $1 failed; log in $OUT/pass-$1.log" >&2; exit 1; }
}

# Pass 1 three hours ago, by infohash's own clock arithmetic (GNU date -d
# is not on macOS or the BSDs): crawl-pass gives each step NOW plus the
# time since the pass began, so capture stamps its sightings, and fetch
# its attempts, on that clock too. Pass 2 on the wall clock, so that no
# time the demo leaves (last_seen, fetched_at, the ledger's) lies ahead.
NOW1=$("$BIN" clock --now "$(date -u +%FT%TZ)" --add=-3h)
pass 1 "$NOW1" "3 hours back, so that its failures are due in pass 2; logs show the wall clock"
NOW2=$(date -u +%FT%TZ)
pass 2 "$NOW2" "the wall clock: it retries pass 1's failures"

say "summary"
# python3 is not on every machine Go runs on (the golang Docker images lack
# it): without it the demo leaves out its summary and check, not the rest.
if ! command -v python3 >/dev/null 2>&1; then
	echo "  no python3: the summary is left out (each step's counters are in $DATA/work/PASS/*.json)"
else
python3 - "$OUT" "$DATA" <<'PY'
import json, os, sys, glob
out, data = sys.argv[1], sys.argv[2]
truth = json.load(open(os.path.join(out, "truth.json")))
for p in sorted(glob.glob(os.path.join(data, "work", "*"))):
    print(f"pass {os.path.basename(p)}:")
    for stage in ("capture", "dedup", "plan", "fetch", "merge"):
        f = os.path.join(p, stage + ".json")
        if not os.path.exists(f):
            continue
        s = json.load(open(f))
        keep = {k: v for k, v in s.items() if isinstance(v, (int, float, dict)) and v not in (0, {}, 0.0)}
        txt = json.dumps(keep, separators=(",", ":"))
        print(f"  {stage:8s} {txt[:700]}{'…' if len(txt) > 700 else ''}")
announced = {e["info_hash"] for e in truth.get("announced", [])}
extra = truth.get("extra", {})
# the testnet's controls: a well-behaved peer among the bad ones, and one that serves only over MSE
good = len(extra.get("badpeer_good", [])) + len(extra.get("badpeer_require_mse", []))
print(f"ground truth: {len(announced)} seeded torrents, {len(truth.get('dead', []))} dead, "
      f"{len(truth.get('searched', []))} searched-only, {sum(len(v) for v in extra.values())} hashes behind "
      f"misbehaving peers ({good} of them served well): {len(announced) + good} can be fetched, the rest fail")
PY
fi
# Pass 2 ran on one clock that started at NOW2 (each step at NOW2 plus the
# time since the pass began), so retry waves are shown from NOW2.
"$BIN" status --data "$DATA" --now "$NOW2" --verify # every file checked against the manifest too
"$BIN" export --data "$DATA" --table catalog --format csv -o "$OUT/catalog.csv" ||
	echo "demo: the catalog export failed (above)" >&2
# What the passes recorded happened by now: no sighting, attempt or fetch
# in catalog.csv lies after the wall clock (next_retry alone may).
[ ! -f "$OUT/catalog.csv" ] || ! command -v python3 >/dev/null 2>&1 || python3 - "$OUT/catalog.csv" <<'PY'
import csv, sys
from datetime import datetime, timezone
now = datetime.now(timezone.utc)
late = [f"{r['info_hash']} {col} {r[col]}" for r in csv.DictReader(open(sys.argv[1]))
        for col in ("first_seen", "last_seen", "last_attempt", "fetched_at")
        if r[col] and datetime.fromisoformat(r[col].replace("Z", "+00:00")) > now]
if late:
    sys.exit(f"demo: {len(late)} times in {sys.argv[1]} lie after the wall clock ({now:%FT%TZ}), such as {late[0]}")
PY

Q_STATE="SELECT metadata_status, last_failure, count(*) AS hashes, sum(seen_count) AS sightings
  FROM read_parquet('$DATA/state/current/prefix=*/*.parquet', hive_partitioning=true, hive_types={'prefix': VARCHAR})
  GROUP BY ALL ORDER BY hashes DESC"
Q_TORRENTS="SELECT name, total_size, file_count, fetched_at, served_by
  FROM read_parquet('$DATA/torrents/current/prefix=*/*.parquet', hive_partitioning=true, hive_types={'prefix': VARCHAR})
  ORDER BY name LIMIT 5"
# DuckDB itself reads what the pipeline wrote: bin/duckq is a small DuckDB
# command line (tools/duckcheck, the module the DuckDB tests use).
say "reading the dataset back with DuckDB (bin/duckq)"
if (cd tools/duckcheck && go build -o ../../bin/duckq ./cmd/duckq) 2>"$OUT/duckq-build.log"; then
	bin/duckq -timings=false "$Q_STATE;"
	bin/duckq -timings=false "$Q_TORRENTS;"
else
	echo "  bin/duckq could not be built (log: $OUT/duckq-build.log); run the queries below with any DuckDB"
fi

cat <<MSG

Done in $(( $(date +%s) - START )) s. The dataset is in $DATA; exports in $DATA/export/ and $OUT/catalog.csv.
Query it with DuckDB (bin/duckq "SQL", or the duckdb CLI), through the globs:

  $Q_STATE;

  $Q_TORRENTS;
MSG
