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
# a cold start). And runs stopped mid-work by SIGTERM, and by SIGINT (each
# NAME-term and NAME-int; the signal sent to the traced process once it is
# at work, the scenario failed if it had ended): capture; fetch; dedup -
# fed by capture -o - (pipe-*) and by a slow writer; dedup of 12 inputs, a
# commit each. Each must exit 130 with its commit and outputs durable. And
# dedup - and merge - stopped by a second signal (kept-*, mkept-*): each
# spool kept durably.
# Linux only.
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
NET=(capture capture-stream fetch fetch-stream capture-term capture-int fetch-term fetch-int pipe-term pipe-int)
want= BOOT=
for name in "${NET[@]}"; do
	case " ${ONLY:-$name} " in *" $name "*) want=1 ;; esac
done
NETLOG=$OUT/testnet.log
# At the exit: the testnet, and the processes of a run a die left going
# (BG: strace, the traced process, a writer upstream).
TESTNET= BG=
cleanup() {
	[ -z "$BG" ] || kill -s KILL $BG 2>/dev/null || true
	[ -z "$TESTNET" ] || { kill "$TESTNET" 2>/dev/null || true; wait "$TESTNET" 2>/dev/null || true; }
}
trap cleanup EXIT
if [ -n "$want" ] && $GO build -o bin/testnet ./tools/testnet/cmd/testnet 2>"$NETLOG"; then
	bin/testnet --seed 7 --bad-peers 2 --duration 600s --truth "$OUT/truth.json" >"$OUT/testnet.out" 2>>"$NETLOG" &
	TESTNET=$!
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
# statuses it may end with (default 0). SIG (TERM or INT): an interrupted
# run (see traced).
audit() {
	local name=$1 R=$2 in=$3 least=$4 prev= w rc=0 frc=0 held
	shift 4
	local args=(-cwd "$ROOT" -mount "$MNT" "${FAX[@]}")
	for w in "$@"; do
		[ "$prev" != -o ] || args+=(-o "$w")
		prev=$w
	done
	sync # the model takes what was there before the trace as durable
	if [ -n "${SIG:-}" ]; then
		traced "$name" "$R" "$in" "$@"
		rc=$RC
	else
		strace -f -q -y -tt -s "$STRLEN" -e signal=none -o "$R/trace" -e trace="$TRACE" \
			"$IH" "$@" <"$in" >"$R/step.out" 2>"$R/step.log" || rc=$?
	fi
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

# traced NAME R IN CMD...: audit's run of a step stopped by a signal, RC
# its exit status. The step runs under strace in the background, its
# stdin IN, or a pipe from "$FEED R" (a writer upstream) when FEED is set.
# Once "$MIDWORK R" holds (polled), SIG goes to the traced process (not to
# strace), and to the pid in R/also.pid if there is one (the writer
# upstream, which Ctrl-C would reach too): each must still be running, or
# the scenario fails by name, as one whose signal came after the work
# would pass blind. With AGAIN set, SIG goes to it a second time once
# "$AGAIN R" holds. Then the step must exit 130 and "$STOPPED R" hold: its
# own account shows it stopped early, mid-work.
traced() {
	local name=$1 R=$2 in=$3 spid pid= i
	shift 3
	local st=(strace -f -q -y -tt -s "$STRLEN" -e signal=none -o "$R/trace" -e trace="$TRACE" "$IH" "$@")
	if [ -n "${FEED:-}" ]; then
		"$FEED" "$R" | "${st[@]}" >"$R/step.out" 2>"$R/step.log" &
	else
		"${st[@]}" <"$in" >"$R/step.out" 2>"$R/step.log" &
	fi
	spid=$!
	BG="$spid"
	for i in $(seq 1 1500); do
		# the traced process: the pid of the trace's first line, once
		# whole (strace forks children of its own to probe ptrace first)
		[ -n "$pid" ] || pid=$(sed -n '1{/^[0-9][0-9]* /s/ .*//p;}' "$R/trace" 2>/dev/null || true)
		[ -n "$pid" ] && "$MIDWORK" "$R" && break
		kill -0 "${pid:-$spid}" 2>/dev/null || break
		sleep 0.02
	done
	BG="$spid ${pid:-}"
	kill -0 "${pid:-$spid}" 2>/dev/null && "$MIDWORK" "$R" ||
		die "$name: the run ended (or 30 s passed) before it was mid-work ($MIDWORK), so before its SIG$SIG; see $R/step.log"
	kill -s "$SIG" "$pid" 2>/dev/null || die "$name: the run ended before its SIG$SIG; see $R/step.log"
	if [ -s "$R/also.pid" ]; then
		BG="$BG $(cat "$R/also.pid")"
		kill -s "$SIG" "$(cat "$R/also.pid")" 2>/dev/null || die "$name: the writer upstream ended before its SIG$SIG; see $R"
	fi
	if [ -n "${AGAIN:-}" ]; then # a second signal, once "$AGAIN R" holds
		for i in $(seq 1 1500); do
			"$AGAIN" "$R" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.02
		done
		"$AGAIN" "$R" && kill -s "$SIG" "$pid" 2>/dev/null ||
			die "$name: the run ended (or 30 s passed) before its second SIG$SIG ($AGAIN); see $R/step.log"
	fi
	RC=0
	wait "$spid" || RC=$?
	BG=
	[ "$RC" = 130 ] || die "$name: the run exits $RC, not 130 (interrupted): the SIG$SIG did not stop it mid-work; see $R/step.log"
	"$STOPPED" "$R" || die "$name: exits 130, but its account of the stop ($STOPPED) does not show it stopped mid-work; see $R/step.log"
}

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

# Runs stopped mid-work by SIGTERM, and by SIGINT (NAME-term, NAME-int;
# see traced): each must exit 130 with what it did committed, durably
# (exit 130 says so, as 0 does), and its outputs durable.
stopped() { # NAME: its -term and -int runs chosen, as "NAME-term NAME-int"
	local v out=
	for v in term int; do
		if chosen "$1-$v"; then out="$out $1-$v"; fi
	done
	echo "$out"
}
sig_of() { case $1 in *-term) echo TERM ;; *-int) echo INT ;; esac; } # the signal of run NAME
# mid-work and stop conditions (R: the run's folder)
spooling() { # a stream's spool in D/inbox/ holds some of it
	local f
	for f in "$1"/D/inbox/.tmp-part-* "$1"/D/inbox/part-*; do [ -s "$f" ] && return 0; done
	return 1
}
slow_fed() { [ ! -e "$1/fed" ] && spooling "$1"; } # and the writer is not done
stream_applied() { grep -q 'interrupted; what the stream sent was applied (snapshot [0-9]' "$1/step.log"; }
batch_committed() { grep -q 'dedup: committed a batch' "$1/step.log"; }
batches_cut() { grep -q 'interrupted after [1-9][0-9]* commits\{0,1\} (snapshot [0-9]*); re-run to apply the rest' "$1/step.log"; }

