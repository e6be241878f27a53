#!/usr/bin/env bash
# Fetch throughput benchmark (issue 4): a loopback swarm (tools/badpeers,
# a separate process) of good peers serves generated torrents of 10-30 KB
# of metadata (1-2 BEP 9 pieces); infohash fetch runs at concurrency 1000
# and verifies every info dictionary. Two modes:
#   direct  jobs carry their peer (the planner's peers column), no DHT
#   dht     jobs carry no peers: every peer is found by a get_peers lookup
#           through a 16-node loopback DHT testnet
# Reports verified metadata per second (ok results / run time, DHT
# bootstrap included) and fetch's peak RSS.
#
#   scripts/bench-fetch.sh                     # 20,000 direct, 5,000 via DHT
#   TORRENTS=50000 DHT_TORRENTS=0 scripts/bench-fetch.sh
#
# Target: >= 500 verified metadata/s with RSS < 1 GB. Linux only: GNU time
# (/usr/bin/time -f) measures the peak RSS.
set -euo pipefail
TORRENTS=${TORRENTS:-20000}
DHT_TORRENTS=${DHT_TORRENTS:-5000}
CONCURRENCY=${CONCURRENCY:-1000}
DIR=${BENCH_DIR:-bench-data}/fetch
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "bench-fetch: /usr/bin/time is missing: apt-get install -y time" >&2; exit 1; }
mkdir -p "$DIR"
go build -o "$DIR/infohash" ./cmd/infohash
go build -o "$DIR/badpeers" ./tools/badpeers/cmd/badpeers

swarm=""
cleanup() { [ -n "$swarm" ] && kill "$swarm" 2>/dev/null && wait "$swarm" 2>/dev/null; true; }
trap cleanup EXIT

# start_swarm NAME ARGS...: runs badpeers in the background until it prints
# its ready line into $DIR/NAME.line.
start_swarm() {
	local name=$1; shift
	rm -f "$DIR/$name.line" "$DIR/$name-jobs.parquet"
	"$DIR/badpeers" --jobs "$DIR/$name-jobs.parquet" --duration 30m "$@" >"$DIR/$name.line" 2>"$DIR/$name-swarm.log" &
	swarm=$!
	for _ in $(seq 1200); do
		[ -s "$DIR/$name.line" ] && return 0
		kill -0 "$swarm" 2>/dev/null || break
		sleep 0.1
	done
	echo "bench-fetch: swarm $name did not start:" >&2; cat "$DIR/$name-swarm.log" >&2; exit 1
}

# run_fetch NAME ARGS...: one timed fetch run; prints the result line.
run_fetch() {
	local name=$1; shift
	rm -f "$DIR/$name-results.parquet"
	# portability: Linux only, GNU time's -f and -o (peak RSS: %M)
	/usr/bin/time -f '%e %M' -o "$DIR/$name.time" "$DIR/infohash" fetch "$DIR/$name-jobs.parquet" \
		-o "$DIR/$name-results.parquet" --concurrency "$CONCURRENCY" --peers-per-hash 4 \
		--stats-json "$DIR/$name-stats.json" "$@" 2>"$DIR/$name-fetch.log" || {
		tail -5 "$DIR/$name-fetch.log" >&2; echo "bench-fetch: fetch $name failed" >&2; exit 1; }
	python3 - "$name" "$DIR/$name-stats.json" "$DIR/$name.time" <<'PY'
import json, sys
name, st, tf = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read().split()
ok, jobs, secs, rss = st["outcomes"].get("ok", 0), st["jobs"], st["elapsed_ms"] / 1000, int(tf[-1]) / 1024
rate = ok / secs if secs else 0
met = rate >= 500 and rss < 1024 and ok == jobs
print(f"fetch bench {name:6}: {ok}/{jobs} verified in {secs:.1f}s = {rate:.0f} verified/s, "
      f"peak RSS {rss:.0f} MB" +
      f" -> target >= 500/s, < 1 GB: {'MET' if met else 'NOT MET'}")
PY
}

if [ "$TORRENTS" -gt 0 ]; then
	start_swarm direct --torrents "$TORRENTS" --peers 4
	# The swarm's peers are on loopback: a --dht-listen there lets fetch dial them.
	run_fetch direct --no-dht --dht-listen 127.0.0.1:0
	cleanup; swarm=""
fi
if [ "$DHT_TORRENTS" -gt 0 ]; then
	start_swarm dht --dht --torrents "$DHT_TORRENTS" --peers 4
	run_fetch dht --bootstrap "$(cat "$DIR/dht.line")" --dht-listen 127.0.0.1:0 --dht-rate 0
fi
