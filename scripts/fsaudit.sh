#!/usr/bin/env bash
# make fsaudit: a durability audit of the dataset-writing steps. make
# killsweep kills each step at ~900 instants and checks the re-run, but a
# kill cannot show a missing fsync: the page cache outlives the process (a
# power cut does not). So each of killsweep's offline scenarios
# (scripts/scenarios.sh: the same prepared datasets and commands) is run
# once under strace(1), and tools/fsaudit replays the trace through its
# durability model (its package comment states it): at every instant a
# power cut must leave a durable CURRENT that names a durable manifest
# whose files are all durable; what a rename onto CURRENT publishes, and
# an -o FILE renamed into place, must be durable before the rename; a step
# that exits 0 has its commit (and -o FILE) durable; and no write or
# removal touches what the durable CURRENT needs. Also dedup - (a spool in
# inbox/, removed only once its commit is durable), and capture and fetch
# from a loopback testnet (tools/testnet; skipped, one line, where it does
# not start): their -o FILE (and -o - > FILE), and their DHT state file, a
# cache synced before its rename into a folder durably there (its loss is
# a cold start). Linux only.
# Prints a summary per scenario and each violation (trace:line: call path:
# what and why), exit 1 if any. FSAUDIT_DIR (fsaudit-data) holds the
# traces; FSAUDIT_ONLY="a b" runs some scenarios (the network ones run
# capture too).
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
. scripts/lib.sh

OUT=${FSAUDIT_DIR:-fsaudit-data}
ONLY=${FSAUDIT_ONLY:-}
case ${BASH_VERSION:-} in '' | [0-3].*) die "needs bash 4 or newer (associative arrays)" ;; esac
command -v strace >/dev/null || die "needs strace(1): apt-get install -y strace"
strace -f -qq -o /dev/null true 2>/dev/null || die "strace(1) cannot trace here (ptrace not allowed?)"
# -s: the content of CURRENT and of each manifest comes from its write.
STRLEN=${FSAUDIT_STRLEN:-1048576}

rm -rf "$OUT"
mkdir -p "$OUT/prep" "$OUT/runs"
OUT=$(cd "$OUT" && pwd -P)
P=$OUT/prep
say "fsaudit: building bin/infohash, bin/stategen, bin/fsaudit"
${MAKE:-make} -s build >/dev/null || die "cannot build bin/infohash (make build)"
$GO build -o bin/stategen ./tools/stategen || die "cannot build bin/stategen"
$GO build -o bin/fsaudit ./tools/fsaudit/cmd/fsaudit || die "cannot build bin/fsaudit"
IH=$ROOT/bin/infohash SG=$ROOT/bin/stategen FA=$ROOT/bin/fsaudit
TRACE=$("$FA" -calls) # what changes files, entries or descriptors, and syncs
# The network steps need a loopback testnet (tools/testnet, as make demo
# runs it), started now so that its nodes have met by the time they run.
NET=(capture capture-stream fetch fetch-stream)
want= BOOT=
for name in "${NET[@]}"; do
	case " ${ONLY:-$name} " in *" $name "*) want=1 ;; esac
done
NETLOG=$OUT/testnet.log
if [ -n "$want" ] && $GO build -o bin/testnet ./tools/testnet/cmd/testnet 2>"$NETLOG"; then
	bin/testnet --seed 7 --bad-peers 2 --duration 300s --truth "$OUT/truth.json" >"$OUT/testnet.out" 2>>"$NETLOG" &
	TESTNET=$!
	trap 'kill $TESTNET 2>/dev/null || true; wait $TESTNET 2>/dev/null || true' EXIT
fi
. scripts/scenarios.sh
prepare_scenarios fsaudit
# A syncfs covers one file system: the runs' (POSIX df -P: column 6).
MNT=$(df -P "$OUT" | awk 'NR == 2 { print $6 }')