# slow-*: dedup - fed by a slow writer (400 hashes, 40 every 50 ms): the
# signal comes once the spool holds some; the writer ends within the
# stream's grace (10 s) and all it sent is applied and committed.
feed_slow() {
	local i
	for i in $(seq 0 9); do
		sed -n "$((i * 40 + 1)),$((i * 40 + 40))p" "$P/slow.txt"
		sleep 0.05
	done
	: >"$1/fed"
}
# batches-*: dedup of 12 lists of 300 new hashes, --batch-hashes 300: a
# commit per list; the signal comes after the first, and the run stops
# with the lists committed so far.
for name in $(stopped slow) $(stopped batches); do
	R=$OUT/runs/$name
	rm -rf "$R" && mkdir -p "$R" && cp -R "$P/ds0" "$R/D"
	FAX=(-data "$R/D" -before "$R/D=$P/ds0")
	case $name in
	slow-*)
		[ -s "$P/slow.txt" ] || hashes 10 400 0 >"$P/slow.txt"
		FEED=feed_slow MIDWORK=slow_fed STOPPED=stream_applied SIG=$(sig_of "$name") OKRC=130 \
			audit "$name" "$R" /dev/null 3 dedup --data "$R/D" --now "$T0B" -
		;;
	batches-*)
		lists=()
		for i in $(seq 1 12); do
			[ -s "$P/batch-$i.txt" ] || hashes $((100 + i)) 300 0 >"$P/batch-$i.txt"
			lists+=("$P/batch-$i.txt")
		done
		MIDWORK=batch_committed STOPPED=batches_cut SIG=$(sig_of "$name") OKRC=130 \
			audit "$name" "$R" /dev/null 3 dedup --data "$R/D" --now "$T0B" --batch-hashes 300 "${lists[@]}"
		;;
	esac
done

