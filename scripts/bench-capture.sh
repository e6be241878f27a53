#!/usr/bin/env bash
# Capture throughput benchmark (issue 3): tools/loadgen sends valid
# get_peers / announce_peer queries at RATE/s to one passive capture node
# on 127.0.0.1 that runs on one core (GOMAXPROCS=1, pinned with taskset
# when there are two CPUs), writing Parquet. Reports queries sent,
# observations recorded, the recorded rate and the loss.
#
#   scripts/bench-capture.sh                  # 50,000/s for 1,000,000 queries
#   RATE=80000 COUNT=2000000 scripts/bench-capture.sh
#
# Target: >= 50,000 queries/s recorded with <= 0.1% loss.
set -euo pipefail
RATE=${RATE:-50000}
COUNT=${COUNT:-1000000}
DIR=${BENCH_DIR:-bench-data}/capture
cd "$(dirname "$0")/.."
mkdir -p "$DIR"
go build -o "$DIR/infohash" ./cmd/infohash
go build -o "$DIR/loadgen" ./tools/loadgen/cmd/loadgen

pin_cap=() pin_gen=()
if command -v taskset >/dev/null && [ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ]; then
  pin_cap=(taskset -c 0) pin_gen=(taskset -c 1)
fi
secs=$(( COUNT / RATE + 30 ))
rm -f "$DIR/obs.parquet" "$DIR/stats.json"
GOMAXPROCS=1 "${pin_cap[@]}" "$DIR/infohash" capture --passive --bootstrap "" --dht-listen 127.0.0.1:0 \
  --duration "${secs}s" -o "$DIR/obs.parquet" --stats-json "$DIR/stats.json" 2>"$DIR/capture.log" &
cap=$!
port=""
for _ in $(seq 100); do
  port=$(grep -o 'addr=127.0.0.1:[0-9]*' "$DIR/capture.log" | head -1 | cut -d: -f2 || true)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "capture did not start:"; cat "$DIR/capture.log"; kill "$cap"; exit 1; }

"${pin_gen[@]}" "$DIR/loadgen" --target "127.0.0.1:$port" --rate "$RATE" --count "$COUNT" >"$DIR/loadgen.json"
sleep 1
kill -INT "$cap"
wait "$cap" || [ $? -eq 130 ]

python3 - "$DIR/loadgen.json" "$DIR/stats.json" <<'PY'
import json, sys
gen = json.load(open(sys.argv[1])); st = json.load(open(sys.argv[2]))
sent, rec = gen["sent"], st["observations_written"] - gen["setup_queries"]
secs = gen["elapsed_ns"] / 1e9
loss = (sent - rec) / sent if sent else 0
print(f"capture bench: sent {sent} queries in {secs:.2f}s ({gen['rate']:.0f}/s); "
      f"recorded {rec} ({rec/secs:.0f}/s); loss {100*loss:.3f}%; "
      f"malformed {st['malformed_packets']}, bad tokens {st['announce_bad_token']}")
ok = rec / secs >= 0.999 * 50000 and loss <= 0.001
print("capture bench: target >= 50,000/s with <= 0.1% loss:", "MET" if ok else "NOT MET")
PY