FOUND=0
# audit NAME R IN LEAST CMD...: traces the step CMD (stdin from IN) in run
# folder R and audits its trace, with ${FAX[@]} added to fsaudit's
# arguments and each -o FILE of CMD an output; a row of the summary. LEAST:
# the files of a durable commit a clean pass must have checked (0: the
# step commits to no dataset; it must sync something). OKRC: the exit
# statuses it may end with (default 0).
audit() {
	local name=$1 R=$2 in=$3 least=$4 prev= w rc=0 frc=0 held
	shift 4
	local args=(-cwd "$ROOT" -mount "$MNT" "${FAX[@]}")
	for w in "$@"; do
		[ "$prev" != -o ] || args+=(-o "$w")
		prev=$w
	done
	sync # the model takes what was there before the trace as durable
	strace -f -q -y -tt -s "$STRLEN" -e signal=none -o "$R/trace" -e trace="$TRACE" \
		"$IH" "$@" <"$in" >"$R/step.out" 2>"$R/step.log" || rc=$?
	case " ${OKRC:-0} " in *" $rc "*) ;; *) die "$name: the traced run exits $rc; see $R/step.log" ;; esac
	"$FA" "${args[@]}" "$R/trace" >"$R/violations.txt" 2>"$R/fsaudit.log" || frc=$?
	[ $frc -le 1 ] || die "$name: fsaudit failed: $(cat "$R/fsaudit.log")"
	# "fsaudit: TRACE: L lines, C calls, N commits, S syncs, exit X, H files
	# durably held: V violations" (held: the files of the last durable
	# commit, all checked)
	sed -n 's/.*: \([0-9]*\) lines, \([0-9]*\) calls, \([0-9]*\) commits, \([0-9]*\) syncs, exit \(-*[0-9]*\), \([0-9]*\) files durably held: \([0-9]*\) violations$/\1 \2 \3 \4 \5 \6 \7/p' \
		"$R/fsaudit.log" | while read -r l c n s x h v; do
		printf '%-14s %6d %6d %7d %5d %4d %4d %10d\n' "$name" "$l" "$c" "$n" "$s" "$x" "$h" "$v"
	done | tee -a "$OUT/summary.txt"
	# A pass that checked no durable commit (CURRENT, a manifest, a file at
	# least) saw nothing: a trace or model gone wrong, not a clean step.
	held=$(sed -n 's/.*, \([0-9]*\) files durably held: 0 violations$/\1/p' "$R/fsaudit.log")
	[ -z "$held" ] || [ "$held" -ge "$least" ] || die "$name: the audit checked no durable commit ($held files); see $R/fsaudit.log"
	# One with no dataset syncs its outputs at least.
	[ "$least" -gt 0 ] || grep -q ', [1-9][0-9]* syncs,' "$R/fsaudit.log" ||
		die "$name: the audit saw no sync; see $R/fsaudit.log"
	if [ -s "$R/violations.txt" ]; then
		FOUND=1
		cat "$R/violations.txt" >>"$OUT/violations.txt"
	fi
}
chosen() { case " ${ONLY:-$1} " in *" $1 "*) ;; *) return 1 ;; esac; }

echo "scenario       lines  calls commits syncs exit held violations" | tee "$OUT/summary.txt"
for name in "${SCEN[@]}"; do
	chosen "$name" || continue
	R=$OUT/runs/$name
	fresh "$name" "$R"
	read -ra cmd <<<"$(cmdline "$name" "$R")"
	FAX=(-data "$R/D")
	[ "${PREPOF[$name]}" = - ] || FAX+=(-before "$R/D=$P/${PREPOF[$name]}")
	audit "$name" "$R" /dev/null 3 "${cmd[@]}"
done

# dedup-stdin: a hash list on stdin, spooled to D/inbox/ and applied to
# ds0; the spool may go only once the commit that records it is durable.
if chosen dedup-stdin; then
	R=$OUT/runs/dedup-stdin
	rm -rf "$R" && mkdir -p "$R" && cp -R "$P/ds0" "$R/D"
	FAX=(-data "$R/D" -before "$R/D=$P/ds0")
	audit dedup-stdin "$R" "$P/list-b.txt" 3 dedup --data "$R/D" --now "$T0B" -
fi