# kept-*: dedup - fed 200 hashes by a writer that then stalls (the pipe
# held open), stopped by a second signal during the grace: nothing is
# committed, and the spool it says it keeps in D/inbox/ (under its
# temporary name, for the next run to set aside) must be durable.
feed_held() {
	cat "$P/held.txt"
	: >"$1/fed"
	for _ in $(seq 1 600); do [ ! -e "$1/over" ] || break; sleep 0.1; done
}
held_fed() { [ -e "$1/fed" ] && spooling "$1"; }
in_grace() { grep -q 'interrupt again to stop now' "$1/step.log"; }
spool_kept() { grep -q 'interrupted; nothing committed (what stdin had sent is kept in ' "$1/step.log"; }
for name in $(stopped kept); do
	R=$OUT/runs/$name
	rm -rf "$R" && mkdir -p "$R" && cp -R "$P/ds0" "$R/D"
	FAX=(-data "$R/D" -before "$R/D=$P/ds0")
	[ -s "$P/held.txt" ] || hashes 11 200 0 >"$P/held.txt"
	FEED=feed_held MIDWORK=held_fed AGAIN=in_grace STOPPED=spool_kept SIG=$(sig_of "$name") OKRC=130 \
		audit "$name" "$R" /dev/null 3 dedup --data "$R/D" --now "$T0B" -
	: >"$R/over"
done
# mkept-*: the same for merge - (fed the first 4 KiB of a Parquet results
# file), whose spool is in D/inbox/merge/: a Parquet stream cut short
# cannot be read, so merge says it keeps the bytes under a .tmp-* name for
# the next run to set aside as bad (they must still be durable).
feed_held_results() {
	head -c 4096 "$P/splice.parquet"
	: >"$1/fed"
	for _ in $(seq 1 600); do [ ! -e "$1/over" ] || break; sleep 0.1; done
}
merge_fed() {
	local f
	[ -e "$1/fed" ] || return 1
	for f in "$1"/D/inbox/merge/.tmp-part-*; do [ -s "$f" ] && return 0; done
	return 1
}
merge_kept() { grep -q 'merge: interrupted; nothing committed (stdin is a Parquet file, cut short by the stop: what it had sent is kept in ' "$1/step.log"; }
for name in $(stopped mkept); do
	R=$OUT/runs/$name
	rm -rf "$R" && mkdir -p "$R" && cp -R "$P/splice" "$R/D"
	FAX=(-data "$R/D" -before "$R/D=$P/splice")
	FEED=feed_held_results MIDWORK=merge_fed AGAIN=in_grace STOPPED=merge_kept SIG=$(sig_of "$name") OKRC=130 \
		audit "$name" "$R" /dev/null 3 merge --data "$R/D" --now "$T1B" -
	: >"$R/over"
done