# capture 4 s from the testnet (its --dht-state new, folder and all: a
# first run's), then dedup of what it captured and plan-retries (not
# traced), and fetch of those jobs from the testnet. A DHT state file is a
# cache (a missing one is a cold start), checked as one (-cache): synced
# before its rename, its new folder's entry synced before too; --stats-json and --metrics-file are outputs too. The
# -stream ones run as crawl-pass.sh does, -o - > FILE (written in place:
# durable at the exit), on the state the first left (a warm start). The
# others need capture's output: it runs too. fetch may end partial (exit
# 3: jobs its --deadline cut), which commits as 0 does.
if [ -n "$want" ]; then
	if [ -n "${TESTNET:-}" ]; then
		for _ in $(seq 1 100); do [ -s "$OUT/testnet.out" ] || ! kill -0 $TESTNET 2>/dev/null && break; sleep 0.1; done
		BOOT=$(head -1 "$OUT/testnet.out" 2>/dev/null || true)
	fi
	CAP=(capture --bootstrap "$BOOT" --dht-listen 127.0.0.1:0 --node-ids 2 --duration 4s)
	FET=(fetch --bootstrap "$BOOT" --dht-listen 127.0.0.1:0 --timeout 4s --deadline 15s)
	case $BOOT in
	127.0.0.1:*)
		R=$OUT/runs/capture
		rm -rf "$R" && mkdir -p "$R/out"
		FAX=(-cache "$R/state/dht-state.json" -o "$R/out/stats.json")
		audit capture "$R" /dev/null 0 "${CAP[@]}" --dht-state "$R/state" --stats-json "$R/out/stats.json" \
			-o "$R/out/obs.parquet"
		[ -s "$R/out/obs.parquet" ] || die "capture: no observations file; see $R/step.log"
		seen=$(json_int "$R/out/stats.json" distinct_hashes)
		if chosen capture-stream; then
			R1=$OUT/runs/capture-stream
			rm -rf "$R1" && mkdir -p "$R1"
			FAX=(-o "$R1/step.out" -cache "$R/state/dht-state.json")
			audit capture-stream "$R1" /dev/null 0 "${CAP[@]}" --dht-state "$R/state" -o -
		fi
		R2=$OUT/runs/fetch
		if [ "${seen:-0}" -eq 0 ] && { chosen fetch || chosen fetch-stream; }; then
			echo "fsaudit: fetch and fetch-stream skipped: capture heard of no hash on the testnet (see $R/step.log)" |
				tee -a "$OUT/summary.txt"
		elif chosen fetch || chosen fetch-stream; then
			rm -rf "$R2" && mkdir -p "$R2/out"
			ih dedup --data "$R2/D" "$R/out/obs.parquet"
			ih plan-retries --data "$R2/D" --limit 30 -o "$R2/jobs.parquet"
		fi
		if [ "${seen:-0}" -gt 0 ] && chosen fetch; then
			FAX=(-cache "$R2/state/fetch-dht.json" -o "$R2/out/stats.json" -o "$R2/out/metrics.prom")
			OKRC="0 3" audit fetch "$R2" /dev/null 0 "${FET[@]}" --dht-state "$R2/state" \
				--stats-json "$R2/out/stats.json" --metrics-file "$R2/out/metrics.prom" "$R2/jobs.parquet" \
				-o "$R2/out/res.parquet"
		fi
		if [ "${seen:-0}" -gt 0 ] && chosen fetch-stream; then
			R3=$OUT/runs/fetch-stream
			rm -rf "$R3" && mkdir -p "$R3"
			FAX=(-o "$R3/step.out" -cache "$R2/state/fetch-dht.json")
			OKRC="0 3" audit fetch-stream "$R3" /dev/null 0 "${FET[@]}" --dht-state "$R2/state" "$R2/jobs.parquet" -o -
		fi
		;;
	*)
		echo "fsaudit: capture, fetch and their -stream runs skipped: the loopback testnet did not start (see $NETLOG)" |
			tee -a "$OUT/summary.txt"
		;;
	esac
fi
if [ $FOUND = 1 ]; then
	cat "$OUT/violations.txt"
	exit 1
fi
echo "fsaudit: no violations (traces in $OUT/runs/*/trace)"