# capture 4 s from the testnet (its --dht-state new, folder and all: a
# first run's), then dedup of what it captured and plan-retries (not
# traced), and fetch of those jobs from the testnet. A DHT state file is a
# cache (a missing one is a cold start), checked as one (-cache): synced
# before its rename into a folder durably there (a new one's parent
# synced); --stats-json and --metrics-file are outputs too. The -stream
# ones run as crawl-pass.sh does, -o - > FILE (written in place: durable
# at the exit), on the state the first left (a warm start). The others
# need capture's output: it runs too. fetch may end partial (exit 3: jobs
# its --deadline cut), which commits as 0 does. Then the runs stopped by a
# signal (see traced):
#   capture-*  capture -o - > FILE as crawl-pass.sh runs it, --duration
#              60s, a new --dht-state, signalled once its first batch is
#              out (FILE not empty)
#   fetch-*    fetch -o - > FILE of fetch's jobs, --debug (a line per
#              attempt), signalled at the first attempt's line: the jobs
#              that wait out --timeout are still at work (--dht-state: a
#              copy of the one fetch left, if it ran: a warm start, 2 s
#              sooner)
#   pipe-*     capture -o - | dedup --data D - (capture not traced), both
#              signalled, as Ctrl-C does, once the spool holds some: capture
#              flushes and ends, dedup applies it all and commits
streamed() { [ -s "$1/step.out" ]; }
capture_cut() { grep -q 'stop=interrupted' "$1/step.log" && grep -q 'interrupted; [1-9][0-9]* observations \(committed\|written\) to' "$1/step.log"; }
attempted() { grep -q 'msg="fetch: attempt"' "$1/step.log"; }
fetch_cut() { grep -q 'fetch: interrupted: [0-9]* jobs\{0,1\} attempted, [1-9][0-9]* jobs\{0,1\} unfinished' "$1/step.log"; } # some cut off
feed_capture() {
	local rc=0
	"$IH" "${CAP[@]}" --duration 60s -o - 2>"$1/capture.log" &
	echo $! >"$1/also.pid"
	wait $! || rc=$?
	echo $rc >"$1/capture.rc"
}
capture_fed() { [ -s "$1/also.pid" ] && spooling "$1"; }
pipe_cut() { stream_applied "$1" && [ "$(cat "$1/capture.rc")" = 130 ] && grep -q 'stop=interrupted' "$1/capture.log"; }
if [ -n "$want" ]; then
	if [ -n "${TESTNET:-}" ]; then
		for _ in $(seq 1 100); do [ -s "$OUT/testnet.out" ] || ! kill -0 $TESTNET 2>/dev/null && break; sleep 0.1; done
		BOOT=$(head -1 "$OUT/testnet.out" 2>/dev/null || true)
	fi
	CAP=(capture --bootstrap "$BOOT" --dht-listen 127.0.0.1:0 --node-ids 2)
	FET=(fetch --bootstrap "$BOOT" --dht-listen 127.0.0.1:0 --timeout 4s --deadline 15s)
	case $BOOT in
	127.0.0.1:*)
		R=$OUT/runs/capture
		rm -rf "$R" && mkdir -p "$R/out"
		FAX=(-cache "$R/state/dht-state.json" -o "$R/out/stats.json")
		audit capture "$R" /dev/null 0 "${CAP[@]}" --duration 4s --dht-state "$R/state" --stats-json "$R/out/stats.json" \
			-o "$R/out/obs.parquet"
		[ -s "$R/out/obs.parquet" ] || die "capture: no observations file; see $R/step.log"
		seen=$(json_int "$R/out/stats.json" distinct_hashes)
		if chosen capture-stream; then
			R1=$OUT/runs/capture-stream
			rm -rf "$R1" && mkdir -p "$R1"
			FAX=(-o "$R1/step.out" -cache "$R/state/dht-state.json")
			audit capture-stream "$R1" /dev/null 0 "${CAP[@]}" --duration 4s --dht-state "$R/state" -o -
		fi
		for name in $(stopped capture); do
			R1=$OUT/runs/$name
			rm -rf "$R1" && mkdir -p "$R1/out"
			FAX=(-o "$R1/step.out" -o "$R1/out/stats.json" -cache "$R1/state/dht-state.json")
			MIDWORK=streamed STOPPED=capture_cut SIG=$(sig_of "$name") OKRC=130 audit "$name" "$R1" /dev/null 0 \
				"${CAP[@]}" --duration 60s --dht-state "$R1/state" --stats-json "$R1/out/stats.json" -o -
		done
		for name in $(stopped pipe); do
			R1=$OUT/runs/$name
			rm -rf "$R1" && mkdir -p "$R1" && cp -R "$P/ds0" "$R1/D"
			FAX=(-data "$R1/D" -before "$R1/D=$P/ds0")
			FEED=feed_capture MIDWORK=capture_fed STOPPED=pipe_cut SIG=$(sig_of "$name") OKRC=130 \
				audit "$name" "$R1" /dev/null 3 dedup --data "$R1/D" -
		done
		R2=$OUT/runs/fetch
		jobs=
		for name in fetch fetch-stream $(stopped fetch); do
			if chosen "$name"; then jobs=1; fi
		done
		if [ "${seen:-0}" -eq 0 ] && [ -n "$jobs" ]; then
			echo "fsaudit: fetch, fetch-stream and the stopped fetches skipped: capture heard of no hash on the testnet (see $R/step.log)" |
				tee -a "$OUT/summary.txt"
		elif [ -n "$jobs" ]; then
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
		for name in $(stopped fetch); do
			[ "${seen:-0}" -gt 0 ] || break
			R3=$OUT/runs/$name
			rm -rf "$R3" && mkdir -p "$R3/out"
			[ ! -d "$R2/state" ] || cp -R "$R2/state" "$R3/state"
			FAX=(-o "$R3/step.out" -o "$R3/out/stats.json" -o "$R3/out/metrics.prom" -cache "$R3/state/fetch-dht.json")
			MIDWORK=attempted STOPPED=fetch_cut SIG=$(sig_of "$name") OKRC=130 audit "$name" "$R3" /dev/null 0 \
				"${FET[@]}" --debug --dht-state "$R3/state" --stats-json "$R3/out/stats.json" \
				--metrics-file "$R3/out/metrics.prom" "$R2/jobs.parquet" -o -
		done
		;;
	*)
		echo "fsaudit: the network runs (capture*, fetch*, pipe-*) skipped: the loopback testnet did not start (see $NETLOG)" |
			tee -a "$OUT/summary.txt"
		;;
	esac
fi
if [ $FOUND = 1 ]; then
	cat "$OUT/violations.txt"
	exit 1
fi
echo "fsaudit: no violations (traces in $OUT/runs/*/trace)"
